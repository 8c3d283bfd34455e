import { AppError, notFound } from '../../errors.js';
import { actAs, canSeeMemory } from '../tenancy/agent-binding.js';
import { recordEvent, type AuditChanges } from '../records/audit.js';
import type { Actor, Core } from '../core.js';
import { findMemoryRow, toMemory, type Memory, type MemoryRow } from '../records/memories.js';
import { lockMemory } from '../store/memory-lock.js';

/**
 * A memory's end of life and pin, as a caller gives them (docs/api.md "Expiry and pinning"):
 * `expiresAt` null for never, undefined for not said; `ttlSeconds` the same, relative to now.
 */
export interface LifeInput {
  expiresAt?: Date | null | undefined;
  ttlSeconds?: number | undefined;
  pinned?: boolean | undefined;
}

/** The expiry a caller asked for at `now`: undefined when it said nothing. A past expiry is refused. */
export function askedExpiry(life: LifeInput, now: Date): Date | null | undefined {
  if (life.ttlSeconds !== undefined) return new Date(now.getTime() + life.ttlSeconds * 1000);
  if (life.expiresAt && life.expiresAt <= now) {
    throw new AppError('invalid_request', 'expires_at has passed: a memory must expire in the future', [
      { path: 'expires_at', message: 'must be later than now' },
    ]);
  }
  return life.expiresAt;
}

/** Canon is the tenant's standing policy: it never expires. */
export function refuseCanonExpiry(binding: string, expiry: Date | null | undefined): void {
  if (binding === 'canon' && expiry) {
    throw new AppError('conflict', 'canon cannot expire: delete the entry through DELETE /v1/canon/{id} instead');
  }
}

/**
 * The expiry of a memory stored again: a reinforcement never shortens a memory's life, so it keeps
 * the later of the two expiries, none being the latest. A store that says nothing keeps the memory's.
 */
export function reinforcedExpiry(current: Date | null, asked: Date | null | undefined): Date | null {
  if (asked === undefined) return current;
  if (current === null || asked === null) return null;
  return asked > current ? asked : current;
}

/** Whether `row` has expired at `now`: past its expiry and not pinned. */
export const isExpired = (row: Pick<MemoryRow, 'expires_at' | 'pinned'>, now: Date): boolean =>
  !row.pinned && row.expires_at !== null && row.expires_at <= now;

/**
 * PATCH /v1/memories/{id} without content: pins or unpins a memory, or sets or clears its expiry,
 * in place (not a correction: what it says does not change), audited `updated`. An expired memory
 * is gone, as in the lists: 404.
 */
export async function changeLife(
  core: Core,
  actor: Actor,
  input: { id: string; agentId?: string | undefined } & LifeInput,
): Promise<Memory> {
  const seen = await findMemoryRow(core.db, actor.tenantId, input.id);
  if (!seen || !canSeeMemory(actor, seen)) throw notFound('memory');
  const agentId = actAs(actor, input.agentId ?? seen.agent_id);
  return core.db.transaction().execute(async (trx) => {
    const now = core.clock();
    const row = await lockMemory(trx, actor.tenantId, seen);
    if (!row || !canSeeMemory(actor, row) || isExpired(row, now)) throw notFound('memory');
    const expiresAt = askedExpiry(input, now);
    refuseCanonExpiry(row.binding, expiresAt);
    const changed: { expires_at?: Date | null; pinned?: boolean } = {
      ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
      ...(input.pinned !== undefined ? { pinned: input.pinned } : {}),
    };
    await trx
      .updateTable('memories')
      .set({ ...changed, updated_at: now })
      .where('tenant_id', '=', actor.tenantId)
      .where('id', '=', row.id)
      .execute();
    const changes: AuditChanges = { binding: row.binding };
    if (changed.pinned !== undefined) Object.assign(changes, { pinned_before: row.pinned, pinned: changed.pinned });
    if (changed.expires_at !== undefined) {
      Object.assign(changes, {
        expires_at_before: row.expires_at?.toISOString() ?? null,
        expires_at: changed.expires_at?.toISOString() ?? null,
      });
    }
    await recordEvent(trx, actor, now, {
      action: 'updated',
      agentId,
      memoryId: row.id,
      anchorId: row.anchor_id,
      sessionId: row.session_id,
      changes,
    });
    return toMemory({ ...row, ...changed, updated_at: now }, now);
  });
}
