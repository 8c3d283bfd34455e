import { sql, type RawBuilder } from 'kysely';
import { DAY_MS } from '../time.js';

/** effective = confidence × e^(−rate × days since last reinforcement), computed at read time. */
export function effectiveConfidence(confidence: number, ratePerDay: number, lastReinforcedAt: Date, now: Date): number {
  const days = Math.max(0, (now.getTime() - lastReinforcedAt.getTime()) / DAY_MS);
  return confidence * Math.exp(-ratePerDay * days);
}

/**
 * Postgres raises an error where a double underflows (exp(-746), 1e-300 × 1e-300) or overflows,
 * where JavaScript gives 0: below e^-700 a memory has decayed to nothing either way.
 */
const LOG_FLOOR = -700;
/** A rate past which a memory has decayed to nothing within a second: keeps rate × days finite. */
const RATE_CAP = 1e9;

/** effectiveConfidence in SQL, over memories `m`, for ordering by it in the database; a pinned memory does not decay. */
export function effectiveConfidenceSql(now: Date): RawBuilder<number> {
  const days = sql`greatest(0, extract(epoch from (${now}::timestamptz - m.last_reinforced_at)) * 1000 / ${DAY_MS})`;
  // confidence × e^(−rate × days), as e^(ln confidence − rate × days) floored, so no step leaves a double's range.
  const exponent = sql`ln(m.confidence) - least(m.decay_rate, ${RATE_CAP}::float8) * ${days}`;
  return sql<number>`(CASE WHEN m.pinned THEN m.confidence WHEN m.confidence > 0 THEN exp(greatest(${exponent}, ${LOG_FLOOR}::float8)) ELSE 0 END)`;
}
