import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { AppError } from '../errors.js';

/** What a route without a query schema accepts: no parameter at all. */
export const NO_QUERY = z.strictObject({});

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
