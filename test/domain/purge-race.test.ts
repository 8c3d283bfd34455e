import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertAnchor } from '../../src/domain/subjects/anchors.js';
import type { Actor, Core } from '../../src/domain/core.js';
import { deleteMemory } from '../../src/domain/records/memories.js';
import { purgeAnchor } from '../../src/domain/subjects/purge.js';
import { createSession, endSession } from '../../src/domain/subjects/sessions.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { sweepExpiredSessions } from '../../src/domain/lifecycle/sweeper.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { AppError } from '../../src/errors.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, testConfig } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';

const ROUNDS = 5;
const DAY = 86_400_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a call that raced the purge may answer: its result, or a clean not_found (session_ended too,
 * for a store into a session that a racing end closed); anything else fails.
 */
async function settle<T>(work: Promise<T>): Promise<T | 'not_found' | 'session_ended'> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof AppError && (error.code === 'not_found' || error.code === 'session_ended')) return error.code;
    throw error;
  }
}

// Two connection pools stand for two server processes; PGlite has one connection, so only a server
// can race at all.
describe.skipIf(engine !== 'postgres')('a purge racing writes into its subject, from two pools', () => {
  let pools: Running[] = [];
  let actor: Actor;
  let iso: IsolatedDb | undefined;

  beforeAll(async () => {
    // A database of its own: the sweep below reaches every tenant of the database it runs on.
    iso = await isolatedDatabase();
    const env = iso.env;
    const start = () =>
      startCore(testConfig(env), { embedder: createHashEmbedder(256), log: pino({ level: 'silent' }) });
    pools = [await start(), await start()];
    const tenant = await createTenant(pools[0]!.core, `purge-race-${randomUUID()}`);
    actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write', 'admin']) };
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
    await iso?.drop();
  });

  const core = (i: number): Core => pools[i % 2]!.core;

  /** Rows anywhere that still name the purged anchor or one of its sessions, bar the anchor_purged event. */
  async function leftovers(anchorId: string, sessionIds: string[]): Promise<number> {
    const ids = [anchorId, ...sessionIds];
    const db = core(0).db;
    const t = actor.tenantId;
    const counts = await Promise.all([
      sql<{ n: string }>`SELECT count(*) AS n FROM entities WHERE tenant_id = ${t} AND id = ${anchorId}`.execute(db),
      sql<{ n: string }>`SELECT count(*) AS n FROM sessions WHERE tenant_id = ${t} AND anchor_id = ${anchorId}`.execute(
        db,
      ),
      sql<{ n: string }>`SELECT count(*) AS n FROM memories WHERE tenant_id = ${t}
        AND (anchor_id = ${anchorId} OR session_id = ANY(${ids}::uuid[]))`.execute(db),
      sql<{ n: string }>`SELECT count(*) AS n FROM audit_events WHERE tenant_id = ${t}
        AND action <> 'anchor_purged' AND (anchor_id = ${anchorId} OR session_id = ANY(${ids}::uuid[]))`.execute(db),
    ]);
    return counts.reduce((sum, r) => sum + Number(r.rows[0]?.n ?? 0), 0);
  }

  it('purges while 30 stores go into the subject’s session: never fails, leaves nothing behind', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const session = await createSession(core(0), actor, {
        agentId: 'a',
        anchor: { anchorExternalId: `s-${randomUUID()}` },
      });
      const anchorId = session.anchor_id ?? '';
      const stores = Array.from({ length: 30 }, (_, i) =>
        settle(
          storeMemory(core(i), actor, {
            agentId: 'a',
            content: `Round ${round} fact number ${i} about item${i}x${round}`,
            anchor: {},
            sessionId: session.id,
          }),
        ),
      );
      await sleep(100);
      const purge = purgeAnchor(core(1), actor, anchorId);
      const [outcomes, purged] = await Promise.all([Promise.all(stores), purge]);
      expect(purged.anchorId).toBe(anchorId);
      expect(outcomes.filter((o) => typeof o !== 'string').length).toBe(purged.deleted.memories);
      expect(await leftovers(anchorId, [session.id])).toBe(0);
    }
  });

  it('stores, session starts and ends, deletes and sweeps that name the subject during a purge answer 404 or win before it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const external = `s-${randomUUID()}`;
      const first = await createSession(core(0), actor, { agentId: 'a', anchor: { anchorExternalId: external } });
      const anchorId = first.anchor_id ?? '';
      const seeded = await storeMemory(core(0), actor, {
        agentId: 'a',
        content: `Seeded fact of round ${round}`,
        anchor: { anchorId },
      });
      const writes: Promise<unknown>[] = [];
      const sessions: Promise<{ id: string } | string>[] = [];
      for (let i = 0; i < 48; i++) {
        const c = core(i);
        writes.push(
          settle(
            storeMemory(c, actor, { agentId: 'a', content: `By id ${i} item${i}y${round}`, anchor: { anchorId } }),
          ),
          settle(
            storeMemory(c, actor, {
              agentId: 'a',
              content: `In session ${i} item${i}z`,
              anchor: {},
              sessionId: first.id,
            }),
          ),
        );
        if (i % 4 === 0) {
          const started = settle(createSession(c, actor, { agentId: 'a', anchor: { anchorId } }));
          sessions.push(started);
          writes.push(started.then((s) => (typeof s === 'string' ? s : settle(endSession(c, actor, s.id)))));
        }
        if (i % 8 === 0) {
          // A sweeper two days ahead finds the ended sessions expired and deletes their memories.
          const later = { ...c, clock: () => new Date(Date.now() + 2 * DAY) };
          writes.push(settle(endSession(c, actor, first.id)), sweepExpiredSessions(later));
        }
        if (i === 24) writes.push(settle(deleteMemory(c, actor, seeded.memory.id)));
        if (i === 12) writes.push(purgeAnchor(core(i + 1), actor, anchorId));
      }
      const failed = (await Promise.allSettled(writes)).filter((r) => r.status === 'rejected');
      expect(failed.map((r) => String(r.reason))).toEqual([]);
      const started = (await Promise.all(sessions)).flatMap((s) => (typeof s === 'string' ? [] : [s.id]));
      expect(await leftovers(anchorId, [first.id, ...started])).toBe(0);
    }
  });

  it('a store by external id that waits for a purge creates a fresh subject, as a first use does', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const external = `s-${randomUUID()}`;
      const anchorId = (await upsertAnchor(core(0).db, actor.tenantId, core(0).clock(), { externalId: external })).id;
      const stores = Array.from({ length: 40 }, (_, i) =>
        storeMemory(core(i), actor, {
          agentId: 'a',
          content: `Fact ${i} item${i}w${round}`,
          anchor: { anchorExternalId: external },
        }),
      );
      await sleep(10);
      const [results] = await Promise.all([Promise.all(stores), purgeAnchor(core(1), actor, anchorId)]);
      expect(await leftovers(anchorId, [])).toBe(0);
      const after = new Set(results.filter((r) => r.memory.anchor_id !== anchorId).map((r) => r.memory.anchor_id));
      expect(after.size).toBeLessThanOrEqual(1);
    }
  });
});
