import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { dropVectorIndex, ensureVectorIndex, toVectorLiteral } from '../../src/db/vector.js';
import type { Core } from '../../src/domain/core.js';
import { contentKey } from '../../src/domain/text.js';
import { windowText } from '../../src/domain/store/windows.js';
import { conceptsOf } from '../../src/text/concepts.js';
import { progressBar } from '../../src/cli/progress.js';
import { orgName, type Plan, type Sizes } from './plan.js';
import { memorySeeds, plannedMemories, type MemorySeed } from './rows.js';

/** Rows per INSERT: large enough that a round trip is cheap beside the rows, small enough for memory. */
const BATCH = 2_000;
const MARKER_KEY = 'bench_scale';

export interface BuildTimes {
  load_seconds: number;
  index_seconds: number;
  analyze_seconds: number;
}

/** What a finished build leaves in service_settings, so that a later run can reuse the dataset. */
export interface Marker extends BuildTimes {
  sizes: Sizes;
  embedder: string;
  tenant_id: string;
  memories: number;
  built_at: string;
}

const seconds = (since: number): number => Math.round((performance.now() - since) / 100) / 10;

export async function readMarker(db: Db): Promise<Marker | undefined> {
  const row = await db.selectFrom('service_settings').select('value').where('key', '=', MARKER_KEY).executeTakeFirst();
  return row ? (row.value as unknown as Marker) : undefined;
}

/**
 * Clears an earlier (or half-finished) benchmark dataset. Refuses a database that holds any other
 * tenant: the benchmark must never delete someone's memories.
 */
export async function clearDataset(db: Db): Promise<void> {
  const foreign = await db
    .selectFrom('tenants')
    .select('org_name')
    .where('org_name', 'not like', 'bench-scale-%')
    .limit(1)
    .executeTakeFirst();
  if (foreign) throw new Error("the database holds tenants other than the benchmark's; build into an empty database");
  await db.deleteFrom('service_settings').where('key', '=', MARKER_KEY).execute();
  // A DELETE, not a TRUNCATE, so that triggers on memories see the rows go.
  await db.deleteFrom('tenants').where('org_name', 'like', 'bench-scale-%').execute();
}

/**
 * `last` holds the content of each session's latest memory so far, across batches: a session memory
 * gets its window vector as the store path makes it (src/domain/store/windows.ts), and every memory its
 * concepts (src/text/concepts.ts).
 */
async function insertMemories(db: Db, core: Core, seeds: MemorySeed[], last: Map<string, string>): Promise<void> {
  const vectors = await core.embedder.embed(seeds.map((s) => s.content));
  const windowTexts = seeds.map((s) => {
    if (!s.sessionId) return null;
    const previous = last.get(s.sessionId);
    last.set(s.sessionId, s.content);
    return previous === undefined ? null : windowText(previous, s.content);
  });
  const wanted = windowTexts.flatMap((t) => (t === null ? [] : [t]));
  const made = await core.embedder.embed(wanted);
  let next = 0;
  const windows = windowTexts.map((t) => (t === null ? null : toVectorLiteral(made[next++] as Float32Array)));
  const decay = core.config.decayPerDay;
  const column = <T>(f: (s: MemorySeed, i: number) => T): T[] => seeds.map(f);
  // The columns insertMemory writes, as arrays: one statement per batch, still one INSERT per row
  // as far as triggers and the seq identity are concerned, in the order given.
  await sql`
    INSERT INTO memories (tenant_id, id, agent_id, content, content_key, concepts, binding, anchor_id, session_id,
      confidence, decay_rate, superseded_by, metadata, embedding, window_embedding, embedder, created_at, updated_at,
      last_reinforced_at)
    SELECT u.tenant_id, u.id, u.agent_id, u.content, u.content_key, u.concepts, u.binding, u.anchor_id, u.session_id,
      u.confidence, u.decay_rate, NULL, u.metadata, u.embedding::vector, u.window_embedding::vector, ${core.embedder.id},
      u.created_at, u.created_at, u.created_at
    FROM unnest(
      ${column((s) => s.tenantId)}::uuid[], ${column((s) => s.id)}::uuid[], ${column((s) => s.agentId)}::text[],
      ${column((s) => s.content)}::text[], ${column((s) => contentKey(s.content))}::text[],
      ${column((s) => conceptsOf(s.content))}::text[], ${column((s) => s.binding)}::text[], ${column((s) => s.anchorId)}::uuid[], ${column((s) => s.sessionId)}::uuid[],
      ${column((s) => (s.binding === 'canon' ? 1 : core.config.initialConfidence))}::float8[],
      ${column((s) => decay[s.binding])}::float8[],
      ${column((_, i) => toVectorLiteral(vectors[i] as Float32Array))}::text[], ${windows}::text[],
      ${column((s) => s.createdAt.toISOString())}::timestamptz[], ${column((s) => s.metadata)}::jsonb[]
    ) WITH ORDINALITY AS u(tenant_id, id, agent_id, content, content_key, concepts, binding, anchor_id, session_id,
      confidence, decay_rate, embedding, window_embedding, created_at, metadata, n)
    ORDER BY u.n`.execute(db);
}

async function insertScaffolding(db: Db, core: Core, plan: Plan, now: Date): Promise<void> {
  await db
    .insertInto('tenants')
    .values(plan.tenantIds.map((id, i) => ({ id, org_name: orgName(i), created_at: now })))
    .execute();
  for (let i = 0; i < plan.subjects.length; i += BATCH) {
    const rows = plan.subjects.slice(i, i + BATCH).map((s) => ({
      tenant_id: plan.tenantIds[s.tenant] as string,
      id: s.id,
      kind: 'subject',
      external_id: s.externalId,
      name: null,
      attributes: '{}',
      created_at: s.sessions[0]?.startedAt ?? now,
    }));
    await db.insertInto('entities').values(rows).execute();
  }
  const sessions = plan.subjects.flatMap((s) =>
    s.sessions.map((x) => {
      const endedAt = new Date(x.startedAt.getTime() + 3_600_000);
      // As endSession sets it: the session-bound memories live on this long after the end.
      const expiresAt = new Date(endedAt.getTime() + core.config.sessionTtlHours * 3_600_000);
      return {
        tenant_id: plan.tenantIds[s.tenant] as string,
        id: x.id,
        agent_id: x.agentId,
        anchor_id: s.id,
        status: x.active ? ('active' as const) : ('ended' as const),
        metadata: '{}',
        started_at: x.startedAt,
        ended_at: x.active ? null : endedAt,
        expires_at: x.active ? null : expiresAt,
      };
    }),
  );
  for (let i = 0; i < sessions.length; i += BATCH) {
    await db
      .insertInto('sessions')
      .values(sessions.slice(i, i + BATCH))
      .execute();
  }
}

/**
 * Builds the dataset of a plan: tenants, subjects and sessions, then every memory through batched
 * INSERTs with the HNSW index dropped, then the index and fresh statistics. Steps that keep derived
 * data in step with memories belong at the end, before the marker.
 */
export async function loadDataset(
  core: Core,
  engine: 'pglite' | 'postgres',
  plan: Plan,
  options: { progress: boolean },
): Promise<Marker> {
  const db = core.db;
  const now = core.clock();
  const dims = core.embedder.dimensions;
  const total = plannedMemories(plan);
  const bar = options.progress ? progressBar('memories') : undefined;

  const loadStart = performance.now();
  await insertScaffolding(db, core, plan, now);
  // One index insert per row would make the load several times slower than one build at the end.
  await dropVectorIndex(db, dims);
  let batch: MemorySeed[] = [];
  let done = 0;
  const last = new Map<string, string>();
  for (const seed of memorySeeds(plan)) {
    batch.push(seed);
    if (batch.length < BATCH) continue;
    await insertMemories(db, core, batch, last);
    done += batch.length;
    bar?.update(done, total);
    batch = [];
  }
  if (batch.length > 0) await insertMemories(db, core, batch, last);
  done += batch.length;
  bar?.update(done, total);
  bar?.end();
  const load_seconds = seconds(loadStart);

  const indexStart = performance.now();
  await db.transaction().execute(async (trx) => {
    // The graph must fit in maintenance memory, or the build falls back to a much slower path.
    await sql.raw(`SET LOCAL maintenance_work_mem = '${engine === 'postgres' ? '2GB' : '512MB'}'`).execute(trx);
    await ensureVectorIndex(trx, dims);
  });
  const index_seconds = seconds(indexStart);

  const analyzeStart = performance.now();
  await sql`ANALYZE`.execute(db);
  const analyze_seconds = seconds(analyzeStart);

  const marker: Marker = {
    sizes: plan.sizes,
    embedder: core.embedder.id,
    tenant_id: plan.tenantIds[0] as string,
    memories: done,
    built_at: now.toISOString(),
    load_seconds,
    index_seconds,
    analyze_seconds,
  };
  await db
    .insertInto('service_settings')
    .values({ key: MARKER_KEY, value: JSON.stringify(marker) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(marker) }))
    .execute();
  return marker;
}
