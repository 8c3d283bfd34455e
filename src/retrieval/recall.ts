import type { Db } from '../db/connect.js';
import type { ScopeStats } from '../db/scope-stats.js';
import { executePrepared } from '../db/prepared.js';
import { actAs } from '../domain/tenancy/agent-binding.js';
import { asRecall } from '../domain/recall-gate.js';
import { subjectIdByExternalId } from '../domain/subjects/anchors.js';
import type { AnchorRef } from '../domain/subjects/anchors.js';
import type { Actor, Core } from '../domain/core.js';
import { toMemory, type Memory, type MemoryRow } from '../domain/records/memories.js';
import { resolvePlacement } from '../domain/store/placement.js';
import { mentionedIn } from '../domain/subjects/session-memories.js';
import { effectiveConfidence } from '../domain/lifecycle/decay.js';
import { AppError, outageError } from '../errors.js';
import type { MemoryFilter } from '../filter/language.js';
import { FUSION, fuse, type ScoreDetails } from './fusion.js';
import { candidatesQuery, type CandidateRow, type PartQuery } from './queries/candidates.js';
import { chosenMemoriesQuery } from './queries/fetch.js';
import { filteredNeighbours, vectorNeighbours } from './queries/nearest.js';
import type { Part, RecallScope, ScopeToRead } from './queries/scope.js';
import {
  PREPARED_SCOPE_MAX,
  scopeReadStatement,
  type ScannedMemory,
  type ScopeReadHeader,
  type ScopeReadInput,
} from './queries/scope-read.js';
import { rankScanned } from './scan-rank.js';
import { namedSpeakers, speakerKey, speakerOf } from '../text/speakers.js';
import { asksAboutTime, statesTime } from './time-cue.js';

export interface RecallInput {
  agentId: string;
  query: string;
  anchor: AnchorRef;
  sessionId?: string | undefined;
  limit: number;
  includeSuperseded: boolean;
  /** Answer as the service would have at this moment (docs/api.md "Time"); now when left out. */
  asOf?: Date | undefined;
  /** Only memories that pass it (src/filter/language.ts), in every leg of the ranking. */
  filter?: MemoryFilter | null | undefined;
}

export type RecallResult = Memory & { score: number; score_details: ScoreDetails };

/** A large part's candidates: its nearest memories (exact scan or HNSW), then the lookup statement. */
async function rankLarge(q: PartQuery, exactScanMax: number): Promise<CandidateRow[]> {
  if (q.scope.filter && q.stats.docs > exactScanMax) {
    const nearest = await filteredNeighbours(q, exactScanMax);
    return (await candidatesQuery({ ...q, nearest: nearest.map((r) => r.id) }).execute(q.db)).rows;
  }
  const plan = q.stats.docs <= exactScanMax ? 'exact' : 'hnsw';
  const neighbours = (db: Db) => vectorNeighbours({ ...q, db, plan });
  // The HNSW settings are local to a transaction, so that they end with it.
  const nearest = plan === 'hnsw' ? await q.db.transaction().execute(neighbours) : await neighbours(q.db);
  return (await candidatesQuery({ ...q, nearest: nearest.map((r) => r.id) }).execute(q.db)).rows;
}

/** A part of the scope with its statistics, and its memories when it was read whole. */
interface ReadPart {
  part: Part;
  stats: ScopeStats;
  df: number[];
  memories: ScannedMemory[] | null;
}

/**
 * Whether a part is ranked at all: the counters count active memories, so with superseded ones asked
 * for it never is skipped. Most tenants have no canon: its counter says so.
 */
const wanted = (stats: ScopeStats, scope: RecallScope): boolean =>
  stats.docs > 0 || scope.includeSuperseded || scope.asOf !== undefined;

/** Whether the scope read reads a part whole, by its counters: the condition the statement holds too. */
const readWhole = (stats: ScopeStats, scope: RecallScope): boolean =>
  stats.docs <= PREPARED_SCOPE_MAX && wanted(stats, scope);

/**
 * The statistics of the given parts of the scope and, for each small enough, its memories, in one
 * prepared statement (./queries/scope-read.ts), with the subject it named resolved into the scope.
 */
async function readScope(q: ScopeReadInput): Promise<{ scope: RecallScope; parts: ReadPart[] }> {
  const { scope, named } = q.toRead;
  const statement = scopeReadStatement(q).compile(q.db);
  // A filter's shape is in the text: prepared, each would stay in every connection's cache.
  const rows = (await (scope.filter ? q.db.executeQuery(statement) : executePrepared(q.db, statement))).rows;
  const headers = new Map<number, ScopeReadHeader>();
  const memories = q.parts.map((): ScannedMemory[] => []);
  for (const r of rows) {
    if (r.id === null) headers.set(r.part, r);
    else memories[r.part]?.push(r);
  }
  const subjectId = headers.get(0)?.subject_id ?? null;
  const resolved = named ? { ...scope, anchorId: subjectId } : scope;
  return {
    scope: resolved,
    parts: q.parts.map((part, i) => {
      const header = headers.get(i);
      if (!header) throw new Error('the scope read returned no statistics for a part');
      const stats = { docs: header.docs, totalLen: header.total_len };
      return { part, stats, df: header.df, memories: readWhole(stats, resolved) ? (memories[i] ?? []) : null };
    }),
  };
}

/** Ranks a part read whole (./scan-rank.ts) with the ranking's constants. */
function rankRead(p: ReadPart, memories: readonly ScannedMemory[], depth: number): CandidateRow[] {
  return rankScanned(memories, {
    docs: p.stats.docs,
    totalLen: p.stats.totalLen,
    df: p.df,
    bm25: FUSION.bm25,
    conceptShare: FUSION.conceptShare,
    previousLexicalShare: FUSION.previousLexicalShare,
    vectorDepth: depth,
    lexicalDepth: depth,
  });
}

/**
 * A small part's candidates as recall ranks them: read whole and ranked in process (the statement
 * reads q.stats again). For tests, beside candidatesQuery.
 */
export async function scanPart(q: PartQuery): Promise<CandidateRow[]> {
  const read = await readScope({ ...q, toRead: { scope: q.scope }, parts: [q.part] });
  const [p] = read.parts;
  if (!p?.memories) throw new Error(`the part is not read whole: above ${PREPARED_SCOPE_MAX} memories, or empty`);
  return rankRead(p, p.memories, q.depth);
}

/** Candidates each side brings per result asked for: enough that fusion can reorder beyond the cut. */
const CANDIDATES_PER_RESULT = 4;
/** The fewest candidates the subject part brings, and the canon part. */
const MIN_SUBJECT_DEPTH = 50;
const MIN_CANON_DEPTH = 10;
/** docs/api.md §5: canon fills at most this share of the results, so policy never crowds out the subject. */
const CANON_SHARE = 0.3;

const candidateDepth = (limit: number): number => Math.max(MIN_SUBJECT_DEPTH, limit * CANDIDATES_PER_RESULT);
const canonDepth = (cap: number): number => Math.max(MIN_CANON_DEPTH, cap * CANDIDATES_PER_RESULT);

export const canonCap = (limit: number): number => Math.max(1, Math.floor(limit * CANON_SHARE));

export function recall(core: Core, actor: Actor, input: RecallInput): Promise<RecallResult[]> {
  // Counted in flight for its whole length, so that bulk writes give way to it (recall-gate.ts).
  return asRecall(() => recallCounted(core, actor, input));
}

async function recallCounted(core: Core, actor: Actor, input: RecallInput): Promise<RecallResult[]> {
  // The scope's private part is the named agent's: naming only agents the key may act as keeps
  // every other agent's private memories out.
  actAs(actor, input.agentId);
  const [embedding] = await core.embedder.embed([input.query], { kind: 'query' });
  if (!embedding) throw new Error('embedder returned no vector');
  const clock = core.clock();
  if (input.asOf && input.asOf > clock) {
    throw new AppError('invalid_request', 'as_of is later than now: recall answers for the present or the past', [
      { path: 'as_of', message: 'must not be in the future' },
    ]);
  }
  const reads = core.reads;
  if (!reads) return recallOn(core.db, core, actor, input, embedding, clock);
  const { db, target } = reads.forRead(actor);
  try {
    const results = await recallOn(db, core, actor, input, embedding, clock);
    reads.count(target);
    return results;
  } catch (error) {
    if (target !== 'replica' || !replicaFailure(error)) throw error;
    // Recall reads what the primary holds as well: a replica that is down or lagging into a
    // conflict costs this recall a second try, not an error.
    core.log.warn({ err: error }, 'read replica failed; recall reads the primary');
    reads.count('fallback');
    return recallOn(core.db, core, actor, input, embedding, clock);
  }
}

/** The replica is away, or cancelled the recall for a conflict with the WAL it replays. */
function replicaFailure(error: unknown): boolean {
  return outageError(error) !== undefined || (error as { code?: unknown } | null)?.code === RECOVERY_CONFLICT;
}
/** SQLSTATE serialization_failure: on a hot standby, "canceling statement due to conflict with recovery". */
const RECOVERY_CONFLICT = '40001';

/**
 * Whose memories the recall sees. Recall never creates an anchor: an unknown external id matches no
 * subject memories. A session of a subject brings that subject's durable memories along, unless an
 * anchor was named.
 */
async function resolveScope(conn: Db, actor: Actor, input: RecallInput, now: Date): Promise<ScopeToRead> {
  const base = {
    tenantId: actor.tenantId,
    agentId: input.agentId,
    includeSuperseded: input.includeSuperseded,
    now,
    ...(input.asOf ? { asOf: input.asOf } : {}),
    ...(input.filter ? { filter: input.filter } : {}),
  };
  const externalId =
    input.sessionId === undefined && input.anchor.anchorId === undefined ? input.anchor.anchorExternalId : undefined;
  if (externalId !== undefined) {
    // The most common scope, a subject named by external id alone: the scope read looks the
    // subject up itself, so the recall's first statement is already the scope's.
    return {
      scope: { ...base, anchorId: null, sessionId: null },
      named: subjectIdByExternalId(actor.tenantId, externalId),
    };
  }
  const { placement, session } = await resolvePlacement(conn, actor.tenantId, input.anchor, input.sessionId, {
    mustBeActive: false,
  });
  // An expired session's memories are gone even before the sweeper deletes them, but for the pinned.
  const sessionId = session?.sessionId ?? null;
  const sessionExpired = session?.expiresAt ? session.expiresAt <= now : false;
  return {
    scope: {
      ...base,
      anchorId: placement.anchorId,
      sessionId,
      sessionExpired,
      mentioned: sessionId && !sessionExpired ? await mentionedIn(conn, actor.tenantId, sessionId) : undefined,
    },
  };
}

/**
 * One recall on one database, the primary or a read replica: it only reads (no audit, no
 * reinforcement, no last-access bookkeeping), so a hot standby can serve it. A pipeline of named
 * steps (docs/architecture.md, "How a recall runs"): resolve the scope, rank its parts, fuse,
 * cap canon, hydrate.
 */
async function recallOn(
  db: Db,
  core: Core,
  actor: Actor,
  input: RecallInput,
  embedding: Float32Array,
  clock: Date,
): Promise<RecallResult[]> {
  const now = input.asOf ?? clock;
  // One connection, but no transaction: each statement reads committed data, and a memory gone
  // between the candidates and their fetch is left out. A scope large enough for HNSW opens one for
  // that part's settings (rankLarge).
  return db.connection().execute(async (conn) => {
    const toRead = await resolveScope(conn, actor, input, clock);
    const { scope, rows } = await rankParts(conn, core, input, toRead, embedding);
    const scored = fuseCandidates(rows, input.query, now);
    const chosen = capCanon(scored, input.limit);
    return hydrate(conn, scope.tenantId, chosen, now);
  });
}

/**
 * Ranks each part of the scope: in each, the nearest memories by vector and the best by BM25 (with
 * a share of their session predecessor's) become candidates, and the session neighbours of the
 * vector candidates join them, since a memory whose neighbour matches may be the answer. A part
 * small enough is read whole by the scope read and ranked in process; a larger one takes the lookup
 * statements. Returned: the candidates and the session neighbours read for their distances.
 */
async function rankParts(
  conn: Db,
  core: Core,
  input: RecallInput,
  toRead: ScopeToRead,
  embedding: Float32Array,
): Promise<{ scope: RecallScope; rows: CandidateRow[] }> {
  const dimensions = core.embedder.dimensions;
  const depths = { subject: candidateDepth(input.limit), canon: canonDepth(canonCap(input.limit)) };
  const text = input.query;
  const { scope, parts } = await readScope({
    db: conn,
    dimensions,
    toRead,
    parts: ['subject', 'canon'],
    text,
    embedding,
  });
  const rows: CandidateRow[] = [];
  for (const p of parts) {
    if (!wanted(p.stats, scope)) continue;
    const depth = depths[p.part];
    if (p.memories) rows.push(...rankRead(p, p.memories, depth));
    else {
      const q = { db: conn, dimensions, scope, part: p.part, stats: p.stats, text, embedding, depth };
      rows.push(...(await rankLarge(q, core.config.recallExactScanMax)));
    }
  }
  return { scope, rows };
}

/**
 * Scores the candidates among the rows ranked (./fusion.ts), best first: each with its session
 * neighbours' and its session's distances (from every row read), the speaker it names against the
 * speakers the query asks about, and whether it states a time the query asks for.
 */
function fuseCandidates(rows: readonly CandidateRow[], query: string, now: Date) {
  const distances = new Map(rows.map((r) => [r.id, r.distance]));
  const candidates = rows.filter((r) => r.candidate);
  const neighbourDistances = (c: CandidateRow): number[] =>
    [c.prev_id, c.next_id].flatMap((id) => {
      const d = id === null ? undefined : distances.get(id);
      return d === undefined ? [] : [d];
    });

  // The two best distances of each session among the rows read: a memory's session score is the
  // best of the others, so the second best when it is the best itself.
  const sessionBest = new Map<string, { id: string; best: number; second: number }>();
  for (const r of rows) {
    if (r.session_id === null) continue;
    const s = sessionBest.get(r.session_id);
    if (!s) sessionBest.set(r.session_id, { id: r.id, best: r.distance, second: Infinity });
    else if (r.distance < s.best) sessionBest.set(r.session_id, { id: r.id, best: r.distance, second: s.best });
    else if (r.distance < s.second) s.second = r.distance;
  }
  const sessionDistance = (c: CandidateRow): number | null => {
    const s = c.session_id === null ? undefined : sessionBest.get(c.session_id);
    const d = s === undefined ? Infinity : s.id === c.id ? s.second : s.best;
    return Number.isFinite(d) ? d : null;
  };

  const speakers = new Map(candidates.map((c) => [c.id, speakerOf(c.metadata_speaker, c.head)]));
  const asked = namedSpeakers(
    query,
    [...speakers.values()].filter((s) => s !== null),
  );
  const timeQuestion = asksAboutTime(query);
  return fuse(
    candidates,
    (c) => {
      const speaker = speakers.get(c.id) ?? null;
      const reinforced = new Date(c.last_reinforced_ms);
      return {
        distance: c.distance,
        neighbourDistances: neighbourDistances(c),
        sessionDistance: sessionDistance(c),
        lexical: c.lexical,
        previousLexical: c.previous_lexical,
        sessionLexical: c.session_lexical,
        otherSpeaker: asked.size > 0 && speaker !== null && !asked.has(speakerKey(speaker)),
        timeCue: timeQuestion && statesTime(c.head),
        lexemes: c.lexemes,
        binding: c.binding,
        effectiveConfidence: effectiveConfidence(c.confidence, c.decay_rate, reinforced, now),
        recentAt: new Date(c.recent_ms),
      };
    },
    now,
  ).sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id));
}

type Scored = ReturnType<typeof fuseCandidates>[number];

/** The best `limit` of the scored, canon taking at most canonCap(limit) of them (docs/api.md §5). */
function capCanon(scored: readonly Scored[], limit: number): Scored[] {
  const cap = canonCap(limit);
  const chosen: Scored[] = [];
  let canonTaken = 0;
  for (const s of scored) {
    if (chosen.length >= limit) break;
    if (s.item.binding === 'canon') {
      if (canonTaken >= cap) continue;
      canonTaken++;
    }
    chosen.push(s);
  }
  return chosen;
}

/** The chosen memories' whole rows, in the order chosen, with their scores; a memory gone meanwhile is left out. */
async function hydrate(conn: Db, tenantId: string, chosen: readonly Scored[], now: Date): Promise<RecallResult[]> {
  if (chosen.length === 0) return [];
  const fetch = chosenMemoriesQuery({ db: conn, tenantId, ids: chosen.map((s) => s.item.id) });
  const rows: MemoryRow[] = (await executePrepared(conn, fetch.compile())).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return chosen.flatMap((s) => {
    const row = byId.get(s.item.id);
    return row ? [{ ...toMemory(row, now), score: s.score, score_details: s.details }] : [];
  });
}
