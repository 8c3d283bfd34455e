import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { AppError, type FieldError } from '../errors.js';
import { unknownFieldMessage } from '../schemas/messages.js';

/** What a route without a query schema accepts: no parameter at all. */
export const NO_QUERY = z.strictObject({});

type Where = 'body' | 'query' | 'params';

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

const noBody = (): AppError =>
  new AppError('invalid_request', 'this route takes no body', [{ path: 'body', message: 'must be empty' }]);

/** A POST that takes no body refuses one with content (`{}` is no content), rather than ignoring it. */
export function refuseBody(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw noBody();
}

/** Middleware of GET and DELETE routes: a body of any kind or size is refused without reading it. */
export function refuseAnyBody(req: Request, _res: Response, next: NextFunction): void {
  const length = req.get('content-length');
  const hasBody = (length !== undefined && length !== '0') || req.get('transfer-encoding') !== undefined;
  next(hasBody ? noBody() : undefined);
}
