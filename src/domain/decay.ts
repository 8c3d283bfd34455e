import { sql, type RawBuilder } from 'kysely';
import { DAY_MS } from './time.js';

/** effective = confidence × e^(−rate × days since last reinforcement), computed at read time. */
export function effectiveConfidence(confidence: number, ratePerDay: number, lastReinforcedAt: Date, now: Date): number {
  const days = Math.max(0, (now.getTime() - lastReinforcedAt.getTime()) / DAY_MS);
  return confidence * Math.exp(-ratePerDay * days);
}

/** effectiveConfidence in SQL, over memories `m`, for ordering by it in the database. */
export function effectiveConfidenceSql(now: Date): RawBuilder<number> {
  const days = sql`greatest(0, extract(epoch from (${now}::timestamptz - m.last_reinforced_at)) * 1000 / ${DAY_MS})`;
  return sql<number>`m.confidence * exp(-m.decay_rate * ${days})`;
}
