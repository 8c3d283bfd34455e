import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/domain/core.js';
import type { IngestMessage } from '../../src/domain/store/ingest.js';
import { engine, testApi } from '../helpers/harness.js';
import { freePort } from '../helpers/cli.js';
import { AGENT, MESSAGES, state, subject, type Subject } from '../helpers/exactly-once-fixture.js';
import { ServeProcess } from '../helpers/serve-process.js';

/**
 * docs/api.md §5, exactly once per message, against a real crash: a `serve` process on Postgres is
 * killed with SIGKILL in the middle of a long ingest, started again, and sent the identical ingest;
 * the subject must end as one uninterrupted ingest leaves it. On the embedded engine a killed
 * process is not a database failure (the test's own process would hold the data folder), so this
 * runs on Postgres only.
 */

const CITIES = ['Paris', 'Oslo', 'Lima', 'Cairo', 'Quito', 'Hanoi', 'Dakar', 'Perth', 'Riga', 'Sofia', 'Bern'];

/**
 * 120 messages, most with two facts of their own, every tenth from the assistant, some saying again
 * a fact of two messages before; the fixture's conversation first.
 */
const LONG: IngestMessage[] = [
  ...MESSAGES,
  ...Array.from({ length: 112 }, (_, i): IngestMessage => {
    const id = `n${i}`;
    if (i % 10 === 9) return { role: 'assistant', content: `Noted, thank you (${i}).`, id };
    const again = i % 7 === 3 ? ` I visited ${CITIES[(i - 2) % CITIES.length]} in ${1700 + i - 2}.` : '';
    return {
      role: 'user',
      content: `I visited ${CITIES[i % CITIES.length]} in ${1700 + i}. I collect stamps from year ${3000 + i}.${again}`,
      id,
    };
  }),
];

function ingest(server: ServeProcess, s: Subject): Promise<Response> {
  return fetch(`${server.base}/v1/agents/${AGENT}/conversations/ingest`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: s.tenant.auth.Authorization },
    body: JSON.stringify({
      messages: s.input.messages,
      conversation_id: s.input.conversationId,
      session_id: s.input.sessionId,
    }),
  });
}

/** How many memories the ingest has stored in the tenant so far (committed ones only). */
async function ingested(core: Core, tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM memories
    WHERE tenant_id = ${tenantId} AND metadata ? 'ingest'`.execute(core.db);
  return rows[0]?.n ?? 0;
}

describe.skipIf(engine !== 'postgres')(`an ingest whose server is killed, then sent again, on ${engine}`, () => {
  let server: ServeProcess | undefined;
  afterAll(async () => server?.stop(), 30_000);

  it('leaves the subject as one uninterrupted ingest does, wherever the kill fell', { timeout: 600_000 }, async () => {
    const api = await testApi();
    server = new ServeProcess(await freePort(), { DATABASE_URL: process.env.TEST_DATABASE_URL ?? '' });
    await server.start();

    const clean = await subject(api, LONG);
    const answer = await ingest(server, clean);
    expect(answer.status).toBe(200);
    const stored = ((await answer.json()) as { memories: unknown[] }).memories.length;
    expect(stored).toBeGreaterThan(200);
    const expected = await state(api.core, clean.tenant.tenantId);

    for (const killAt of [30, Math.floor(stored / 2)]) {
      const s = await subject(api, LONG);
      let outcome: string | undefined;
      const pending = ingest(server, s).then(
        (res) => (outcome = `answered ${res.status}`),
        () => (outcome = 'cut off'),
      );
      while (outcome === undefined && (await ingested(api.core, s.tenant.tenantId)) < killAt) {
        await new Promise((r) => setTimeout(r, 5));
      }
      await server.kill();
      expect(await pending).toBe('cut off');

      // What survived: whole messages, each with its mark, and nothing of a message without one.
      const { rows } = await sql<{ unmarked: number; marked: number }>`SELECT
          (SELECT count(*)::int FROM memories m WHERE m.tenant_id = ${s.tenant.tenantId} AND m.metadata ? 'ingest'
            AND NOT EXISTS (SELECT 1 FROM ingested_messages i WHERE i.tenant_id = m.tenant_id
              AND i.message_id = m.metadata->'ingest'->>'message_id')) AS unmarked,
          (SELECT count(*)::int FROM ingested_messages WHERE tenant_id = ${s.tenant.tenantId}) AS marked`.execute(
        api.core.db,
      );
      expect({ killAt, ...rows[0] }).toEqual({ killAt, unmarked: 0, marked: expect.any(Number) });
      expect(rows[0]?.marked).toBeLessThan(LONG.length);

      await server.start();
      const retry = await ingest(server, s);
      expect(retry.status).toBe(200);
      expect(((await retry.json()) as { skipped_messages: number }).skipped_messages).toBe(rows[0]?.marked);
      expect({ killAt, state: await state(api.core, s.tenant.tenantId) }).toEqual({ killAt, state: expected });
    }
  });
});
