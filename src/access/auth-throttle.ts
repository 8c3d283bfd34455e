import type { Request } from 'express';
import { AppError } from '../errors.js';
import { RateLimitedError } from './rate-limit.js';

const WINDOW_MS = 60_000;

/**
 * Failed authentications per client address, in process memory: after `perMinute` failures within a
 * minute of the first, the address is answered 429 without its credential being checked, which makes
 * guessing keys or the setup token by brute force slow. 0 turns it off.
 */
export class AuthThrottle {
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs an authentication step for the request's address: refused while the address is throttled,
   * and its `unauthorized` failures are counted.
   */
  async guard<T>(req: Request, authenticate: () => T | Promise<T>): Promise<T> {
    if (this.perMinute <= 0) return authenticate();
    const address = req.socket.remoteAddress ?? 'unknown';
    this.refuseIfThrottled(address);
    try {
      return await authenticate();
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') this.recordFailure(address);
      throw error;
    }
  }

  private refuseIfThrottled(address: string): void {
    const entry = this.failures.get(address);
    const now = this.now();
    if (entry === undefined || entry.until <= now || entry.count < this.perMinute) return;
    const retryAfter = Math.max(1, Math.ceil((entry.until - now) / 1000));
    throw new RateLimitedError(
      retryAfter,
      `too many failed authentications from this address; retry after ${retryAfter} s`,
    );
  }

  private recordFailure(address: string): void {
    const now = this.now();
    const entry = this.failures.get(address);
    if (entry === undefined || entry.until <= now) this.failures.set(address, { count: 1, until: now + WINDOW_MS });
    else entry.count += 1;
    if (this.failures.size > 100_000) this.evictExpired(now);
  }

  // Expired windows carry no information; dropping them bounds memory under a spray of addresses.
  private evictExpired(now: number): void {
    for (const [address, entry] of this.failures) if (entry.until <= now) this.failures.delete(address);
  }
}
