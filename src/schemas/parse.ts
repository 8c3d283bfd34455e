import type { z } from 'zod';
import { AppError, type FieldError } from '../errors.js';
import { unknownFieldMessage } from './messages.js';

/**
 * Wire input checked against its schema, with every failure as one field error: for the HTTP routes
 * (src/http/validate.ts) and for what is checked later than the request, each item of a batch job.
 */

export type Where = 'body' | 'query' | 'params';

const joinPath = (parent: readonly PropertyKey[], key?: string): string =>
  [...parent, ...(key === undefined ? [] : [key])].map(String).join('.');

/** One field error per unknown field, so that each is named by its own path. */
function fieldErrors(issue: z.core.$ZodIssue, where: Where, known: (path: readonly PropertyKey[]) => string[]) {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: joinPath(issue.path, key),
      message: unknownFieldMessage(key, known(issue.path)),
    }));
  }
  return [{ path: issue.path.length > 0 ? joinPath(issue.path) : where, message: issue.message }];
}

/** The field names of the object schema at a path, for "did you mean" (top level and nested objects). */
function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: unknown = schema;
  for (const step of path) {
    const def = (current as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (def?.type === 'object') current = (def.shape as Record<string, unknown>)[String(step)];
    else if (def?.type === 'array') current = def.element;
    else return [];
    // Optional, nullable and default wrappers hold the schema that has the fields.
    for (let d = (current as { _zod?: { def?: Record<string, unknown> } })._zod?.def; d?.innerType;) {
      current = d.innerType;
      d = (current as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    }
  }
  const def = (current as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
  return def?.type === 'object' ? Object.keys(def.shape as object) : [];
}

/** Parses input with a zod schema; failures become one 400 with every field's message. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, where: Where): T {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.flatMap((issue) =>
    fieldErrors(issue, where, (path) => fieldsAt(schema, path)),
  );
  const first = errors[0];
  const detail = first ? describe(first, where) : `the ${where} is not valid`;
  throw new AppError('invalid_request', detail, errors);
}

/** "limit must be …" for a field; "the body must be …" for the whole input. */
function describe(error: FieldError, where: Where): string {
  return error.path === where ? `the ${where} ${error.message}` : `${error.path} ${error.message}`;
}
