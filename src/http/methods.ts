import type { Express, Request, Response } from 'express';
import { AppError } from '../errors.js';
import type { AnyRoute } from './route.js';

/** A 405 that tells the client which methods the path has (RFC 9110 §15.5.6: Allow is required). */
export class MethodNotAllowedError extends AppError {
  constructor(
    method: string,
    path: string,
    readonly allow: readonly string[],
  ) {
    super('method_not_allowed', `${path} does not answer ${method}; it answers ${allow.join(', ')}`);
  }
}

const expressPath = (openApiPath: string): string => openApiPath.replace(/\{(\w+)\}/g, ':$1');

/** The methods of each path of the table, as an Allow header lists them (HEAD with GET, as express answers it). */
export function allowedMethods(routes: readonly AnyRoute[]): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const r of routes) {
    const methods = byPath.get(r.path) ?? [];
    methods.push(r.method.toUpperCase());
    if (r.method === 'get') methods.push('HEAD');
    byPath.set(r.path, methods);
  }
  return byPath;
}

/**
 * Registered after every route: a known path reached with another method answers 405 with Allow
 * instead of the 404 of an unknown path; OPTIONS answers the same list with 204.
 */
export function answerOtherMethods(app: Express, routes: readonly AnyRoute[]): void {
  for (const [path, allow] of allowedMethods(routes)) {
    app.all(expressPath(path), (req: Request, res: Response) => {
      res.locals.route ??= path;
      res.setHeader('Allow', allow.join(', '));
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
      throw new MethodNotAllowedError(req.method, path, allow);
    });
  }
}
