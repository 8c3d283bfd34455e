import type { z } from 'zod';
import type { Actor, Core } from '../domain/core.js';
import type { BatchItem } from '../domain/store/batch.js';
import type { LifeInput } from '../domain/lifecycle/life.js';
import { measuredBatch } from '../measured.js';
import { storedMemory } from '../domain/store/store.js';
import { AppError, toProblem } from '../errors.js';
import { StoreMemoryBody } from '../schemas/inputs.js';
import type { StoreBatchResponse } from '../schemas/objects.js';
import { parseInput } from '../schemas/parse.js';

/** A body's expiry and pin (src/domain/lifecycle/life.ts). */
export const lifeOf = (body: {
  expires_at?: string | null | undefined;
  ttl_seconds?: number | undefined;
  pinned?: boolean | undefined;
}): LifeInput => ({
  expiresAt: body.expires_at === undefined ? undefined : body.expires_at === null ? null : new Date(body.expires_at),
  ttlSeconds: body.ttl_seconds,
  pinned: body.pinned,
});

/** A store's body (POST /v1/memories, or one item of a batch) as the domain takes it. */
export const storeInputOf = (item: z.output<typeof StoreMemoryBody>): BatchItem => ({
  agentId: item.agent_id,
  content: item.content,
  anchor: { anchorId: item.anchor_id, anchorExternalId: item.anchor_external_id },
  sessionId: item.session_id,
  metadata: item.metadata,
  occurredAt: item.occurred_at === undefined ? undefined : new Date(item.occurred_at),
  life: lifeOf(item),
});

/**
 * A batch's items stored, answered as `POST /v1/memories/batch` answers: each item is checked on its
 * own (a bad one fails alone), the rest stored by storeBatch. The route and the batch job call it,
 * so that a job's result is the synchronous call's body.
 */
export async function storeBatchItems(
  core: Core,
  actor: Actor,
  items: readonly unknown[],
): Promise<z.input<typeof StoreBatchResponse>> {
  const checked = items.map((raw): BatchItem | AppError => {
    try {
      return storeInputOf(parseInput(StoreMemoryBody, raw, 'body'));
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
  });
  const stored = await measuredBatch(
    core,
    actor,
    checked.filter((c): c is BatchItem => !(c instanceof AppError)),
  );
  let next = 0;
  const results = checked.map((c) => {
    const r = c instanceof AppError ? { ok: false as const, error: c } : stored[next++];
    if (!r) throw new Error('the batch answered fewer results than items');
    return r.ok ? { outcome: r.result.outcome, memory: storedMemory(r.result) } : { problem: toProblem(r.error) };
  });
  return { results };
}
