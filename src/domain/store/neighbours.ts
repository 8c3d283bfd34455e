import type { Db } from '../../db/connect.js';
import { cosineDistance } from '../../db/vector.js';
import { sameSpeaker, speakerOf } from '../../text/speakers.js';
import type { Actor } from '../core.js';
import { MEMORY_ROW_COLUMNS, type MemoryRow } from '../records/memories.js';
import { inPartition, type Partition } from './partition.js';
import type { Placement } from './placement.js';

/*
 * What a store weighs before it writes: the partition's memories nearest the new one, each a
 * possible duplicate to reinforce or a belief it contradicts (store.ts, contradictions.ts, and a
 * batch's set-based read in batch-group.ts).
 */

/** How many of the partition's nearest memories are weighed as duplicates or contradictions. */
export const CANDIDATES = 8;
/**
 * A store that names its speaker reads this many times CANDIDATES and weighs its speaker's among
 * them: in a conversation, about half of the nearest memories are the other party's.
 */
export const SPEAKER_READ_FACTOR = 2;
/** The partition a store into `placement` writes to; null when it names an anchor that does not exist yet. */
export function partitionOf(actor: Actor, agentId: string, placement: Placement): Partition | null {
  if (placement.binding === 'anchored' && placement.anchorId === null) return null;
  return { tenantId: actor.tenantId, agentId, ...placement };
}

/** A memory of the partition near the new one: its row, so that reinforcing it reads nothing more. */
export type Candidate = Omit<MemoryRow, 'anchor_external_id'> & { distance: number };
/** What judging a candidate reads of it: a batch judges the memories it is about to insert too (batch-group.ts). */
export type Near = Pick<Candidate, 'id' | 'content' | 'distance' | 'pinned' | 'metadata'>;

/** Who says a memory (src/text/speakers.ts): its metadata's speaker, else its content's label. */
export const speakerOfMemory = (metadata: Readonly<Record<string, unknown>> | undefined, content: string) =>
  speakerOf(metadata?.['speaker'], content);

/**
 * The partition's memories nearest to `embedding` that may be the same belief as a memory said by
 * `speaker` (null: anyone's): what another speaker said is neither its duplicate nor its
 * contradiction (sameSpeaker).
 */
export async function nearest(
  db: Db,
  p: Partition,
  dimensions: number,
  embedding: Float32Array,
  now: Date,
  speaker: string | null,
): Promise<Candidate[]> {
  const distance = cosineDistance(dimensions, embedding);
  const rows = await db
    .selectFrom('memories as m')
    .select([...MEMORY_ROW_COLUMNS, distance.as('distance')])
    .where((eb) => inPartition(eb, p, now))
    .orderBy(distance)
    .limit(speaker === null ? CANDIDATES : CANDIDATES * SPEAKER_READ_FACTOR)
    .execute();
  if (speaker === null) return rows;
  return rows.filter((c) => sameSpeaker(speaker, speakerOfMemory(c.metadata, c.content))).slice(0, CANDIDATES);
}
