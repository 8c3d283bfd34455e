import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { effectiveConfidence, effectiveConfidenceSql } from '../../src/domain/lifecycle/decay.js';
import { testCore } from '../helpers/harness.js';

// The profile orders by the SQL form, recall scores by the JS one: both must give the same numbers.
describe('effective confidence in JS and in SQL', () => {
  it('agrees on each row, a reinforcement in the future counting as now', async () => {
    const core = await testCore();
    const now = new Date('2026-03-01T12:00:00Z');
    const rows: [number, number, Date][] = [
      [0.6, 0.05, now],
      [0.9, 0.01, new Date('2026-02-28T00:00:00Z')],
      [0.75, 0.2, new Date('2025-12-01T06:30:00Z')],
      [0.5, 0.1, new Date('2026-03-04T12:00:00Z')],
      // Decayed past what a double holds: JS gives 0, and Postgres must not raise an underflow.
      [0.7, 1000, new Date('2025-03-01T12:00:00Z')],
      [0.7, 0.05, new Date('1970-01-01T00:00:00Z')],
      [1e-300, 0.05, new Date('2024-03-01T12:00:00Z')],
      [0.7, 1e300, new Date('2026-02-28T12:00:00Z')],
      [0, 0.05, now],
    ];
    for (const [confidence, rate, at] of rows) {
      const { rows: out } = await sql<{ v: number }>`SELECT ${effectiveConfidenceSql(now)}::float8 AS v
        FROM (VALUES (${confidence}::float8, ${rate}::float8, ${at}::timestamptz, false)) AS m(confidence, decay_rate, last_reinforced_at, pinned)`.execute(
        core.db,
      );
      expect(Number(out[0]?.v)).toBeCloseTo(effectiveConfidence(confidence, rate, at, now), 9);
    }
  });

  it('leaves a pinned memory at its confidence', async () => {
    const core = await testCore();
    const now = new Date('2026-03-01T12:00:00Z');
    const { rows: out } = await sql<{ v: number }>`SELECT ${effectiveConfidenceSql(now)}::float8 AS v
      FROM (VALUES (0.8::float8, 0.05::float8, '2025-03-01T12:00:00Z'::timestamptz, true)) AS m(confidence, decay_rate, last_reinforced_at, pinned)`.execute(
      core.db,
    );
    expect(Number(out[0]?.v)).toBe(0.8);
  });
});
