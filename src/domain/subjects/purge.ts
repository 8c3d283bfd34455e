import { sql } from 'kysely';
import { notFound } from '../../errors.js';
import { recordEvent } from '../records/audit.js';
import type { Actor, Core } from '../core.js';
import { isUuid } from '../text.js';

export interface PurgeResult {
  anchorId: string;
  deleted: { memories: number; sessions: number };
}

/**
 * Erases a subject: its entity row, its memories of every binding (durable, and those of its
 * sessions), its sessions, and every audit event that names any of them with its webhook
 * deliveries, in one transaction. What remains is one `anchor_purged` event with counts only; the
 * anchor's random id stays on it so an operator can match the erasure to the request, while the
 * external id, which callers often build from personal data, is gone.
 */
export async function purgeAnchor(core: Core, actor: Actor, anchorId: string): Promise<PurgeResult> {
  if (!isUuid(anchorId)) throw notFound('anchor');
  return core.db.transaction().execute(async (trx) => {
    // The subject's row first, as every writer locks it first (partition.ts): once this holds, no
    // writer is half-way through the subject and none can start, so each DELETE below, reading
    // afresh, sees everything there is to erase and nothing waits on anything this holds.
    const anchor = await trx
      .selectFrom('entities')
      .select('id')
      .where('tenant_id', '=', actor.tenantId)
      .where('id', '=', anchorId)
      .where('kind', '=', 'subject')
      .forUpdate()
      .executeTakeFirst();
    if (!anchor) throw notFound('anchor');
    const tenant = actor.tenantId;
    const sessionIds = sql`(SELECT s.id FROM sessions s WHERE s.tenant_id = ${tenant} AND s.anchor_id = ${anchorId})`;
    const memoryIds = sql`(SELECT m.id FROM memories m WHERE m.tenant_id = ${tenant}
      AND (m.anchor_id = ${anchorId} OR m.session_id IN ${sessionIds}))`;
    const namingIt = sql`(SELECT a.id FROM audit_events a WHERE a.tenant_id = ${tenant} AND (
      a.anchor_id = ${anchorId} OR a.session_id IN ${sessionIds} OR a.memory_id IN ${memoryIds}))`;
    // Their webhook deliveries too (a delivery's id is its audit event's), sent or not: an erased
    // subject's ids are sent nowhere afterwards and kept nowhere, as in the trail.
    await sql`DELETE FROM webhook_deliveries WHERE tenant_id = ${tenant} AND id IN ${namingIt}`.execute(trx);
    await sql`DELETE FROM audit_events WHERE tenant_id = ${tenant} AND id IN ${namingIt}`.execute(trx);
    const memories = await sql`DELETE FROM memories WHERE tenant_id = ${tenant} AND id IN ${memoryIds}`.execute(trx);
    const sessions = await trx
      .deleteFrom('sessions')
      .where('tenant_id', '=', tenant)
      .where('anchor_id', '=', anchorId)
      .executeTakeFirst();
    await trx.deleteFrom('entities').where('tenant_id', '=', tenant).where('id', '=', anchorId).execute();
    const deleted = {
      memories: Number(memories.numAffectedRows ?? 0),
      sessions: Number(sessions.numDeletedRows),
    };
    await recordEvent(trx, actor, core.clock(), {
      action: 'anchor_purged',
      anchorId,
      changes: { memories: deleted.memories, sessions: deleted.sessions },
    });
    return { anchorId, deleted };
  });
}
