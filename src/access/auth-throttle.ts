import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { AppError } from '../errors.js';
import { clientAddress } from './client-address.js';
import { RateLimitedError } from './rate-limit.js';

const WINDOW_MS = 60_000;
/**
 * Counters kept at most: past it the oldest windows go first, so a flood of addresses or prefixes
 * costs bounded memory. Evicting an attacker's own counter takes this many other failures first.
 */
const MAX_COUNTERS = 100_000;
/** Digests of credentials this process accepted, most recent last. */
const MAX_ACCEPTED = 10_000;

/** What one authentication presents. */
export interface Credential {
  /**
   * Which secret it tries: a key's prefix (the public part of a key, in GET /v1/keys) or `setup`;
   * null when it cannot be any key (missing or malformed), so it only counts against the address.
   */
  family: string | null;
  /** The secret itself, undefined when none was sent. Only its SHA-256 is kept. */
  secret: string | undefined;
}

const digestOf = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('base64');

interface Window {
  count: number;
  until: number;
}

/**
 * Failed authentications, in process memory, so that guessing a key's secret or the setup token is
 * slow without anyone's failures locking out a valid key (behind a proxy every client may share one
 * address):
 * - failures count per (address, family): after `perMinute` of them within a minute of the first,
 *   that family is answered 429 from that address without its secret being checked, so guesses at
 *   one key (whose prefix is not secret) or at the setup token get `perMinute` answers a minute;
 * - a credential this process has accepted before skips that refusal (only its holder can present
 *   it), and is then checked as always;
 * - failures count per address too, across families: past `perMinute`, a failure is answered 429
 *   instead of 401, which tells a client that sprays keys to slow down, while a valid key from the
 *   address is still checked and accepted.
 * Each attempt costs a SHA-256 and, for a well-formed key, one indexed lookup (src/domain/tenancy/keys.ts):
 * no slow hash, since keys carry 238 random bits. 0 turns the throttle off.
 */
export class AuthThrottle {
  private readonly counters = new Map<string, Window>();
  private readonly accepted = new Map<string, true>();

  private readonly now: () => number;
  private readonly maxCounters: number;

  constructor(
    private readonly perMinute: number,
    options: { now?: () => number; maxCounters?: number } = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.maxCounters = options.maxCounters ?? MAX_COUNTERS;
  }

  /** How many windows are tracked. */
  get tracked(): number {
    return this.counters.size;
  }

  async guard<T>(req: Request, credential: Credential, authenticate: () => T | Promise<T>): Promise<T> {
    if (this.perMinute <= 0) return authenticate();
    const address = clientAddress(req);
    const digest = credential.secret === undefined ? undefined : digestOf(credential.secret);
    const family = credential.family === null ? undefined : `${address} ${credential.family}`;
    if (family !== undefined && !(digest !== undefined && this.accepted.has(digest))) {
      this.refuseIfOver(
        family,
        'too many failed authentications with this key prefix (or setup token) from this address',
      );
    }
    let result: T;
    try {
      result = await authenticate();
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') {
        // A revoked key is no longer its holder's proof.
        if (digest !== undefined) this.accepted.delete(digest);
        if (family !== undefined) this.count(family);
        this.count(address);
        this.refuseIfOver(address, 'too many failed authentications from this address', 1);
      }
      throw error;
    }
    if (digest !== undefined) this.remember(digest);
    return result;
  }

  /** 429 once `key` has `perMinute + slack` failures in its window. */
  private refuseIfOver(key: string, reason: string, slack = 0): void {
    const entry = this.counters.get(key);
    const now = this.now();
    if (entry === undefined || entry.until <= now || entry.count < this.perMinute + slack) return;
    const retryAfter = Math.max(1, Math.ceil((entry.until - now) / 1000));
    throw new RateLimitedError(retryAfter, `${reason}; retry after ${retryAfter} s`);
  }

  private count(key: string): void {
    const now = this.now();
    const entry = this.counters.get(key);
    if (entry !== undefined && entry.until > now) {
      entry.count += 1;
      return;
    }
    // Re-inserted, so that the map's order stays the order in which windows end.
    this.counters.delete(key);
    this.counters.set(key, { count: 1, until: now + WINDOW_MS });
    this.trim(now);
  }

  // From the front only: expired windows, then the oldest while over the bound. Constant work per failure.
  private trim(now: number): void {
    for (const [key, entry] of this.counters) {
      if (entry.until > now && this.counters.size <= this.maxCounters) return;
      this.counters.delete(key);
    }
  }

  private remember(digest: string): void {
    this.accepted.delete(digest);
    this.accepted.set(digest, true);
    if (this.accepted.size > MAX_ACCEPTED) this.accepted.delete(this.accepted.keys().next().value as string);
  }
}
