import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../helpers/harness.js';
import { clusterBinariesPresent, startOwnCluster, type OwnCluster } from '../helpers/own-cluster.js';
import { freePort, tempDir } from '../helpers/cli.js';
import { ServeProcess } from '../helpers/serve-process.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/**
 * The outbox against real crashes (docs/webhooks.md): a `serve` process killed with SIGKILL after
 * changes committed and before they were delivered (delivery paused, or under way to a receiver that
 * does not answer) delivers them once started again; and a stream of stores through a kill -9 and,
 * on Postgres, a restart of the database loses no event. Every committed `created` event of the
 * audit trail must reach the receiver. Prints the figures docs/benchmarks.md quotes.
 */
const STREAM_MS = 4_000;
const WRITERS = 3;

/** A `serve` process that delivers webhooks, to a receiver on this machine. */
const deliveringServe = async (env: Record<string, string>) =>
  new ServeProcess(await freePort(), { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DISPATCH: 'true', ...env });

type Json = Record<string, unknown>;

/** A database of its own for the server under test, so no other test's dispatcher delivers its rows. */
async function ownDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (engine === 'pglite') {
    const dir = tempDir('agent-memory-webhooks-');
    return { env: { DATA_DIR: dir.dir }, drop: () => Promise.resolve(dir.remove()) };
  }
  const url = new URL(process.env.TEST_DATABASE_URL ?? '');
  const name = `am_webhooks_kill_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const own = new URL(url.toString());
  own.pathname = `/${name}`;
  return { env: { DATABASE_URL: own.toString() }, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every `created` event of the tenant's trail, by id. */
async function createdEvents(server: ServeProcess, key: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const res = await server.call('GET', `/v1/audit?action=created&limit=200${cursor ? `&cursor=${cursor}` : ''}`, key);
    for (const e of res.body.events as Json[]) ids.add(String(e.id));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return ids;
}

async function tenantWithHook(server: ServeProcess, receiver: Receiver): Promise<{ key: string; secret: string }> {
  const setup = await server.call('POST', '/v1/setup', undefined, { org_name: `org-${randomUUID()}` });
  expect(setup.status).toBe(201);
  const key = String(setup.body.api_key);
  const hook = await server.call('POST', '/v1/webhooks', key, { url: receiver.url, events: ['memory.created'] });
  expect(hook.status).toBe(201);
  return { key, secret: String(hook.body.secret) };
}

const store = (server: ServeProcess, key: string, content: string) =>
  server.call('POST', '/v1/memories', key, { agent_id: 'agent', content });

const receivedIds = (r: Receiver) => new Set(r.received.map((x) => x.headers['webhook-id']));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

describe(`webhook deliveries through a kill -9 of the server, on ${engine}`, () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let server: ServeProcess;
  let receiver: Receiver;

  beforeAll(async () => {
    database = await ownDatabase();
    // The receiver listens first, so the server's port is chosen among those still free.
    receiver = await startReceiver();
    server = await deliveringServe({ ...database.env, WEBHOOK_TIMEOUT_MS: '1000' });
  }, 180_000);
  afterAll(async () => {
    await server?.kill();
    await receiver?.close();
    await database?.drop();
  });

  it('delivers after a restart what committed before the kill, paused or under way', { timeout: 300_000 }, async () => {
    // Delivery paused in this process: the outbox is all there is when it dies.
    await server.start({ WEBHOOK_DISPATCH: 'false' });
    const { key, secret } = await tenantWithHook(server, receiver);
    for (let i = 0; i < 10; i++) expect((await store(server, key, `paused ${i} ${randomUUID()}`)).status).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(0);
    await server.kill();

    await server.start();
    const committed = await createdEvents(server, key);
    expect(committed.size).toBe(10);
    await waitUntil(() => [...committed].every((id) => receivedIds(receiver).has(id)), 'the paused deliveries');
    for (const x of receiver.received) new Webhook(secret).verify(x.raw, x.headers);

    // Under way: the receiver holds the request, the server dies mid-attempt; its lease runs out
    // after the restart and the same event (same webhook-id) is sent again.
    receiver.answer = 'hang';
    const before = receiver.received.length;
    expect((await store(server, key, `in flight ${randomUUID()}`)).status).toBe(201);
    await receiver.waitFor(before + 1);
    const inFlight = receiver.received[before]!.headers['webhook-id'];
    await server.kill();
    receiver.answer = 204;
    await server.start();
    await waitUntil(
      () => receiver.received.slice(before + 1).some((x) => x.headers['webhook-id'] === inFlight),
      'the interrupted delivery, again',
    );
    const hooks = await server.call('GET', '/v1/webhooks', key);
    const [hook] = hooks.body.webhooks as Json[];
    await waitUntil(async () => {
      const list = await server.call('GET', `/v1/webhooks/${String(hook!.id)}/deliveries?status=pending`, key);
      return (list.body.deliveries as Json[]).length === 0;
    }, 'no delivery left pending');
    await server.stop();
  });

  it(
    'loses no event of a stream of stores through a kill -9, and delivers within a second when idle',
    { timeout: 300_000 },
    async () => {
      await server.start();
      const { key } = await tenantWithHook(server, receiver);

      // Idle latency: one store at a time, from sending the store to the delivery's arrival.
      const latencies: number[] = [];
      for (let i = 0; i < 40; i++) {
        const seen = receiver.received.length;
        const sent = Date.now();
        expect((await store(server, key, `idle ${i} ${randomUUID()}`)).status).toBe(201);
        await receiver.waitFor(seen + 1);
        latencies.push(receiver.received[seen]!.at - sent);
      }
      const p50 = percentile(latencies, 50);
      const p95 = percentile(latencies, 95);
      console.log(`webhook delivery after commit (${engine}, idle, 40 stores): p50 ${p50} ms, p95 ${p95} ms`);
      expect(p50).toBeLessThanOrEqual(1000);

      // A stream of stores by several writers; the server is killed in the middle and started again.
      let stop = false;
      let acknowledged = 0;
      const writer = async () => {
        while (!stop) {
          try {
            if ((await store(server, key, `stream ${randomUUID()}`)).status === 201) acknowledged++;
          } catch {
            await new Promise((r) => setTimeout(r, 50)); // the server is down
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);
      await new Promise((r) => setTimeout(r, STREAM_MS / 2));
      await server.kill();
      await server.start();
      await new Promise((r) => setTimeout(r, STREAM_MS / 2));
      stop = true;
      await Promise.all(writers);
      const committed = await createdEvents(server, key);
      expect(committed.size).toBeGreaterThanOrEqual(acknowledged + 40);
      await waitUntil(() => [...committed].every((id) => receivedIds(receiver).has(id)), 'every committed event');
      const lost = [...committed].filter((id) => !receivedIds(receiver).has(id)).length;
      console.log(
        `kill -9 during a stream (${engine}): ${committed.size} events committed, ${lost} lost, ` +
          `${receiver.received.length} deliveries received in all (duplicates allowed)`,
      );
      await server.stop();
    },
  );
});

describe.skipIf(engine !== 'postgres' || !clusterBinariesPresent())(
  'webhook deliveries through a Postgres restart (a cluster of its own)',
  () => {
    let cluster: OwnCluster | undefined;
    let server: ServeProcess;
    let receiver: Receiver;

    beforeAll(async () => {
      cluster = await startOwnCluster();
      await cluster.query('CREATE DATABASE agent_memory');
      receiver = await startReceiver();
      server = await deliveringServe({ DATABASE_URL: cluster.url('agent_memory') });
    }, 180_000);
    afterAll(async () => {
      await server?.kill();
      await receiver?.close();
      await cluster?.destroy();
    });

    it(
      'loses no event of a stream of stores while the database crashes and restarts',
      { timeout: 300_000 },
      async () => {
        await server.start();
        const { key } = await tenantWithHook(server, receiver);
        let stop = false;
        const writer = async () => {
          while (!stop) {
            await store(server, key, `stream ${randomUUID()}`).catch(() => undefined);
            await new Promise((r) => setTimeout(r, 5));
          }
        };
        const writers = Array.from({ length: WRITERS }, writer);
        await new Promise((r) => setTimeout(r, STREAM_MS / 2));
        await cluster!.stop('immediate');
        await new Promise((r) => setTimeout(r, 1000));
        await cluster!.start();
        await new Promise((r) => setTimeout(r, STREAM_MS / 2));
        stop = true;
        await Promise.all(writers);
        let committed = new Set<string>();
        await waitUntil(async () => {
          try {
            committed = await createdEvents(server, key);
            return true;
          } catch {
            return false;
          }
        }, 'the service serving again');
        expect(committed.size).toBeGreaterThan(0);
        await waitUntil(() => [...committed].every((id) => receivedIds(receiver).has(id)), 'every committed event');
        console.log(
          `Postgres crash and restart during a stream: ${committed.size} events committed, 0 lost, ` +
            `${receiver.received.length} deliveries received`,
        );
        await server.stop();
      },
    );
  },
);
