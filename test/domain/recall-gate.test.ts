import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Actor, Core } from '../../src/domain/core.js';
import { asRecall, gateState, yieldToRecalls } from '../../src/domain/recall-gate.js';
import { storeBatch } from '../../src/domain/store/batch.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { importStream } from '../../src/portability/run-import.js';
import { recall } from '../../src/retrieval/recall.js';
import { engine, testCore } from '../helpers/harness.js';

/** A recall in flight until `end` is called: what the gate sees of a slow recall. */
function heldRecall(): { end: () => void; done: Promise<void> } {
  let end = () => {};
  const done = asRecall(() => new Promise<void>((resolve) => (end = resolve)));
  return { end, done };
}

/** Resolves once some bulk step waits at the gate. */
async function untilWaiting(): Promise<void> {
  while (gateState().waiting === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function actorOf(core: Core): Promise<Actor> {
  const tenant = await createTenant(core, `gate-${randomUUID()}`);
  return { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write']) };
}

const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    agentId: 'a',
    content: `The customer fact number ${i} about ${['tea', 'trains', 'Lisbon'][i % 3]}`,
    anchor: { anchorExternalId: `s-${i % 2}` },
  }));

async function memoriesOf(core: Core, tenantId: string): Promise<number> {
  const row = await core.db
    .selectFrom('memories')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('recall gate', () => {
  it('lets bulk work through at once when no recall is in flight', async () => {
    expect(gateState()).toMatchObject({ recalls: 0, waiting: 0 });
    expect(await yieldToRecalls(60_000)).toBe(false);
  });

  it('holds a bulk step until the recall in flight ends, well before its bound', async () => {
    const held = heldRecall();
    let through = false;
    const step = yieldToRecalls(60_000).then((waited) => {
      through = true;
      return waited;
    });
    await untilWaiting();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(through).toBe(false);
    expect(gateState()).toMatchObject({ recalls: 1, waiting: 1 });
    held.end();
    await held.done;
    expect(await step).toBe(true);
    expect(gateState()).toMatchObject({ recalls: 0, waiting: 0 });
  });

  it('lets a bulk step go after its bound while recalls keep running, so bulk work never starves', async () => {
    const held = heldRecall();
    const started = performance.now();
    expect(await yieldToRecalls(40)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    expect(gateState()).toMatchObject({ recalls: 1, waiting: 0 });
    held.end();
    await held.done;
  });

  it('counts a recall in flight for its whole length', async () => {
    const core = await testCore();
    const actor = await actorOf(core);
    const recalling = recall(core, actor, {
      agentId: 'a',
      query: 'what about tea',
      anchor: { anchorExternalId: 's-0' },
      limit: 5,
      includeSuperseded: false,
    });
    expect(gateState().recalls).toBe(1);
    await recalling;
    expect(gateState().recalls).toBe(0);
  });

  it('a batch writes nothing while a recall is in flight, and stores everything once it ends', async () => {
    const core = await testCore({ config: { BULK_YIELD_MS: '60000' } });
    const actor = await actorOf(core);
    const held = heldRecall();
    const storing = storeBatch(core, actor, items(6));
    await untilWaiting();
    expect(await memoriesOf(core, actor.tenantId)).toBe(0);
    held.end();
    await held.done;
    const results = await storing;
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await memoriesOf(core, actor.tenantId)).toBe(6);
  });

  it('a batch goes ahead after the bound while a recall stays in flight', async () => {
    const core = await testCore({ config: { BULK_YIELD_MS: '40' } });
    const actor = await actorOf(core);
    const held = heldRecall();
    const started = performance.now();
    const results = await storeBatch(core, actor, items(4));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    expect(await memoriesOf(core, actor.tenantId)).toBe(4);
    expect(gateState().recalls).toBe(1);
    held.end();
    await held.done;
  });

  it('an import writes nothing while a recall is in flight, and everything once it ends', async () => {
    const core = await testCore({ config: { BULK_YIELD_MS: '60000' } });
    const actor = await actorOf(core);
    const lines = items(5).map(
      (item) => `${JSON.stringify({ id: randomUUID(), memory: item.content, user_id: 'u' })}\n`,
    );
    const held = heldRecall();
    const importing = importStream(core, actor, Readable.from(lines), { format: 'mem0', agentId: 'a' });
    await untilWaiting();
    expect(await memoriesOf(core, actor.tenantId)).toBe(0);
    held.end();
    await held.done;
    expect((await importing).imported.memories).toBe(5);
    expect(await memoriesOf(core, actor.tenantId)).toBe(5);
  });

  it('waits inside a transaction only where a recall can run meanwhile (Postgres), before it on every engine', async () => {
    // On the embedded database the recall in flight would be waiting for the transaction's own
    // connection: a batch there gives way before each group's transaction only.
    const core = await testCore({ config: { BULK_YIELD_MS: '20' } });
    const actor = await actorOf(core);
    const held = heldRecall();
    const before = gateState().waited;
    const results = await storeBatch(core, actor, items(4)); // two subjects: two groups of two
    expect(results.every((r) => r.ok)).toBe(true);
    const waits = gateState().waited - before;
    if (engine === 'pglite') expect(waits).toBe(2);
    else expect(waits).toBeGreaterThanOrEqual(2 + 4);
    held.end();
    await held.done;
  });

  it('BULK_YIELD_MS=0 turns the gate off', async () => {
    const core = await testCore({ config: { BULK_YIELD_MS: '0' } });
    const actor = await actorOf(core);
    const held = heldRecall();
    const results = await storeBatch(core, actor, items(2));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(gateState().waiting).toBe(0);
    held.end();
    await held.done;
  });
});
