import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { Binding } from '../config.js';
import type { Db } from '../db/connect.js';
import { recallCandidates, type CandidateRow } from '../db/candidates.js';
import { scopeReadQuery, type ScannedMemory, type ScopeReadHeader } from '../db/scope-read.js';
import type { Database } from '../db/schema.js';
import { executePrepared } from '../db/prepared.js';
import { anyOf } from '../db/arrays.js';
import { NAMED_SUBJECT, type ScopeStats, type ScopeUnit } from '../db/scope-stats.js';
import { contextDistanceTo, cosineDistance, enableIterativeScan, queryVector, restoreSorting } from '../db/vector.js';
import { actAs } from '../domain/agent-binding.js';
import { subjectIdByExternalId, type AnchorRef } from '../domain/anchors.js';
import type { Actor, Core } from '../domain/core.js';
import { MEMORY_COLUMNS, memoriesWithAnchor, toMemory, type Memory, type MemoryRow } from '../domain/memories.js';
import { resolvePlacement } from '../domain/placement.js';
import { mentionedIn } from '../domain/session-memories.js';
import { effectiveConfidence } from '../domain/decay.js';
import { outageError } from '../errors.js';
import { FUSION, fuse, type ScoreDetails } from './fusion.js';
import { rankScanned } from './scan-rank.js';
import { namedSpeakers, SPEAKER_HEAD_CHARS, speakerKey, speakerOf } from './speakers.js';
import { asksAboutTime, statesTime, TIME_CUE_CHARS } from './time-cue.js';

export interface RecallInput {
  agentId: string;
  query: string;
  anchor: AnchorRef;
  sessionId?: string | undefined;
  limit: number;
  includeSuperseded: boolean;
}

export type RecallResult = Memory & { score: number; score_details: ScoreDetails };

/** Which memories a recall may see, resolved to ids; enforced in SQL by scopeFilter. */
export interface RecallScope {
  tenantId: string;
  agentId: string;
  /** The subject whose anchored memories are visible; null for none. */
  anchorId: string | null;
  /** The session whose session memories are visible; null for none. */
  sessionId: string | null;
  /**
   * Session memories formed in an earlier session of the subject and stored again in this one
   * (memory_mentions): visible with the session's own. Their statistics are kept in the sessions
   * they were formed in, whose units the scope's statistics then include (an approximation BM25
   * can afford).
   */
  mentioned?: { memoryIds: readonly string[]; formedIn: readonly string[] };
  includeSuperseded: boolean;
}

type Part = 'subject' | 'canon';
type MemoryEb = ExpressionBuilder<Database & { m: Database['memories'] }, 'm'>;

/**
 * A binding as a literal in the statement's text, not a parameter: the partial indexes (private
 * memories by agent, canon) serve only statements whose text implies their predicate, which a
 * prepared statement's plan, made without the values, cannot know of a parameter.
 */
const binding = (b: Binding) => sql.lit(b);

/**
 * The visibility rule of docs/api.md §5, as SQL: never another agent's private memory, anchor or
 * tenant. `subject` is the subject whose anchored memories are visible: the scope's, or a subquery
 * of the statement that resolves it (NAMED_SUBJECT).
 */
export function scopeFilter(
  eb: MemoryEb,
  scope: RecallScope,
  part: Part,
  subject: string | Expression<string | null> | null = scope.anchorId,
): Expression<SqlBool> {
  const visible =
    part === 'canon'
      ? [eb('m.binding', '=', binding('canon'))]
      : [
          eb.and([eb('m.binding', '=', binding('private')), eb('m.agent_id', '=', scope.agentId)]),
          ...(subject !== null
            ? [eb.and([eb('m.binding', '=', binding('anchored')), eb('m.anchor_id', '=', subject)])]
            : []),
          ...(scope.sessionId
            ? [
                eb.and([
                  eb('m.binding', '=', binding('session')),
                  scope.mentioned && scope.mentioned.memoryIds.length > 0
                    ? eb.or([
                        eb('m.session_id', '=', scope.sessionId),
                        anyOf(sql.ref('m.id'), scope.mentioned.memoryIds),
                      ])
                    : eb('m.session_id', '=', scope.sessionId),
                ]),
              ]
            : []),
        ];
  return eb.and([
    eb('m.tenant_id', '=', scope.tenantId),
    ...(scope.includeSuperseded ? [] : [eb('m.status', '=', sql.lit('active'))]),
    eb.or(visible),
  ]);
}

/**
 * The vector side's SQL: ordered by cosine distance, so HNSW can serve it. Exported for EXPLAIN in
 * tests. The index holds the memories' own vectors, so this finds by those alone; the candidate
 * statement then ranks what it found with the window vectors too.
 */
export function nearestQuery(
  trx: Db,
  dimensions: number,
  scope: RecallScope,
  part: Part,
  query: Float32Array,
  depth: number,
) {
  return (
    trx
      .selectFrom('memories as m')
      .select(['m.id', cosineDistance(dimensions, query).as('distance')])
      .where((eb) => scopeFilter(eb, scope, part))
      // By the output column, so the query vector is sent and parsed once (HNSW still serves it).
      .orderBy('distance')
      .limit(depth)
  );
}

/**
 * The vector side by an exact scan of the scope: the distances are computed in a materialized CTE,
 * which no index can order, so the scope's own indexes find its memories. Exported for EXPLAIN in tests.
 */
export function exactNearestQuery(
  trx: Db,
  dimensions: number,
  scope: RecallScope,
  part: Part,
  query: Float32Array,
  depth: number,
) {
  // The window vectors rank here as in the candidate statements (FUSION.windowSemanticShare), so an
  // exact scan brings the same candidates as the one-pass statement; the query vector is parsed once.
  const distance = contextDistanceTo(dimensions, sql`(SELECT v FROM query_vector)`, FUSION.windowSemanticShare);
  return trx
    .with('query_vector', (db) => db.selectNoFrom(queryVector(dimensions, query).as('v')))
    .with(
      (cte) => cte('scoped').materialized(),
      (db) =>
        db
          .selectFrom('memories as m')
          .select(['m.id', distance.as('distance')])
          .where((eb) => scopeFilter(eb, scope, part)),
    )
    .selectFrom('scoped')
    .select(['scoped.id', 'scoped.distance'])
    .orderBy('scoped.distance')
    .orderBy('scoped.id')
    .limit(depth);
}

/**
 * How the vector side runs: `exact` scans the scope, `hnsw` walks the HNSW index with the scope as
 * a filter, `planner` leaves the choice to the planner's statistics.
 */
export type VectorPlan = 'exact' | 'hnsw' | 'planner';

/**
 * Parts of a scope (the subject's memories, canon) of at most this many memories (counted active)
 * are read whole by the statement that reads the scope's statistics (src/db/scope-read.ts) and
 * ranked in process (./scan-rank.ts): for a typical subject that one prepared statement is all the
 * ranking costs the database. Larger parts take the bounded lookup statements, planned for their
 * values, where planning is the lesser cost and the choice between the scope's indexes and the
 * full-text index matters. With superseded memories asked for, the read includes those too.
 */
export const PREPARED_SCOPE_MAX = 2000;

/**
 * Nearest neighbours by cosine distance within the scope, nearest first. With iterative scans on, a
 * filtered HNSW scan keeps going until it has `depth` rows that pass the filter (or the scope is exhausted).
 */
export async function vectorNeighbours(
  trx: Db,
  dimensions: number,
  scope: RecallScope,
  part: Part,
  query: Float32Array,
  depth: number,
  plan: VectorPlan = 'planner',
): Promise<{ id: string; distance: number }[]> {
  if (plan === 'exact') return exactNearestQuery(trx, dimensions, scope, part, query, depth).execute();
  await enableIterativeScan(trx, plan === 'hnsw');
  const rows = await nearestQuery(trx, dimensions, scope, part, query, depth).execute();
  if (plan === 'hnsw') await restoreSorting(trx);
  // relaxed_order lets an iterative HNSW scan return rows slightly out of distance order.
  return rows.sort((a, b) => a.distance - b.distance);
}

/** The units a part of the scope is made of (src/db/scope-stats.ts). */
export function scopeUnits(scope: RecallScope, part: Part): ScopeUnit[] {
  if (part === 'canon') return [{ binding: 'canon' }];
  return [
    { binding: 'private', agentId: scope.agentId },
    ...(scope.anchorId ? [{ binding: 'anchored' as const, anchorId: scope.anchorId }] : []),
    ...(scope.sessionId ? [{ binding: 'session' as const, sessionId: scope.sessionId }] : []),
    ...(scope.mentioned?.formedIn ?? []).map((sessionId) => ({ binding: 'session' as const, sessionId })),
  ];
}

/** How many memories the lexical side may read per part (src/db/candidates.ts, lexicalBudget). */
export const LEXICAL_BUDGET = 1000;

/** One part of a recall's scope to rank: what the scope read and the lookup statements are built from. */
export interface PartQuery {
  db: Db;
  dimensions: number;
  scope: RecallScope;
  part: Part;
  stats: ScopeStats;
  text: string;
  embedding: Float32Array;
  /** How many candidates each side brings. */
  depth: number;
}

/** How much of each candidate's content to return: enough for a speaker's label and the time cue. */
const HEAD_CHARS = Math.max(SPEAKER_HEAD_CHARS, TIME_CUE_CHARS);

/** The lexical side and the context of the candidates of a large part (src/db/candidates.ts). Exported for EXPLAIN in tests. */
export function candidatesQuery(q: PartQuery, nearest: readonly string[]) {
  return recallCandidates({
    scope: () => q.db.selectFrom('memories as m').where((eb) => scopeFilter(eb, q.scope, q.part)),
    tenantId: q.scope.tenantId,
    units: scopeUnits(q.scope, q.part),
    stats: q.stats,
    text: q.text,
    embedding: q.embedding,
    dimensions: q.dimensions,
    lexicalDepth: q.depth,
    previousLexicalShare: FUSION.previousLexicalShare,
    conceptShare: FUSION.conceptShare,
    windowShare: FUSION.windowSemanticShare,
    bm25: FUSION.bm25,
    headChars: HEAD_CHARS,
    nearest,
    lexicalBudget: LEXICAL_BUDGET,
  });
}

/** A large part's candidates: its nearest memories (exact scan or HNSW), then the lookup statement. */
async function rankLarge(q: PartQuery, exactScanMax: number): Promise<CandidateRow[]> {
  const plan = q.stats.docs <= exactScanMax ? 'exact' : 'hnsw';
  const neighbours = (d: Db) => vectorNeighbours(d, q.dimensions, q.scope, q.part, q.embedding, q.depth, plan);
  // The HNSW settings are local to a transaction, so that they end with it.
  const nearest = plan === 'hnsw' ? await q.db.transaction().execute(neighbours) : await neighbours(q.db);
  return (
    await candidatesQuery(
      q,
      nearest.map((r) => r.id),
    ).execute(q.db)
  ).rows;
}

/** A scope as recall resolved it before reading: `named` is a subject the scope read looks up by external id. */
export interface ScopeToRead {
  scope: RecallScope;
  named?: ReturnType<typeof subjectIdByExternalId>;
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
const wanted = (stats: ScopeStats, scope: RecallScope): boolean => stats.docs > 0 || scope.includeSuperseded;

/** Whether the scope read reads a part whole, by its counters: the condition the statement holds too. */
const readWhole = (stats: ScopeStats, scope: RecallScope): boolean =>
  stats.docs <= PREPARED_SCOPE_MAX && wanted(stats, scope);

/** The statement of readScope (src/db/scope-read.ts). Exported for EXPLAIN in tests. */
export function scopeReadStatement(
  db: Db,
  dimensions: number,
  { scope, named }: ScopeToRead,
  parts: readonly Part[],
  text: string,
  embedding: Float32Array,
) {
  const subject = sql<string | null>`(SELECT id FROM subject)`;
  return scopeReadQuery({
    tenantId: scope.tenantId,
    parts: parts.map((part) => ({
      scope: () =>
        db.selectFrom('memories as m').where((eb) => scopeFilter(eb, scope, part, named ? subject : scope.anchorId)),
      units: [...scopeUnits(scope, part), ...(named && part === 'subject' ? [NAMED_SUBJECT] : [])],
      readEmpty: scope.includeSuperseded,
    })),
    subject: named ?? sql`NULL`,
    maxDocs: PREPARED_SCOPE_MAX,
    text,
    embedding,
    dimensions,
    windowShare: FUSION.windowSemanticShare,
    headChars: HEAD_CHARS,
  });
}

/**
 * The statistics of the given parts of the scope and, for each small enough, its memories, in one
 * prepared statement (src/db/scope-read.ts), with the subject it named resolved into the scope.
 */
async function readScope(
  db: Db,
  dimensions: number,
  toRead: ScopeToRead,
  parts: readonly Part[],
  text: string,
  embedding: Float32Array,
): Promise<{ scope: RecallScope; parts: ReadPart[] }> {
  const { scope, named } = toRead;
  const statement = scopeReadStatement(db, dimensions, toRead, parts, text, embedding);
  const rows = (await executePrepared(db, statement.compile(db))).rows;
  const headers = new Map<number, ScopeReadHeader>();
  const memories = parts.map((): ScannedMemory[] => []);
  for (const r of rows) {
    if (r.id === null) headers.set(r.part, r);
    else memories[r.part]?.push(r);
  }
  const subjectId = headers.get(0)?.subject_id ?? null;
  const resolved = named ? { ...scope, anchorId: subjectId } : scope;
  return {
    scope: resolved,
    parts: parts.map((part, i) => {
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
  const [p] = (await readScope(q.db, q.dimensions, { scope: q.scope }, [q.part], q.text, q.embedding)).parts;
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

export async function recall(core: Core, actor: Actor, input: RecallInput): Promise<RecallResult[]> {
  // The scope's private part is the named agent's: naming only agents the key may act as keeps
  // every other agent's private memories out.
  actAs(actor, input.agentId);
  const [embedding] = await core.embedder.embed([input.query], { kind: 'query' });
  if (!embedding) throw new Error('embedder returned no vector');
  const now = core.clock();
  const reads = core.reads;
  if (!reads) return recallOn(core.db, core, actor, input, embedding, now);
  const { db, target } = reads.forRead(actor);
  try {
    const results = await recallOn(db, core, actor, input, embedding, now);
    reads.count(target);
    return results;
  } catch (error) {
    if (target !== 'replica' || !replicaFailure(error)) throw error;
    // Recall reads what the primary holds as well: a replica that is down or lagging into a
    // conflict costs this recall a second try, not an error.
    core.log.warn({ err: error }, 'read replica failed; recall reads the primary');
    reads.count('fallback');
    return recallOn(core.db, core, actor, input, embedding, now);
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
  const base = { tenantId: actor.tenantId, agentId: input.agentId, includeSuperseded: input.includeSuperseded };
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
  // An expired session's memories are gone even before the sweeper deletes them.
  const sessionId = session && !(session.expiresAt && session.expiresAt <= now) ? session.sessionId : null;
  return {
    scope: {
      ...base,
      anchorId: placement.anchorId,
      sessionId,
      mentioned: sessionId ? await mentionedIn(conn, actor.tenantId, sessionId) : undefined,
    },
  };
}

/**
 * One recall on one database, the primary or a read replica: it only reads (no audit, no
 * reinforcement, no last-access bookkeeping), so a hot standby can serve it.
 */
async function recallOn(
  db: Db,
  core: Core,
  actor: Actor,
  input: RecallInput,
  embedding: Float32Array,
  now: Date,
): Promise<RecallResult[]> {
  // One connection, but no transaction: each statement reads committed data, and a memory gone
  // between the candidates and their fetch is left out. A scope large enough for HNSW opens one for
  // that part's settings (rankLarge).
  return db.connection().execute(async (conn) => {
    const dims = core.embedder.dimensions;
    const cap = canonCap(input.limit);
    const depths = { subject: candidateDepth(input.limit), canon: canonDepth(cap) };
    // The parts of the scope: in each, the nearest memories by vector and the best by BM25 (with a
    // share of their session predecessor's) become candidates, and the session neighbours of the
    // vector candidates join them, since a memory whose neighbour matches may be the answer.
    const { scope, parts } = await readScope(
      conn,
      dims,
      await resolveScope(conn, actor, input, now),
      ['subject', 'canon'],
      input.query,
      embedding,
    );
    const fetched: CandidateRow[] = [];
    for (const p of parts) {
      if (!wanted(p.stats, scope)) continue;
      const depth = depths[p.part];
      if (p.memories) fetched.push(...rankRead(p, p.memories, depth));
      else {
        const q = {
          db: conn,
          dimensions: dims,
          scope,
          part: p.part,
          stats: p.stats,
          text: input.query,
          embedding,
          depth,
        };
        fetched.push(...(await rankLarge(q, core.config.recallExactScanMax)));
      }
    }
    const distances = new Map(fetched.map((r) => [r.id, r.distance]));
    const candidates = fetched.filter((r) => r.candidate);
    const neighbourDistances = (c: CandidateRow): number[] =>
      [c.prev_id, c.next_id].flatMap((id) => {
        const d = id === null ? undefined : distances.get(id);
        return d === undefined ? [] : [d];
      });

    // The two best distances of each session among the rows read: a memory's session score is the
    // best of the others, so the second best when it is the best itself.
    const sessionBest = new Map<string, { id: string; best: number; second: number }>();
    for (const r of fetched) {
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
      input.query,
      [...speakers.values()].filter((s) => s !== null),
    );
    const timeQuestion = asksAboutTime(input.query);
    const scored = fuse(
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
          lastReinforcedAt: reinforced,
        };
      },
      now,
    ).sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id));

    const chosen: typeof scored = [];
    let canonTaken = 0;
    for (const s of scored) {
      if (chosen.length >= input.limit) break;
      if (s.item.binding === 'canon') {
        if (canonTaken >= cap) continue;
        canonTaken++;
      }
      chosen.push(s);
    }
    if (chosen.length === 0) return [];
    const fetch = memoriesWithAnchor(conn)
      .select(MEMORY_COLUMNS)
      .where('m.tenant_id', '=', scope.tenantId)
      .where(
        anyOf(
          sql.ref('m.id'),
          chosen.map((s) => s.item.id),
        ),
      );
    const rows: MemoryRow[] = (await executePrepared(conn, fetch.compile())).rows;
    const byId = new Map(rows.map((r) => [r.id, r]));
    return chosen.flatMap((s) => {
      const row = byId.get(s.item.id);
      return row ? [{ ...toMemory(row, now), score: s.score, score_details: s.details }] : [];
    });
  });
}
