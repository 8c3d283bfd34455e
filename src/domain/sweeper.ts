import { sql } from 'kysely';
import { recordEvent } from './audit.js';
import type { Core } from './core.js';

// Any fixed number, different from the migration lock; every process sweeping this database uses it.
const SWEEP_LOCK_KEY = 7_214_003_118_505_002;
const BATCH = 500;

export interface SweepResult {
  /** false when another process held the sweep, so this one did nothing. */
  leader: boolean;
  expired: number;
}

/**
 * Hard-deletes the unpromoted memories of sessions whose expiry has passed, recording an `expired`
 * event for each. One process sweeps at a time: the transaction-scoped try-lock lets the others skip
 * instead of queueing, and is released by the commit even if the process dies.
 */
export async function sweepExpiredSessions(core: Core): Promise<SweepResult> {
  let expired = 0;
  for (;;) {
    const batch = await core.db.transaction().execute(async (trx) => {
      const lock = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_xact_lock(${sql.raw(String(SWEEP_LOCK_KEY))}) AS locked`.execute(trx);
      if (lock.rows[0]?.locked !== true) return null;
      const rows = await trx
        .selectFrom('memories as m')
        .innerJoin('sessions as s', (j) =>
          j.onRef('s.tenant_id', '=', 'm.tenant_id').onRef('s.id', '=', 'm.session_id'),
        )
        .select(['m.tenant_id', 'm.id', 'm.agent_id', 'm.anchor_id', 'm.session_id', 'm.confidence'])
        .where('m.binding', '=', 'session')
        .where('s.expires_at', '<=', core.clock())
        .limit(BATCH)
        .execute();
      for (const row of rows) {
        await trx.deleteFrom('memories').where('tenant_id', '=', row.tenant_id).where('id', '=', row.id).execute();
        await recordEvent(
          trx,
          core,
          { tenantId: row.tenant_id, keyId: null, scopes: new Set() },
          {
            action: 'expired',
            agentId: row.agent_id,
            memoryId: row.id,
            anchorId: row.anchor_id,
            sessionId: row.session_id,
            changes: { binding: 'session', confidence: row.confidence },
          },
        );
      }
      return rows.length;
    });
    if (batch === null) return { leader: false, expired };
    expired += batch;
    if (batch < BATCH) return { leader: true, expired };
  }
}

/** Sweeps on an interval in the serving process; the returned function stops it. */
export function startSweeper(core: Core, intervalMs: number): () => void {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    sweepExpiredSessions(core)
      .then((result) => {
        if (result.expired > 0) core.log.info({ expired: result.expired }, 'expired session memories swept');
      })
      .catch((error: unknown) => core.log.error({ err: error }, 'session sweep failed'))
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
