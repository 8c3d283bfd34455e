import type { z } from 'zod';
import { AppError } from '../errors.js';

/** Parses input with a zod schema; failures become one 400 with every field's message. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, where: 'body' | 'query' | 'params'): T {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.join('.') : where,
    message: issue.message,
  }));
  const first = errors[0];
  const detail = first ? `${first.path} ${first.message}`.trim() : `${where} is not valid`;
  throw new AppError('invalid_request', detail, errors);
}
