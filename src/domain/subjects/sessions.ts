import { sql, type Selectable } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../../db/connect.js';
import { executePrepared } from '../../db/prepared.js';
import type { SessionsTable } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import type { SessionObject } from '../../schemas/objects.js';
import { actAs } from '../tenancy/agent-binding.js';
import { lockAnchor, resolveAnchor, type AnchorRef } from './anchors.js';
import { recordEvent } from '../records/audit.js';
import type { Actor, Core } from '../core.js';
import { decodeTimeIdCursor, toPage, type Page } from '../records/pagination.js';
import { isUuid, newId } from '../text.js';
import { HOUR_MS } from '../time.js';

export type Session = z.output<typeof SessionObject>;

type SessionRow = Omit<Selectable<SessionsTable>, 'tenant_id'> & { anchor_external_id: string | null };

const toSession = (r: SessionRow): Session => ({
  id: r.id,
  agent_id: r.agent_id,
  anchor_id: r.anchor_id,
  anchor_external_id: r.anchor_external_id,
  status: r.status,
  started_at: r.started_at.toISOString(),
  ended_at: r.ended_at?.toISOString() ?? null,
  expires_at: r.expires_at?.toISOString() ?? null,
  metadata: r.metadata,
});

/** 'update' for ending a session; 'share' for stores into it, so a store and an end take turns. */
type RowLock = 'none' | 'share' | 'update';

/** A tenant's sessions with their subject's external id, as every read of sessions selects them. */
function sessionRows(db: Db, tenantId: string) {
  return db
    .selectFrom('sessions as s')
    .leftJoin('entities as e', (j) => j.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.id', '=', 's.anchor_id'))
    .select([
      's.id',
      's.agent_id',
      's.anchor_id',
      'e.external_id as anchor_external_id',
      's.status',
      's.started_at',
      's.ended_at',
      's.expires_at',
      's.metadata',
    ])
    .where('s.tenant_id', '=', tenantId);
}

async function findSession(
  db: Db,
  tenantId: string,
  id: string,
  lock: RowLock = 'none',
): Promise<SessionRow | undefined> {
  if (!isUuid(id)) return undefined;
  let query = sessionRows(db, tenantId).where('s.id', '=', id);
  // Prepared: recall resolves its session so (src/db/prepared.ts).
  if (lock === 'none') return (await executePrepared(db, query.compile())).rows[0];
  if (lock === 'update') query = query.forUpdate('s');
  if (lock === 'share') query = query.forShare('s');
  return query.executeTakeFirst();
}

export async function getSession(db: Db, tenantId: string, id: string): Promise<Session> {
  const row = await findSession(db, tenantId, id);
  if (!row) throw notFound('session');
  return toSession(row);
}

/** A subject's sessions, latest first: active, ended, and ended ones whose memories expire later. */
export async function listAnchorSessions(
  db: Db,
  tenantId: string,
  anchorId: string,
  options: { limit: number; cursor?: string | undefined },
): Promise<Page<Session>> {
  let query = sessionRows(db, tenantId).where('s.anchor_id', '=', anchorId);
  if (options.cursor) {
    const [startedAt, id] = decodeTimeIdCursor(options.cursor);
    query = query.where(sql<boolean>`(s.started_at, s.id) < (${startedAt}::timestamptz, ${id}::uuid)`);
  }
  const rows = await query
    .orderBy('s.started_at', 'desc')
    .orderBy('s.id', 'desc')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows, options.limit, (r) => [r.started_at.toISOString(), r.id], toSession);
}

/** A subject's sessions, oldest first (the subject's export). */
export async function anchorSessions(db: Db, tenantId: string, anchorId: string): Promise<Session[]> {
  const rows = await sessionRows(db, tenantId)
    .where('s.anchor_id', '=', anchorId)
    .orderBy('s.started_at')
    .orderBy('s.id')
    .execute();
  return rows.map(toSession);
}

export async function createSession(
  core: Core,
  actor: Actor,
  input: { agentId: string; anchor: AnchorRef; metadata?: Record<string, unknown> | undefined },
): Promise<Session> {
  actAs(actor, input.agentId);
  return core.db.transaction().execute(async (trx) => {
    // Holds the subject until the session row is in, so a purge cannot erase it in between.
    const anchorId = (await resolveAnchor(trx, actor.tenantId, input.anchor, { createAt: core.clock() })) ?? null;
    const id = newId();
    await trx
      .insertInto('sessions')
      .values({
        tenant_id: actor.tenantId,
        id,
        agent_id: input.agentId,
        anchor_id: anchorId,
        metadata: JSON.stringify(input.metadata ?? {}),
        started_at: core.clock(),
      })
      .execute();
    const row = await findSession(trx, actor.tenantId, id);
    if (!row) throw new Error('session vanished after insert');
    return toSession(row);
  });
}

/** Ends a session once; ending it again returns it unchanged and records nothing. */
export async function endSession(core: Core, actor: Actor, id: string): Promise<Session> {
  return core.db.transaction().execute(async (trx) => {
    // The subject before the session (the lock order of partition.ts), so that a purge either waits
    // for this end or has erased the session before it: never does the end's event outlive a purge.
    const peeked = await findSession(trx, actor.tenantId, id);
    if (peeked?.anchor_id && !(await lockAnchor(trx, actor.tenantId, peeked.anchor_id))) throw notFound('session');
    const row = await findSession(trx, actor.tenantId, id, 'update');
    if (!row) throw notFound('session');
    if (row.status === 'ended') return toSession(row);
    const endedAt = core.clock();
    const expiresAt = new Date(endedAt.getTime() + core.config.sessionTtlHours * HOUR_MS);
    await trx
      .updateTable('sessions')
      .set({ status: 'ended', ended_at: endedAt, expires_at: expiresAt })
      .where('tenant_id', '=', actor.tenantId)
      .where('id', '=', id)
      .execute();
    await recordEvent(trx, actor, core.clock(), {
      action: 'session_ended',
      agentId: row.agent_id,
      sessionId: id,
      anchorId: row.anchor_id,
    });
    return toSession({ ...row, status: 'ended', ended_at: endedAt, expires_at: expiresAt });
  });
}

export interface SessionScope {
  sessionId: string;
  anchorId: string | null;
  /** The external id of its subject, read with it. */
  anchorExternalId: string | null;
  /** Set once the session has ended; its unpromoted memories are gone from then on. */
  expiresAt: Date | null;
}

/**
 * The session a store or recall names, checked against the anchor it names: a session of one
 * subject must not carry memories or answers of another.
 */
export async function resolveSession(
  db: Db,
  tenantId: string,
  sessionId: string,
  anchorId: string | null | undefined,
  options: { mustBeActive: boolean },
): Promise<SessionScope> {
  // A store holds the row shared until it commits, so an end that starts meanwhile waits for it and
  // a store that starts after an end sees the session ended.
  const row = await findSession(db, tenantId, sessionId, options.mustBeActive ? 'share' : 'none');
  if (!row) throw notFound('session');
  if (options.mustBeActive && row.status === 'ended') {
    throw new AppError('session_ended', 'the session has ended; start a new session to store short-term memories');
  }
  if (anchorId && row.anchor_id && anchorId !== row.anchor_id) {
    throw new AppError('conflict', 'the session belongs to another anchor than the one named');
  }
  return {
    sessionId: row.id,
    anchorId: row.anchor_id,
    anchorExternalId: row.anchor_external_id,
    expiresAt: row.expires_at,
  };
}
