import { sql, type Selectable } from 'kysely';
import type { SessionsTable } from '../../db/schema.js';
import { lockAnchor } from '../subjects/anchors.js';
import { recordEvent } from '../records/audit.js';
import type { Core } from '../core.js';
import { isExpired } from './life.js';
import type { MemoryRow } from '../records/memories.js';
import { lockMemory } from '../store/memory-lock.js';
import { lockPartition } from '../store/partition.js';
import { sessionMemoryGone } from '../subjects/session-memories.js';

// Any fixed number, different from the migration lock; every process sweeping this database uses it.
export const SWEEP_LOCK_KEY = 7_214_003_118_505_002;
const BATCH = 500;

export interface SweepResult {
  /** false when another process held the sweep, so this one did nothing. */
  leader: boolean;
  expired: number;
}

type DueSession = Pick<Selectable<SessionsTable>, 'tenant_id' | 'id' | 'anchor_id'>;

/**
 * Deletes one session's memories that have outlived it, in the lock order of partition.ts: its
 * subject, then its partition, so that neither a purge nor a store into the subject waits on the
 * sweep in a cycle, and no store reinforces a memory as it is deleted. null when another process
 * holds the sweep.
 */
async function sweepSession(core: Core, due: DueSession): Promise<number | null> {
  return core.db.transaction().execute(async (trx) => {
    const lock = await sql<{
      locked: boolean;
    }>`SELECT pg_try_advisory_xact_lock(${sql.raw(String(SWEEP_LOCK_KEY))}) AS locked`.execute(trx);
    if (lock.rows[0]?.locked !== true) return null;
    // A purge took the subject, and the session with it, meanwhile.
    if (due.anchor_id && !(await lockAnchor(trx, due.tenant_id, due.anchor_id))) return 0;
    await lockPartition(trx, {
      tenantId: due.tenant_id,
      binding: 'session',
      agentId: '',
      anchorId: due.anchor_id,
      sessionId: due.id,
    });
    const rows = await trx
      .deleteFrom('memories as m')
      .where('m.tenant_id', '=', due.tenant_id)
      .where('m.session_id', '=', due.id)
      .where('m.binding', '=', 'session')
      .where(sessionMemoryGone(core.clock()))
      .returning(['m.id', 'm.agent_id', 'm.anchor_id', 'm.session_id', 'm.confidence'])
      .execute();
    for (const row of rows) {
      await recordEvent(trx, { tenantId: due.tenant_id, keyId: null, scopes: new Set() }, core.clock(), {
        action: 'expired',
        agentId: row.agent_id,
        memoryId: row.id,
        anchorId: row.anchor_id,
        sessionId: row.session_id,
        changes: { binding: 'session', confidence: row.confidence },
      });
    }
    return rows.length;
  });
}

/**
 * Hard-deletes the unpromoted memories of sessions whose expiry has passed, recording an `expired`
 * event for each, one session per transaction. One process sweeps at a time: the transaction-scoped
 * try-lock lets the others skip instead of queueing, and is released by the commit even if the
 * process dies.
 */
export async function sweepExpiredSessions(core: Core): Promise<SweepResult> {
  let expired = 0;
  for (;;) {
    const due = await core.db
      .selectFrom('sessions as s')
      .select(['s.tenant_id', 's.id', 's.anchor_id'])
      .where('s.expires_at', '<=', core.clock())
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('memories as m')
            .select('m.id')
            .whereRef('m.tenant_id', '=', 's.tenant_id')
            .whereRef('m.session_id', '=', 's.id')
            .where('m.binding', '=', 'session')
            .where(sessionMemoryGone(core.clock())),
        ),
      )
      .limit(BATCH)
      .execute();
    let swept = 0;
    for (const session of due) {
      const deleted = await sweepSession(core, session);
      if (deleted === null) return { leader: false, expired };
      swept += deleted;
    }
    expired += swept;
    // A full batch may hide more; one that deleted nothing would only find itself again.
    if (due.length < BATCH || swept === 0) return { leader: true, expired };
  }
}

type DueMemory = Pick<MemoryRow, 'id' | 'agent_id' | 'binding' | 'anchor_id' | 'session_id'>;

/**
 * Deletes one memory whose expiry has passed (./life.ts), in the lock order of partition.ts
 * (lockMemory), audited `expired`. Read again under the locks: a PATCH may have pinned it or moved
 * its expiry meanwhile. null when another process holds the sweep.
 */
async function sweepMemory(core: Core, tenantId: string, due: DueMemory): Promise<number | null> {
  return core.db.transaction().execute(async (trx) => {
    const lock = await sql<{
      locked: boolean;
    }>`SELECT pg_try_advisory_xact_lock(${sql.raw(String(SWEEP_LOCK_KEY))}) AS locked`.execute(trx);
    if (lock.rows[0]?.locked !== true) return null;
    const now = core.clock();
    const row = await lockMemory(trx, tenantId, due);
    if (!row || !isExpired(row, now)) return 0;
    await trx.deleteFrom('memories').where('tenant_id', '=', tenantId).where('id', '=', row.id).execute();
    await recordEvent(trx, { tenantId, keyId: null, scopes: new Set() }, now, {
      action: 'expired',
      agentId: row.agent_id,
      memoryId: row.id,
      anchorId: row.anchor_id,
      sessionId: row.session_id,
      changes: { binding: row.binding, confidence: row.confidence, expires_at: row.expires_at?.toISOString() ?? null },
    });
    return 1;
  });
}

/**
 * Hard-deletes the memories whose own expiry (expires_at) has passed and that are not pinned, one
 * per transaction, each audited `expired`. Recall and the lists hid them already at their expiry.
 */
export async function sweepExpiredMemories(core: Core): Promise<SweepResult> {
  let expired = 0;
  for (;;) {
    const due = await core.db
      .selectFrom('memories')
      .select(['tenant_id', 'id', 'agent_id', 'binding', 'anchor_id', 'session_id'])
      .where('expires_at', '<=', core.clock())
      .where('pinned', '=', false)
      .orderBy('expires_at')
      .limit(BATCH)
      .execute();
    let swept = 0;
    for (const { tenant_id, ...memory } of due) {
      const deleted = await sweepMemory(core, tenant_id, memory);
      if (deleted === null) return { leader: false, expired };
      swept += deleted;
    }
    expired += swept;
    if (due.length < BATCH || swept === 0) return { leader: true, expired };
  }
}

/** Both sweeps: the memories of expired sessions, then the memories past their own expiry. */
export async function sweepExpired(core: Core): Promise<SweepResult> {
  const sessions = await sweepExpiredSessions(core);
  if (!sessions.leader) return sessions;
  const memories = await sweepExpiredMemories(core);
  return { leader: memories.leader, expired: sessions.expired + memories.expired };
}

/** Sweeps on an interval in the serving process; the returned function stops it. */
export function startSweeper(core: Core, intervalMs: number): () => void {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    const started = performance.now();
    const took = () => (performance.now() - started) / 1000;
    sweepExpired(core)
      .then((result) => {
        core.metrics?.sweep(result.leader ? 'swept' : 'skipped', took(), result.expired);
        if (result.expired > 0) core.log.info({ expired: result.expired }, 'expired memories swept');
      })
      .catch((error: unknown) => {
        core.metrics?.sweep('failed', took(), 0);
        core.log.error({ err: error }, 'session sweep failed');
      })
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
