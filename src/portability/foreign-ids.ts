import { createHash } from 'node:crypto';

/**
 * A UUID (version 5 layout, SHA-1 of a namespace and a name) for a record of another service that
 * has no UUID of its own: the same name always gives the same id, which is what makes importing the
 * same file twice change nothing.
 */
export function nameId(namespace: string, ...parts: string[]): string {
  const hash = createHash('sha1').update(`agent-memory:${namespace}`).update('\u0000');
  for (const part of parts) hash.update(part).update('\u0000');
  const b = hash.digest().subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
