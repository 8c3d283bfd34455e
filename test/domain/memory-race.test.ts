import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnchorRef } from '../../src/domain/subjects/anchors.js';
import { memoryHistory } from '../../src/domain/records/audit.js';
import { deleteCanon, writeCanon } from '../../src/domain/records/canon.js';
import type { Actor, Core } from '../../src/domain/core.js';
import { correctMemory } from '../../src/domain/store/correct.js';
import { deleteMemory, findMemoryRow } from '../../src/domain/records/memories.js';
import { createSession } from '../../src/domain/subjects/sessions.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { createApp } from '../../src/app.js';
import { AppError } from '../../src/errors.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, sharedRunning, testConfig } from '../helpers/harness.js';

/** Rounds per pair: each round races the pair once on a fresh memory, alternating which starts first. */
const ROUNDS = 30;

/**
 * What a request that raced another on the same memory may answer (docs/api.md §5): its result,
 * 404 when the other removed the memory, 409 when the other changed it. Anything else (a deadlock,
 * a row that vanished under a lock: a 500) is rethrown and fails the test.
 */
type Answer<T> = { ok: T } | 'not_found' | 'conflict';

async function answer<T>(work: Promise<T>): Promise<Answer<T>> {
  try {
    return { ok: await work };
  } catch (error) {
    if (error instanceof AppError && (error.code === 'not_found' || error.code === 'conflict')) return error.code;
    throw error;
  }
}

const okOf = <T>(a: Answer<T>): T | undefined => (typeof a === 'string' ? undefined : a.ok);

// On Postgres two pools stand for two server processes, each request of a pair on its own. PGlite
// has one connection, so there the transactions of a pair run one after the other; what still
// interleaves is the unlocked read and the embedding a correction does before its transaction, so
// the same rules are checked there with both requests on the one core.
describe(`requests racing on one memory (${engine})`, () => {
  let pools: Running[] = [];
  let cores: Core[] = [];
  let actor: Actor;
  let auth: { Authorization: string };

  beforeAll(async () => {
    if (engine === 'postgres') {
      const start = () =>
        startCore(testConfig(), { embedder: createHashEmbedder(256), log: pino({ level: 'silent' }) });
      pools = [await start(), await start()];
      cores = pools.map((p) => p.core);
    } else {
      cores = [(await sharedRunning()).core];
    }
    const tenant = await createTenant(cores[0]!, `memory-race-${randomUUID()}`);
    actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write', 'admin']) };
    auth = { Authorization: `Bearer ${tenant.apiKey}` };
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });

  const core = (i: number): Core => cores[i % cores.length]!;

  /** Both requests at once, each on its own pool; odd rounds issue the second one first. */
  async function race<A, B>(round: number, a: (c: Core) => Promise<A>, b: (c: Core) => Promise<B>) {
    const first = core(round);
    const second = core(round + 1);
    if (round % 2 === 0) {
      const pa = answer(a(first));
      const pb = answer(b(second));
      return [await pa, await pb] as const;
    }
    const pb = answer(b(second));
    const pa = answer(a(first));
    return [await pa, await pb] as const;
  }

  /**
   * Where round `round` stores: an agent's private memories, a subject's profile, or a session of a
   * subject (whose partition holds the profile's lock too), each fresh so that rounds stay apart.
   */
  async function placeOf(round: number): Promise<{ agentId: string; anchor: AnchorRef; sessionId?: string }> {
    const agentId = `agent-${round}-${randomUUID()}`;
    const anchorExternalId = `s-${randomUUID()}`;
    switch (round % 3) {
      case 0:
        return { agentId, anchor: {} };
      case 1:
        return { agentId, anchor: { anchorExternalId } };
      default: {
        const session = await createSession(core(0), actor, { agentId, anchor: { anchorExternalId } });
        return { agentId, anchor: {}, sessionId: session.id };
      }
    }
  }

  async function seed(round: number, content: string) {
    const place = await placeOf(round);
    const stored = await storeMemory(core(0), actor, { ...place, content });
    return { place, id: stored.memory.id };
  }

  const actions = async (memoryId: string) => (await memoryHistory(core(0).db, actor, memoryId)).map((e) => e.action);

  const row = (id: string) => findMemoryRow(core(0).db, actor.tenantId, id);

  /** The memories of the tenant holding `content`, whatever their status. */
  const holding = async (content: string) =>
    core(0)
      .db.selectFrom('memories')
      .select(['id', 'status'])
      .where('tenant_id', '=', actor.tenantId)
      .where('content', '=', content)
      .execute();

  /** The statistics the triggers keep (migration 0006) match the memories: no change was half-counted. */
  async function expectStatisticsKept(): Promise<void> {
    const db = core(0).db;
    const kept = await sql<{ unit: string; docs: number }>`
      SELECT unit, docs::int AS docs FROM memory_unit_stats WHERE tenant_id = ${actor.tenantId} ORDER BY unit`.execute(
      db,
    );
    const counted = await sql<{ unit: string; docs: number }>`
      SELECT memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit, count(*)::int AS docs
      FROM memories AS m WHERE m.tenant_id = ${actor.tenantId} AND m.status = 'active'
      GROUP BY 1 ORDER BY 1`.execute(db);
    expect(kept.rows).toEqual(counted.rows);
  }

  it('a correction racing a delete: the delete wins or comes after it, the correction is 404 or done in full', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await seed(round, `Lives in Paris ${round}`);
      const corrected = `Lives in Lyon ${round}`;
      const [patch, del] = await race(
        round,
        (c) => correctMemory(c, actor, { id, content: corrected }),
        (c) => deleteMemory(c, actor, id),
      );
      // Nothing else deletes it: the delete finds it, superseded or not.
      expect(del).toEqual({ ok: undefined });
      expect(patch === 'not_found' || okOf(patch) !== undefined).toBe(true);
      expect(await row(id)).toBeUndefined();
      const done = okOf(patch);
      if (done) {
        expect(await actions(id)).toEqual(['created', 'corrected', 'deleted']);
        expect((await row(done.memory.id))?.status).toBe('active');
        expect(await actions(done.memory.id)).toEqual(['created']);
      } else {
        expect(await actions(id)).toEqual(['created', 'deleted']);
        expect(await holding(corrected)).toEqual([]);
      }
    }
    await expectStatisticsKept();
  });

  it('PATCH racing DELETE of one memory over HTTP, a server a side: DELETE 204, PATCH 200 or 404, never a 500', async () => {
    const servers = cores.map((c) => request(createApp(c)));
    const server = (i: number) => servers[i % servers.length]!;
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await seed(round, `Lives in Paris ${round}`);
      const patch = () =>
        server(round)
          .patch(`/v1/memories/${id}`)
          .set(auth)
          .send({ content: `Lives in Rome ${round}` });
      const del = () =>
        server(round + 1)
          .delete(`/v1/memories/${id}`)
          .set(auth);
      const [p, d] =
        round % 2 === 0
          ? await Promise.all([patch(), del()])
          : await Promise.all([del(), patch()]).then(([x, y]) => [y, x] as const);
      // Nothing else deletes the memory: the delete finds it, corrected or not.
      expect(d.status, JSON.stringify(d.body)).toBe(204);
      expect([200, 404], JSON.stringify(p.body)).toContain(p.status);
      // A correction answered 200 happened before the delete, in full; one answered 404 left no trace.
      expect(await actions(id)).toEqual(
        p.status === 200 ? ['created', 'corrected', 'deleted'] : ['created', 'deleted'],
      );
      expect((await server(round).get(`/v1/memories/${id}`).set(auth)).status).toBe(404);
    }
    await expectStatisticsKept();
  });

  it('a store that supersedes a memory racing its delete: both succeed, in one order or the other', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { place, id } = await seed(round, 'Lives in Paris');
      const [store, del] = await race(
        round,
        (c) => storeMemory(c, actor, { ...place, content: 'Lives in Berlin' }),
        (c) => deleteMemory(c, actor, id),
      );
      expect(del).toEqual({ ok: undefined });
      const stored = okOf(store);
      expect(stored?.outcome).toBe('created');
      expect(await row(id)).toBeUndefined();
      // An event only for a supersession that happened: before the delete, or not at all.
      const superseded = stored?.supersedes.includes(id) === true;
      expect(await actions(id)).toEqual(superseded ? ['created', 'superseded', 'deleted'] : ['created', 'deleted']);
    }
    await expectStatisticsKept();
  });

  it('a reinforcement racing the delete of the memory it reinforces: reinforced before the delete, or stored anew', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { place, id } = await seed(round, 'Prefers morning calls');
      const [store, del] = await race(
        round,
        (c) => storeMemory(c, actor, { ...place, content: 'Prefers morning calls' }),
        (c) => deleteMemory(c, actor, id),
      );
      expect(del).toEqual({ ok: undefined });
      const stored = okOf(store);
      expect(await row(id)).toBeUndefined();
      if (stored?.outcome === 'reinforced') {
        expect(stored.memory.id).toBe(id);
        expect(await actions(id)).toEqual(['created', 'reinforced', 'deleted']);
      } else {
        expect(stored?.outcome).toBe('created');
        expect(await actions(id)).toEqual(['created', 'deleted']);
        expect((await row(stored?.memory.id ?? ''))?.status).toBe('active');
      }
    }
    await expectStatisticsKept();
  });

  it('two corrections of one memory: one wins, the other is 409 and leaves nothing', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await seed(round, `Works at Acme ${round}`);
      const [x, y] = [`Works at Globex ${round}`, `Works at Initech ${round}`];
      const [first, second] = await race(
        round,
        (c) => correctMemory(c, actor, { id, content: x }),
        (c) => correctMemory(c, actor, { id, content: y }),
      );
      const answers = [first, second];
      expect(answers.filter((a) => a === 'conflict')).toHaveLength(1);
      const winner = answers.map(okOf).find((a) => a !== undefined);
      expect(winner).toBeDefined();
      expect((await row(id))?.superseded_by).toBe(winner?.memory.id);
      expect(await actions(id)).toEqual(['created', 'corrected']);
      const loser = winner?.memory.content === x ? y : x;
      expect(await holding(loser)).toEqual([]);
    }
    await expectStatisticsKept();
  });

  it('two deletes of one memory: one is 204, the other 404, and one deleted event', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await seed(round, `Owns a bicycle ${round}`);
      const [a, b] = await race(
        round,
        (c) => deleteMemory(c, actor, id),
        (c) => deleteMemory(c, actor, id),
      );
      expect([a, b].filter((x) => x === 'not_found')).toHaveLength(1);
      expect(await actions(id)).toEqual(['created', 'deleted']);
    }
    await expectStatisticsKept();
  });

  it('a correction onto a memory that a racing delete removes: it lands on that memory first, or on a new one', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { place, id } = await seed(round, 'Likes coffee');
      const twin = (await storeMemory(core(0), actor, { ...place, content: 'Likes tea' })).memory.id;
      const [patch, del] = await race(
        round,
        (c) => correctMemory(c, actor, { id, content: 'likes tea' }),
        (c) => deleteMemory(c, actor, twin),
      );
      expect(del).toEqual({ ok: undefined });
      const done = okOf(patch);
      expect(done).toBeDefined();
      expect((await row(id))?.superseded_by).toBe(done?.memory.id);
      if (done?.memory.id === twin) {
        expect(await actions(twin)).toEqual(['created', 'deleted']);
      } else {
        expect((await row(done?.memory.id ?? ''))?.status).toBe('active');
      }
    }
    await expectStatisticsKept();
  });

  it('two deletes of one canon entry: one is 204, the other 404, and one canon_deleted event', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { entry } = await writeCanon(core(0), actor, { agentId: 'admin', content: `House rule ${randomUUID()}` });
      const [a, b] = await race(
        round,
        (c) => deleteCanon(c, actor, entry.id),
        (c) => deleteCanon(c, actor, entry.id),
      );
      expect([a, b].filter((x) => x === 'not_found')).toHaveLength(1);
      expect(await actions(entry.id)).toEqual(['canon_written', 'canon_deleted']);
    }
    await expectStatisticsKept();
  });
});
