import type { AuditInput } from '../records/audit.js';
import type { NewMemory } from '../records/memories.js';
import type { Partition } from './partition.js';
import type { StoreInput } from './store.js';

/**
 * A memory a store creates, as storeFact and a batch's set-based group (batch-group.ts) both write
 * it: one description of its row and its audit event, so that the two paths cannot drift apart.
 */
export interface Creation {
  readonly id: string;
  readonly input: Pick<StoreInput, 'agentId' | 'metadata' | 'occurredAt' | 'life'>;
  readonly partition: Partition;
  /** The content as stored (trimmed). */
  readonly content: string;
  readonly embedding: Float32Array;
  readonly windowEmbedding: Float32Array | undefined;
  readonly confidence: number;
  readonly now: Date;
  readonly expiresAt: Date | null | undefined;
}

export function createdMemory(c: Creation): NewMemory {
  return {
    tenantId: c.partition.tenantId,
    id: c.id,
    agentId: c.input.agentId,
    content: c.content,
    binding: c.partition.binding,
    anchorId: c.partition.anchorId,
    sessionId: c.partition.sessionId,
    confidence: c.confidence,
    metadata: c.input.metadata,
    embedding: c.embedding,
    windowEmbedding: c.windowEmbedding,
    now: c.now,
    occurredAt: c.input.occurredAt,
    expiresAt: c.expiresAt,
    pinned: c.input.life?.pinned,
  };
}

/** Its `created` audit event; `supersedes` and `contradicts` are what it was judged to contradict. */
export function createdEvent(c: Creation, supersedes: readonly string[], contradicts: readonly string[]): AuditInput {
  return {
    action: 'created',
    agentId: c.input.agentId,
    memoryId: c.id,
    anchorId: c.partition.anchorId,
    sessionId: c.partition.sessionId,
    changes: {
      binding: c.partition.binding,
      confidence: c.confidence,
      ...(supersedes.length > 0 ? { supersedes: supersedes.length } : {}),
      ...(contradicts.length > 0 ? { contradicts: [...contradicts] } : {}),
      ...(c.input.life?.pinned ? { pinned: true } : {}),
      ...(c.expiresAt ? { expires_at: c.expiresAt.toISOString() } : {}),
    },
  };
}
