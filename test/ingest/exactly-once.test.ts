import type { KyselyPlugin } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/domain/core.js';
import { ingestConversation } from '../../src/domain/store/ingest.js';
import { engine, testApi } from '../helpers/harness.js';
import { MESSAGES, state, subject } from '../helpers/exactly-once-fixture.js';

/**
 * docs/api.md §5: with a conversation id and message ids, an ingest is exactly-once per message
 * whatever fails. The database "dies" at one statement of the ingest (every statement from there on
 * fails, as on a lost connection), then the identical ingest is sent again on a working database:
 * the subject must end as one uninterrupted run leaves it, at every point of failure.
 */

/**
 * The core with a database that counts the statements sent through it and, once `failAt` of them
 * have gone, refuses every later one as a lost connection does.
 */
function dying(core: Core, failAt: number): { core: Core; sent: () => number } {
  let sent = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      if (++sent > failAt) throw new Error('Connection terminated unexpectedly');
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  return { core: { ...core, db: core.db.withPlugin(plugin) }, sent: () => sent };
}

describe(`an ingest interrupted at any statement, then sent again, on ${engine}`, () => {
  it('leaves the subject as one uninterrupted run does', async () => {
    const api = await testApi();

    const clean = await subject(api, MESSAGES);
    const counted = dying(api.core, Infinity);
    const first = await ingestConversation(counted.core, clean.actor, clean.input);
    expect(first.memories.map((m) => [m.content, m.outcome])).toEqual([
      ['The user lives in Lisbon.', 'created'],
      ['The user has two cats.', 'created'],
      ['The user likes jazz.', 'promoted'],
      ['The user plays the piano.', 'reinforced'],
      ['The user works as a nurse.', 'created'],
      ['The user prefers tea over coffee.', 'created'],
      ['The user is allergic to peanuts.', 'created'],
      ['The user drives a Tesla.', 'created'],
      ['The user is vegetarian.', 'created'],
    ]);
    expect(first.memories[0]?.supersedes).toHaveLength(1);
    const statements = counted.sent();
    const expected = await state(api.core, clean.actor.tenantId);
    // Every memory the ingest created in the session has its window vector, also those whose
    // previous memory was not the fact before them (that one reinforced a memory instead).
    const created = (expected as { memories: { metadata: { ingest?: unknown }; windowed: boolean }[] }).memories;
    expect(created.filter((m) => m.metadata.ingest !== undefined).map((m) => m.windowed)).toEqual(
      Array.from({ length: 7 }, () => true),
    );

    // Points spread over the whole ingest, from its first read to its last write.
    const points = [...new Set(Array.from({ length: 8 }, (_, i) => Math.floor((i * statements) / 8)))];
    const marksLeft = new Set<number>();
    for (const failAt of points) {
      const s = await subject(api, MESSAGES);
      await expect(ingestConversation(dying(api.core, failAt).core, s.actor, s.input)).rejects.toThrow(
        'Connection terminated',
      );
      marksLeft.add(((await state(api.core, s.actor.tenantId)) as { marks: unknown[] }).marks.length);
      await ingestConversation(api.core, s.actor, s.input);
      expect({ failAt, state: await state(api.core, s.actor.tenantId) }).toEqual({ failAt, state: expected });
      // Sent once more, it changes nothing.
      const again = await ingestConversation(api.core, s.actor, s.input);
      expect({ failAt, again: [again.memories, again.skippedMessages] }).toEqual({
        failAt,
        again: [[], MESSAGES.length],
      });
    }
    // Some failures came after part of the conversation was ingested: those retries resumed.
    expect([...marksLeft].some((n) => n > 0 && n < MESSAGES.length)).toBe(true);
  });

  it('ingests each message once when the identical call arrives twice at once', async () => {
    const api = await testApi();
    const clean = await subject(api, MESSAGES);
    await ingestConversation(api.core, clean.actor, clean.input);
    const expected = await state(api.core, clean.actor.tenantId);

    const s = await subject(api, MESSAGES);
    const both = await Promise.all([1, 2].map(() => ingestConversation(api.core, s.actor, s.input)));
    expect(await state(api.core, s.actor.tenantId)).toEqual(expected);
    // Between them, every fact once and every message once.
    expect(both.flatMap((r) => r.memories).length).toBe(9);
    expect(both.map((r) => r.skippedMessages).reduce((a, b) => a + b)).toBe(MESSAGES.length);
  });
});
