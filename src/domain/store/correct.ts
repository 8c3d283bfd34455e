import { sql } from 'kysely';
import { AppError, notFound } from '../../errors.js';
import { actAs, boundAgents, canSeeMemory, soleAgent } from '../tenancy/agent-binding.js';
import { recordEvent } from '../records/audit.js';
import { assertContentLimit } from './content-limit.js';
import type { Actor, Core } from '../core.js';
import { findMemoryRow, insertMemory, toMemory, type Memory } from '../records/memories.js';
import { askedExpiry, isExpired, type LifeInput } from '../lifecycle/life.js';
import { lockMemory, partitionOfRow } from './memory-lock.js';
import { inPartition } from './partition.js';
import { markSuperseded } from './supersede.js';
import { contentKey, newId } from '../text.js';

export interface CorrectInput {
  /** The memory to correct. */
  id: string;
  content: string;
  /**
   * Which agent corrects it, for the audit trail. Left out, a person with the key does (the
   * console): the trail names the key alone, or the one agent a key bound to one agent acts as.
   */
  agentId?: string | undefined;
  /** Replaces the memory's metadata; the old metadata is carried over when left out. */
  metadata?: Record<string, unknown> | undefined;
  /** The new memory's expiry and pin; the corrected memory's are carried over when left out. */
  life?: LifeInput | undefined;
}

export interface CorrectResult {
  /** The memory that now holds the fact: a new one, or one of the partition that held it already. */
  memory: Memory;
  /** The corrected memory's id, now superseded by `memory`. */
  corrects: string;
}

/**
 * Who corrects when no agent is named: not simply the memory's own agent, which would record a
 * person's correction (the console's) as that agent's words. An unbound key is recorded alone. A
 * key bound to agents always acts as one of them: its only one, else the memory's agent when it is
 * one of them, else it must name which.
 */
function correctingAgent(actor: Actor, memoryAgent: string): string | null {
  const bound = boundAgents(actor);
  if (bound === null) return null;
  const sole = soleAgent(actor) ?? (bound.includes(memoryAgent) ? memoryAgent : undefined);
  if (sole === undefined) {
    throw new AppError(
      'insufficient_scope',
      "this key is bound to several agents, none of them the memory's: name the one correcting in agent_id",
      [{ path: 'agent_id', message: 'required: one of the agents the key is bound to' }],
    );
  }
  return sole;
}

/**
 * A person's correction of one memory (docs/api.md §5, PATCH /v1/memories/{id}). The old memory is
 * kept, superseded by the corrected text, so the trail shows what was believed and who changed it;
 * nothing is rewritten in place. The new memory stays in the old one's partition (same binding,
 * agent, subject and session) and starts from the old confidence or the initial one, whichever is
 * higher: a person vouched for it. When the partition already holds the corrected text (up to case and spacing), the old
 * memory is superseded by that memory instead of inserting a twin. A correction is a decision, not
 * evidence, so it neither reinforces nor runs the contradiction detector.
 */
export async function correctMemory(core: Core, actor: Actor, input: CorrectInput): Promise<CorrectResult> {
  assertContentLimit(input.content, core.config.contentLimitChars);
  const content = input.content.trim();
  const before = await findMemoryRow(core.db, actor.tenantId, input.id);
  if (!before || !canSeeMemory(actor, before)) throw notFound('memory');
  if (before.binding === 'canon') {
    throw new AppError('conflict', 'canon entries are changed through /v1/canon with an admin key');
  }
  const agentId = input.agentId !== undefined ? actAs(actor, input.agentId) : correctingAgent(actor, before.agent_id);
  // Embedding is slow and needs no lock.
  const [embedding] = await core.embedder.embed([content]);
  if (!embedding) throw new Error('embedder returned no vector');
  const { clock, config } = core;
  const embedderId = core.embedder.id;

  return core.db.transaction().execute(async (trx) => {
    const now = clock();
    // Read again under the locks: a store or another correction may have superseded it, or a delete
    // removed it, meanwhile; from here on nothing else changes it or its partition.
    const row = await lockMemory(trx, actor.tenantId, before);
    if (!row || !canSeeMemory(actor, row) || isExpired(row, now)) throw notFound('memory');
    const asked = askedExpiry(input.life ?? {}, now);
    const partition = partitionOfRow(actor.tenantId, row);
    if (row.status !== 'active') {
      throw new AppError(
        'conflict',
        `this memory is superseded by ${row.superseded_by ?? 'another memory'}: correct that one instead`,
      );
    }
    if (contentKey(row.content) === contentKey(content)) {
      throw new AppError('conflict', 'the content is the same as the memory holds: nothing to correct', [
        { path: 'content', message: 'must differ from the current content' },
      ]);
    }
    const twin = await trx
      .selectFrom('memories as m')
      .select('m.id')
      .where((eb) => inPartition(eb, partition, now))
      .where(sql<string>`lower(m.content_key)`, '=', contentKey(content).toLowerCase())
      .where('m.id', '!=', row.id)
      .executeTakeFirst();
    const targetId = twin?.id ?? newId();
    const confidence = Math.max(row.confidence, config.initialConfidence);
    if (!twin) {
      await insertMemory(
        trx,
        {
          tenantId: actor.tenantId,
          id: targetId,
          agentId: row.agent_id,
          content,
          binding: partition.binding,
          anchorId: row.anchor_id,
          sessionId: row.session_id,
          confidence,
          metadata: input.metadata ?? row.metadata,
          embedding,
          now,
          // What it says is corrected; when it happened, how long it is kept and its pin carry over.
          occurredAt: row.occurred_at,
          expiresAt: asked === undefined ? row.expires_at : asked,
          pinned: input.life?.pinned ?? row.pinned,
        },
        { decayPerDay: config.decayPerDay, embedderId },
      );
      await recordEvent(trx, actor, now, {
        action: 'created',
        agentId,
        memoryId: targetId,
        anchorId: row.anchor_id,
        sessionId: row.session_id,
        changes: { binding: row.binding, confidence, corrects: row.id },
      });
    }
    await markSuperseded(trx, actor.tenantId, row.id, targetId, now);
    await recordEvent(trx, actor, now, {
      action: 'corrected',
      agentId,
      memoryId: row.id,
      anchorId: row.anchor_id,
      sessionId: row.session_id,
      changes: { superseded_by: targetId, binding: row.binding, confidence: row.confidence, existing: !!twin },
    });
    const after = await findMemoryRow(trx, actor.tenantId, targetId);
    if (!after) throw new Error('corrected memory vanished');
    return { memory: toMemory(after, now), corrects: row.id };
  });
}
