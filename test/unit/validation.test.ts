import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { decodeCursor, decodeTimeIdCursor, encodeCursor } from '../../src/domain/records/pagination.js';
import { AppError } from '../../src/errors.js';
import { RateLimitedError, RateLimiter } from '../../src/access/rate-limit.js';
import { assertContentLimit } from '../../src/domain/store/content-limit.js';
import { content, dateTime, metadata } from '../../src/schemas/fields.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('RateLimiter', () => {
  it('allows a minute of requests at once, then answers 429 with a Retry-After of at least 1 s', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(3, () => now);
    for (let i = 0; i < 3; i++) limiter.take('k');
    const error = thrown(() => limiter.take('k'));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).code).toBe('rate_limited');
    expect((error as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // Another key has its own allowance.
    limiter.take('other');
    // Three a minute refill one token every 20 s.
    now += 20_000;
    limiter.take('k');
    expect(() => limiter.take('k')).toThrow(RateLimitedError);
  });

  it('never limits when the allowance is 0', () => {
    const limiter = new RateLimiter(0);
    for (let i = 0; i < 1000; i++) limiter.take('k');
  });
});

describe('loadConfig', () => {
  it('names the variable that is wrong', () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['PORT', '70000'],
      ['SETUP_TOKEN', 'short'],
      ['EMBEDDER', 'magic'],
    ]) {
      const error = thrown(() => loadConfig({ [name as string]: value }));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(name);
    }
  });

  it('reads a good PORT and treats empty values as unset', () => {
    expect(loadConfig({ PORT: '9090' }).port).toBe(9090);
    expect(loadConfig({ PORT: '' }).port).toBe(8080);
  });
});

describe('decodeTimeIdCursor', () => {
  it('accepts what the lists write and rejects what Postgres would refuse', () => {
    const id = randomUUID();
    expect(decodeTimeIdCursor(encodeCursor(['2026-01-01T00:00:00.000Z', id]))).toEqual([
      '2026-01-01T00:00:00.000Z',
      id,
    ]);
    for (const key of [
      ['2026-01-01T00:00:00.000Z', '-'.repeat(36)],
      ['-200000-01-01T00:00:00.000Z', id],
      ['0000-01-01T00:00:00.000Z', id],
      ['2026-02-30T00:00:00.000Z', id],
      ['2026-01-01', id],
    ]) {
      const error = thrown(() => decodeTimeIdCursor(encodeCursor(key)));
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('invalid_request');
    }
  });
});

describe('assertContentLimit', () => {
  it('counts characters (code points), not UTF-16 units', () => {
    assertContentLimit('😀'.repeat(10), 10);
    const error = thrown(() => assertContentLimit('😀'.repeat(11), 10));
    expect((error as AppError).code).toBe('payload_too_large');
  });
});

describe('metadata schema', () => {
  it('takes nesting up to 32 levels and refuses deeper nesting and U+0000', () => {
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: true };
      for (let i = 1; i < levels; i++) value = { child: value };
      return value;
    };
    expect(metadata.safeParse(nest(32)).success).toBe(true);
    expect(metadata.safeParse(nest(33)).success).toBe(false);
    expect(metadata.safeParse({ ['k\u0000']: 1 }).success).toBe(false);
    expect(metadata.safeParse({ list: ['ok', 'n\u0000'] }).success).toBe(false);
  });
});

describe('strings the database cannot store', () => {
  it('refuses a lone surrogate in text and in metadata keys and values at any depth, keeps pairs', () => {
    for (const lone of ['\ud800', '\udfff', 'a\udc00b', '\ud83d']) {
      expect(content.safeParse(lone).success).toBe(false);
      expect(metadata.safeParse({ k: lone }).success).toBe(false);
      expect(metadata.safeParse({ [lone]: 1 }).success).toBe(false);
      expect(metadata.safeParse({ a: [{ b: { [`c${lone}`]: true } }] }).success).toBe(false);
    }
    expect(content.safeParse('pizza 🍕').success).toBe(true);
    expect(metadata.safeParse({ '🍕': ['😀'] }).success).toBe(true);
  });
});

describe('dateTime', () => {
  it('takes the years 1970 to 9999 only', () => {
    for (const ok of ['1970-01-01T00:00:00Z', '2026-05-01T12:00:00+02:00', '9999-12-31T23:59:59.999Z']) {
      expect(dateTime().safeParse(ok).success).toBe(true);
    }
    for (const bad of ['0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '+010000-01-01T00:00:00Z', 'yesterday']) {
      expect(dateTime().safeParse(bad).success).toBe(false);
    }
  });
});

describe('decodeCursor', () => {
  it('takes only non-negative safe integers where a number is expected', () => {
    expect(decodeCursor(encodeCursor([42]), ['number'])).toEqual([42]);
    for (const forged of [[1.5], [1e20], [-1], [Number.MAX_SAFE_INTEGER + 2]]) {
      const error = thrown(() => decodeCursor(encodeCursor(forged), ['number']));
      expect((error as AppError).code).toBe('invalid_request');
    }
  });
});
