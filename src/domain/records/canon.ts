import { memoryFilterSql } from '../../db/memory-filter.js';
import type { MemoryFilter } from '../../filter/language.js';
import type { Selectable } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../../db/connect.js';
import type { MemoriesTable } from '../../db/schema.js';
import { AppError, isUniqueViolation, notFound } from '../../errors.js';
import type { CanonObject } from '../../schemas/objects.js';
import { actAs } from '../tenancy/agent-binding.js';
import { assertContentLimit } from '../store/content-limit.js';
import { recordEvent } from './audit.js';
import { insertMemory } from './memories.js';
import type { Actor, Core } from '../core.js';
import { decodeTimeIdCursor, toPage, type Page } from './pagination.js';
import { contentKey, isUuid, newId } from '../text.js';

/** Tenant-wide policy: stored as memories of binding `canon`, unique per tenant by normalized content. */
export type CanonEntry = z.output<typeof CanonObject>;

type CanonRow = Pick<Selectable<MemoriesTable>, 'id' | 'agent_id' | 'content' | 'metadata' | 'created_at'>;

const toCanon = (r: CanonRow): CanonEntry => ({
  id: r.id,
  agent_id: r.agent_id,
  content: r.content,
  binding: 'canon',
  metadata: r.metadata,
  created_at: r.created_at.toISOString(),
});

function canonQuery(db: Db, tenantId: string) {
  return db
    .selectFrom('memories')
    .select(['id', 'agent_id', 'content', 'metadata', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('binding', '=', 'canon');
}

async function findByKey(db: Db, tenantId: string, key: string): Promise<CanonRow | undefined> {
  return canonQuery(db, tenantId).where('content_key', '=', key).executeTakeFirst();
}

/** Writes canon once: the same content (trimmed, whitespace collapsed) returns the existing entry. */
export async function writeCanon(
  core: Core,
  actor: Actor,
  input: { agentId: string; content: string; metadata?: Record<string, unknown> | undefined },
): Promise<{ entry: CanonEntry; created: boolean }> {
  assertContentLimit(input.content, core.config.contentLimitChars);
  // Canon is every agent's, but the entry names its writer: a bound key writes only as its agents.
  actAs(actor, input.agentId);
  const key = contentKey(input.content);
  const existing = await findByKey(core.db, actor.tenantId, key);
  if (existing) return { entry: toCanon(existing), created: false };
  const [embedding] = await core.embedder.embed([key]);
  if (!embedding) throw new Error('embedder returned no vector');
  try {
    return await core.db.transaction().execute(async (trx) => {
      const now = core.clock();
      const id = newId();
      // Stored as its normalized form, so the unique index and later writes see one text.
      await insertMemory(
        trx,
        {
          tenantId: actor.tenantId,
          id,
          agentId: input.agentId,
          content: key,
          binding: 'canon',
          anchorId: null,
          sessionId: null,
          confidence: 1,
          metadata: input.metadata,
          embedding,
          now,
        },
        { decayPerDay: core.config.decayPerDay, embedderId: core.embedder.id },
      );
      await recordEvent(trx, actor, core.clock(), {
        action: 'canon_written',
        agentId: input.agentId,
        memoryId: id,
        changes: { binding: 'canon', confidence: 1 },
      });
      return {
        entry: toCanon({ id, agent_id: input.agentId, content: key, metadata: input.metadata ?? {}, created_at: now }),
        created: true,
      };
    });
  } catch (error) {
    // Two writers raced on the same content: the unique index kept one, which both now return.
    if (!isUniqueViolation(error)) throw error;
    const winner = await findByKey(core.db, actor.tenantId, key);
    if (!winner) throw new AppError('conflict', 'canon entry was written and removed concurrently; retry');
    return { entry: toCanon(winner), created: false };
  }
}

export async function getCanon(db: Db, tenantId: string, id: string): Promise<CanonEntry> {
  if (!isUuid(id)) throw notFound('canon entry');
  const row = await canonQuery(db, tenantId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('canon entry');
  return toCanon(row);
}

export async function listCanon(
  db: Db,
  tenantId: string,
  options: { limit: number; cursor?: string | undefined; filter?: MemoryFilter | null },
): Promise<Page<CanonEntry>> {
  let query = canonQuery(db, tenantId);
  if (options.filter) query = query.where(memoryFilterSql(options.filter, 'memories'));
  if (options.cursor) {
    const [createdAt, id] = decodeTimeIdCursor(options.cursor);
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', new Date(createdAt)),
        eb.and([eb('created_at', '=', new Date(createdAt)), eb('id', '>', id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at')
    .orderBy('id')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows, options.limit, (r) => [r.created_at.toISOString(), r.id], toCanon);
}

/** Deletes a canon entry once: a delete that waited for another delete of it finds nothing and records nothing. */
export async function deleteCanon(core: Core, actor: Actor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('canon entry');
  await core.db.transaction().execute(async (trx) => {
    // The delete itself decides, not a read before it: a racing delete's row is gone by the time this one runs.
    const entry = await trx
      .deleteFrom('memories')
      .where('tenant_id', '=', actor.tenantId)
      .where('id', '=', id)
      .where('binding', '=', 'canon')
      .returning('agent_id')
      .executeTakeFirst();
    if (!entry) throw notFound('canon entry');
    await recordEvent(trx, actor, core.clock(), {
      action: 'canon_deleted',
      agentId: entry.agent_id,
      memoryId: id,
      changes: { binding: 'canon' },
    });
  });
}
