import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engine, SETUP_TOKEN } from '../helpers/harness.js';
import { freePort } from '../helpers/cli.js';
import { memoryRecord } from '../helpers/portability.js';
import { ServeProcess } from '../helpers/serve-process.js';

/**
 * Jobs across a restart of their server (docs/api.md §5 Jobs), on the engine of the run: a `serve`
 * process killed with SIGKILL while a job is queued or running, then started again on the same
 * database. A queued job runs after the restart; a running import resumes and ends with every line
 * in place; a running ingest that cannot resume (no message ids) fails with job_interrupted.
 */

/** Short, so that the restarted process takes the dead one's jobs over within seconds. */
const LEASE_SECONDS = '3';
const IMPORT_LINES = 2000;

type Json = Record<string, unknown>;

/** A request to the process with raw headers and body; the answer's status and its JSON fields. */
async function call(
  server: ServeProcess,
  method: string,
  url: string,
  auth: Json,
  body?: string,
  type = 'application/json',
): Promise<Json> {
  const res = await server.fetch(url, {
    method,
    headers: { ...(auth as Record<string, string>), ...(body === undefined ? {} : { 'Content-Type': type }) },
    body,
  });
  const answer = (await res.json()) as Json;
  return { status: res.status, ...answer };
}

/**
 * Polls until `check` holds. A poll whose connection the server reset is asked again while the
 * process runs: on the embedded engine a running job holds the process's one connection for a
 * batch at a time, and an idle keep-alive connection may be closed just as it is reused.
 */
async function until(server: ServeProcess, what: string, check: () => Promise<boolean>, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  const holds = () =>
    check().catch((error: unknown) => {
      if (server.running) return false;
      throw error;
    });
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr:\n${server.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const LONG = Array.from({ length: 150 }, (_, i) => ({
  role: 'user',
  content: `I visited city number ${i} in ${1700 + i}. I collect stamps from year ${3000 + i}.`,
}));

describe(`jobs across a killed server, on ${engine}`, () => {
  let server: ServeProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it(
    'a queued job runs after a restart; a running import resumes; a running ingest that cannot resume fails',
    {
      timeout: 600_000,
    },
    async () => {
      if (engine === 'pglite') dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-memory-jobs-'));
      const env: Record<string, string> =
        engine === 'postgres' ? { DATABASE_URL: process.env.TEST_DATABASE_URL ?? '' } : { DATA_DIR: dataDir! };
      server = new ServeProcess(await freePort(), { ...env, JOB_LEASE_SECONDS: LEASE_SECONDS, JOB_POLL_MS: '200' });
      const s = server;

      // 1. A process that runs no job queues one, and is killed.
      await s.start({ JOB_CONCURRENCY: '0' });
      const setup = await call(
        s,
        'POST',
        '/v1/setup',
        { 'X-Setup-Token': SETUP_TOKEN },
        JSON.stringify({ org_name: `org-${randomUUID()}` }),
      );
      const auth = { Authorization: `Bearer ${setup.api_key as string}` };
      const messages = [
        { role: 'user', content: 'I live in Lisbon and I work as a carpenter.', id: 'm1' },
        { role: 'user', content: 'My sister is called Ana.', id: 'm2' },
      ];
      const queued = await call(
        s,
        'POST',
        '/v1/agents/agent-a/conversations/ingest?async=true',
        auth,
        JSON.stringify({ messages, conversation_id: 'c1' }),
      );
      expect(queued).toMatchObject({ status: 202, state: 'queued' });
      await s.kill();

      // 2. Started again, it runs the queued job; then it is killed while an import runs.
      await s.start();
      const job = (id: unknown) => call(s, 'GET', `/v1/jobs/${String(id)}`, auth);
      await until(s, 'the queued job', async () => (await job(queued.id)).state === 'succeeded');
      expect(await job(queued.id)).toMatchObject({ attempts: 1, result: { skipped_messages: 0 } });

      const file =
        [
          JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' }),
          ...Array.from({ length: IMPORT_LINES }, (_, i) =>
            JSON.stringify(
              memoryRecord(`Imported fact number ${i}: shelf ${i} holds box ${i * 7}.`, { agent_id: 'agent-a' }),
            ),
          ),
        ].join('\n') + '\n';
      const imported = await call(s, 'POST', '/v1/import?async=true', auth, file, 'application/x-ndjson');
      expect(imported).toMatchObject({ status: 202 });
      await until(s, 'the import to run', async () => (await job(imported.id)).state === 'running');
      await s.kill();

      // 3. Started again: once the dead process's lease has run out, the import resumes.
      await s.start();
      await until(s, 'the import to finish', async () => (await job(imported.id)).state === 'succeeded');
      const resumed = await job(imported.id);
      expect(resumed.attempts).toBe(2);
      const counts = resumed.result as { lines: number; imported: { memories: number }; existing: number };
      expect(counts.lines).toBe(IMPORT_LINES + 1);
      // What the first run wrote exists; the second run wrote the rest; every line is there once.
      expect(counts.imported.memories + counts.existing).toBe(IMPORT_LINES);

      // 4. An ingest without message ids, killed while it runs, cannot resume: it fails.
      const ingest = await call(
        s,
        'POST',
        '/v1/agents/agent-b/conversations/ingest?async=true',
        auth,
        JSON.stringify({ messages: LONG }),
      );
      expect(ingest).toMatchObject({ status: 202 });
      await until(s, 'the ingest to run', async () => (await job(ingest.id)).state === 'running');
      await s.kill();
      await s.start();
      await until(s, 'the ingest to fail', async () => (await job(ingest.id)).state === 'failed');
      const failed = await job(ingest.id);
      expect(failed).toMatchObject({ attempts: 2, result: null, error: { code: 'job_interrupted', status: 503 } });
      expect((failed.error as Json).detail).toMatch(/stopped before it finished/);

      const events = await call(s, 'GET', '/v1/audit?action=job_finished', auth);
      expect((events.events as Json[]).map((e) => [(e.changes as Json).job_id, (e.changes as Json).state])).toEqual([
        [queued.id, 'succeeded'],
        [imported.id, 'succeeded'],
        [ingest.id, 'failed'],
      ]);
    },
  );
});
