import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Actor, Core } from '../domain/core.js';
import type { Scope } from '../vocabulary.js';

/**
 * One table of routes drives both the express handlers and the OpenAPI document, so the schemas
 * that validate a request are the ones the document shows.
 */
export type Access =
  /** no credentials at all */
  | 'public'
  /** the X-Setup-Token header */
  | 'setup'
  /** any valid key */
  | 'any'
  | Scope;

export interface Reply {
  status: number;
  body?: unknown;
  /** The handler wrote and ended the response itself (a stream). */
  streamed?: true;
}

export interface HandlerContext<P, Q, B> {
  core: Core;
  /** Present on every route but 'public' and 'setup'. */
  actor: Actor;
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style: /v1/memories/{id} */
  path: string;
  /** The OpenAPI operationId: a verb and a noun in camelCase (storeMemory), unique in the table. */
  operationId: string;
  summary: string;
  tag: string;
  access: Access;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /**
   * A body the handler reads as a stream from `req` (an import), in one of these media types: the
   * JSON parser and its size limit are not applied, and the handler owns both.
   */
  rawBody?: { mediaTypes: string[]; description: string };
  /** The largest JSON body the route takes, when not BODY_LIMIT_BYTES (a batch of items). */
  bodyLimitBytes?: (config: Config) => number;
  /** `mediaType`: a success body that is not JSON (NDJSON). */
  responses: Record<number, { description: string; schema?: z.ZodType; mediaType?: string }>;
  handle: (ctx: HandlerContext<P, Q, B>) => Promise<Reply>;
}

/** Identity function that lets TypeScript infer P, Q and B from the schemas. */
export function route<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> {
  return spec;
}

// Routes of different shapes live in one list; each was type-checked where it was defined.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any>;
