import { identityText } from '../../beliefs/near-duplicate.js';
import type { ContradictionDetector } from '../../beliefs/contradiction-detector.js';
import { createContradictionDetector } from '../../beliefs/detector.js';
import type { Actor, Core } from '../core.js';
import { CANDIDATES, nearest, partitionOf, type Candidate, type Near } from './neighbours.js';
import { resolvePlacement, type Placement } from './placement.js';
import type { StoreInput } from './store.js';

/*
 * Which of the nearest memories a new one contradicts: judged before the lock by a model (one store,
 * or one ingest's facts together), under it by the deterministic detector for what arrived since.
 */

/** Verdicts for the partition's nearest memories as they stand before the lock: id → contradicted. */
export async function judgeContradictions(
  core: Core,
  actor: Actor,
  input: StoreInput,
  content: string,
  embedding: Float32Array,
  speaker: string | null,
): Promise<Map<string, boolean>> {
  const placement =
    input.placed ??
    (await resolvePlacement(core.db, actor.tenantId, input.anchor, input.sessionId, { mustBeActive: false })).placement;
  const partition = partitionOf(actor, input.agentId, placement);
  if (!partition) return new Map();
  const candidates = await nearest(core.db, partition, core.embedder.dimensions, embedding, core.clock(), speaker);
  return verdicts(core.contradictions, content, candidates);
}

/** Not a model: what judges under the lock whatever a model's verdicts do not cover. */
export const deterministic = createContradictionDetector();

export async function withLateArrivals(
  prejudged: ReadonlyMap<string, boolean>,
  content: string,
  candidates: Candidate[],
): Promise<Map<string, boolean>> {
  const late = candidates.filter((c) => !prejudged.has(c.id));
  return new Map([...prejudged, ...(await verdicts(deterministic, content, late))]);
}

/** The detector's verdicts on the candidates that are not the same text: id → contradicted. */
export async function verdicts(
  detector: ContradictionDetector,
  content: string,
  candidates: readonly Near[],
): Promise<Map<string, boolean>> {
  const others = candidates.filter((c) => identityText(c.content) !== identityText(content));
  if (others.length === 0) return new Map();
  const answers = await detector.contradicted(
    content,
    others.map((c) => c.content),
  );
  return new Map(others.map((c, i) => [c.id, answers[i]?.contradicts === true]));
}

/** A fact of one ingest, embedded, before it is stored. */
export interface BatchFact {
  readonly content: string;
  readonly embedding: Float32Array;
  /** Who says it (speakerOfMemory); null for no one in particular. */
  readonly speaker: string | null;
}

/**
 * The verdicts of one ingest's facts, judged together before any is stored: each fact against the
 * partition's nearest memories and against the nearest facts said before it in the same ingest
 * (stored by the time it is). An earlier fact is named by its index: its id is known once stored.
 */
export interface BatchVerdicts {
  readonly stored: ReadonlyMap<string, boolean>[];
  readonly earlier: ReadonlyMap<number, boolean>[];
}

/** undefined when the detector needs no I/O (it judges under the lock) or cannot judge a batch. */
export async function judgeBatch(
  core: Core,
  actor: Actor,
  agentId: string,
  placement: Placement,
  facts: readonly BatchFact[],
): Promise<BatchVerdicts | undefined> {
  const detector = core.contradictions;
  if (detector.local || !detector.contradictedMany || facts.length === 0) return undefined;
  const partition = partitionOf(actor, agentId, placement);
  const now = core.clock();
  const pools = await Promise.all(
    facts.map(async (fact, i) => {
      const identity = identityText(fact.content);
      const stored = partition
        ? await nearest(core.db, partition, core.embedder.dimensions, fact.embedding, now, fact.speaker)
        : [];
      const earlier = facts
        .slice(0, i)
        .map((e, j) => ({ id: String(j), content: e.content, distance: 1 - dot(fact.embedding, e.embedding) }));
      return [...stored.map((c) => ({ ...c, earlier: false })), ...earlier.map((c) => ({ ...c, earlier: true }))]
        .filter((c) => identityText(c.content) !== identity)
        .sort((a, b) => a.distance - b.distance)
        .slice(0, CANDIDATES);
    }),
  );
  const answers = await detector.contradictedMany(
    facts.map((fact, i) => ({ newer: fact.content, candidates: (pools[i] ?? []).map((c) => c.content) })),
  );
  return {
    stored: pools.map(
      (pool, i) => new Map(pool.flatMap((c, k) => (c.earlier ? [] : [[c.id, answers[i]?.[k]?.contradicts === true]]))),
    ),
    earlier: pools.map(
      (pool, i) =>
        new Map(pool.flatMap((c, k) => (c.earlier ? [[Number(c.id), answers[i]?.[k]?.contradicts === true]] : []))),
    ),
  };
}

/** The prejudged verdicts of fact `i` once the facts before it are stored, as `ids` (by fact; none if not stored). */
export function prejudgedFor(
  batch: BatchVerdicts,
  i: number,
  ids: readonly (string | undefined)[],
): Map<string, boolean> {
  const judged = new Map(batch.stored[i]);
  for (const [j, contradicts] of batch.earlier[i] ?? []) {
    const id = ids[j];
    // A fact that reinforced a stored memory judged on its own keeps that memory's verdict.
    if (id !== undefined && !judged.has(id)) judged.set(id, contradicts);
  }
  return judged;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}
