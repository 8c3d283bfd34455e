import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { authenticate, keyPrefixOf } from '../domain/tenancy/keys.js';
import type { Actor, Core } from '../domain/core.js';
import { AppError } from '../errors.js';
import type { Credential } from './auth-throttle.js';
import type { Scope } from '../vocabulary.js';

function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The API key a request presents, as the throttle counts its failures: by the key's prefix. */
export function keyCredential(req: Request): Credential {
  const token = bearerToken(req) ?? undefined;
  return { family: token === undefined ? null : keyPrefixOf(token), secret: token };
}

export const setupCredential = (req: Request): Credential => ({ family: 'setup', secret: req.get('x-setup-token') });

/** Resolves the caller for a route of the given access, or throws 401/403. */
export async function authorize(core: Core, req: Request, access: 'any' | Scope): Promise<Actor> {
  const token = bearerToken(req);
  if (!token) throw new AppError('unauthorized', 'send an API key as "Authorization: Bearer <key>"');
  const actor = await authenticate(core, token);
  if (!actor) throw new AppError('unauthorized', 'the API key is unknown or revoked');
  if (access !== 'any' && !actor.scopes.has(access)) {
    throw new AppError('insufficient_scope', `this route needs a key with the "${access}" scope`);
  }
  return actor;
}

/** Constant-time: both sides are hashed to equal length before comparing. */
export function setupTokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

export function checkSetupToken(core: Core, req: Request): void {
  const expected = core.config.setupToken;
  if (!expected) {
    throw new AppError('setup_disabled', 'setup is disabled: start the server with SETUP_TOKEN set to enable it');
  }
  if (!setupTokenMatches(expected, req.get('x-setup-token'))) {
    throw new AppError('unauthorized', 'missing or wrong X-Setup-Token header');
  }
}
