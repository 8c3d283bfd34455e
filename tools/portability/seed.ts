import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';

/**
 * Bulk-inserts `count` private memories into a tenant in one statement per 10,000 rows, for
 * measuring an export of a large tenant without storing each memory through the API. Every row
 * holds `contentChars` characters of text and the same vector; the memories table's triggers keep
 * the statistics as for any write.
 */
export async function seedMemories(
  db: Db,
  tenantId: string,
  options: { count: number; contentChars: number; dimensions: number; embedderId: string },
): Promise<void> {
  const vector = `[${Array.from({ length: options.dimensions }, (_, i) => (i === 0 ? 1 : 0)).join(',')}]`;
  const words = Math.max(1, Math.floor(options.contentChars / 6));
  const step = 10_000;
  for (let from = 1; from <= options.count; from += step) {
    const to = Math.min(options.count, from + step - 1);
    await sql`
      INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, confidence, decay_rate,
        metadata, embedding, embedder, created_at, updated_at, last_reinforced_at)
      SELECT ${tenantId}::uuid, gen_random_uuid(), 'seed-agent', c, c, 'private', 0.7, 0.05,
        jsonb_build_object('n', g), ${vector}::vector, ${options.embedderId}, t, t, t
      FROM generate_series(${from}::int, ${to}::int) g,
        LATERAL (SELECT 'memory ' || g || ' ' || repeat('lorem ', ${words}::int) AS c,
                        timestamptz '2026-01-01' + g * interval '1 second' AS t) x`.execute(db);
  }
}
