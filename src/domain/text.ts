import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** Trimmed, whitespace collapsed: the identity of content for canon and exact duplicates. */
export function contentKey(content: string): string {
  return content.trim().replace(/\s+/gu, ' ');
}
