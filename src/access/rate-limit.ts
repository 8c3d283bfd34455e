import { AppError } from '../errors.js';

/**
 * A token bucket per key, in process memory: each key may burst up to a minute's allowance and
 * refills continuously. Several processes each enforce it on their own share of traffic.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Throws 429 with the seconds to wait when the key has fewer than `cost` tokens left. A JSON-RPC
   * batch costs one token per call in it; a cost above a minute's allowance is never granted.
   */
  take(key: string, cost = 1): void {
    if (this.perMinute <= 0) return;
    const now = this.now();
    const ratePerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * ratePerMs);
    bucket.at = now;
    if (cost > this.perMinute) {
      throw new RateLimitedError(60, `${cost} calls in one request exceed the limit of ${this.perMinute} per minute`);
    }
    if (bucket.tokens < cost) {
      this.buckets.set(key, bucket);
      const retryAfter = Math.max(1, Math.ceil((cost - bucket.tokens) / ratePerMs / 1000));
      throw new RateLimitedError(retryAfter);
    }
    bucket.tokens -= cost;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 100_000) this.evictFull(now);
  }

  // Buckets that have refilled completely carry no information; dropping them bounds memory.
  private evictFull(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(key);
    }
  }
}

export class RateLimitedError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    detail = `too many requests for this key; retry after ${retryAfterSeconds} s`,
  ) {
    super('rate_limited', detail);
  }
}
