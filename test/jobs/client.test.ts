import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createAgentMemoryClient, ok, waitForJob, type Job } from '../../src/client/index.js';
import { createHttpServer } from '../../src/http/server.js';
import { startJobRunner, type JobRunner } from '../../src/jobs/runner.js';
import { JobObject } from '../../src/schemas/jobs.js';
import { engine, SETUP_TOKEN, testCore } from '../helpers/harness.js';

/** The typed client's jobs: the 202 of ?async=true, GET /v1/jobs and waitForJob, checked against the schema. */
describe(`agent-memory/client jobs on ${engine}`, () => {
  let server: Server;
  let baseUrl: string;
  let runner: JobRunner;
  beforeAll(async () => {
    const core = await testCore({ config: { JOB_POLL_MS: '50' } });
    server = createHttpServer(createApp(core), core.config.httpLimits).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    runner = startJobRunner(core);
  });
  afterAll(async () => {
    await runner.stop(1000);
    await new Promise((resolve) => server.close(resolve));
  });

  it('queues an ingest, follows it to its result, and lists it', async () => {
    const setup = await ok(
      createAgentMemoryClient({ baseUrl }).POST('/v1/setup', {
        headers: { 'X-Setup-Token': SETUP_TOKEN },
        body: { org_name: `jobs-client-${Date.now()}-${Math.random()}` },
      }),
    );
    const client = createAgentMemoryClient({ baseUrl, apiKey: setup.api_key });
    const { data, response } = await client.POST('/v1/agents/{id}/conversations/ingest', {
      params: { path: { id: 'agent-a' }, query: { async: 'true' } },
      body: { messages: [{ role: 'user', content: 'I live in Oslo and I work as a nurse.' }] },
    });
    expect(response.status).toBe(202);
    expect(response.headers.get('location')).toBe(`/v1/jobs/${(data as Job).id}`);
    const queued = JobObject.strict().parse(data);
    const done = await waitForJob(client, queued.id, { intervalMs: 50, timeoutMs: 30_000 });
    expectTypeOf(done).toEqualTypeOf<Job>();
    expect(JobObject.strict().parse(done)).toMatchObject({ state: 'succeeded', kind: 'ingest' });
    expect(done.result).toMatchObject({ extractor: 'heuristic', skipped_messages: 0 });
    const listed = await ok(client.GET('/v1/jobs', { params: { query: { state: 'succeeded' } } }));
    expect(listed.jobs.map((j) => j.id)).toEqual([queued.id]);
  });
});
