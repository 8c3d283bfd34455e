import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/domain/core.js';
import { deleteExpiredJobs, startJobRunner, type JobRunner } from '../../src/jobs/runner.js';
import { wakeRunners } from '../../src/jobs/wake.js';
import { engine, manualClock, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';
import { memoryRecord } from '../helpers/portability.js';

/**
 * Jobs (docs/api.md §5.10): ?async=true on ingest and import answers 202 with a job, which a
 * runner of any process runs to the same result the synchronous call gives; a job is its tenant's
 * and its agents'; a job whose process died resumes or fails with job_interrupted; finished jobs
 * are deleted after their retention.
 */

type Json = Record<string, unknown>;
type Auth = { Authorization: string };

const MESSAGES = [
  { role: 'user', content: 'I live in Lisbon and I work as a carpenter.', id: 'm1' },
  { role: 'assistant', content: 'Noted.', id: 'm2' },
  { role: 'user', content: 'My sister is called Ana. I prefer tea over coffee.', id: 'm3' },
];

const HEADER = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });
const ndjson = (...records: object[]): string => [HEADER, ...records.map((r) => JSON.stringify(r))].join('\n') + '\n';

/** Ids and times vary between two tenants; everything else of a result must not. */
const shape = (body: unknown): unknown =>
  JSON.parse(
    JSON.stringify(body)
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID')
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, 'TIME'),
  );

let api: TestApi;
let runner: JobRunner;

beforeAll(async () => {
  api = await testApi({ config: { JOB_POLL_MS: '50', JOB_LEASE_SECONDS: '2' } });
  runner = startJobRunner(api.core);
});

afterAll(async () => {
  await runner.stop(1000);
});

async function memoryCount(tenantId: string): Promise<number> {
  const rows = await api.core.db.selectFrom('memories').select('id').where('tenant_id', '=', tenantId).execute();
  return rows.length;
}

async function job(auth: Auth, id: string): Promise<Json> {
  const res = await api.http.get(`/v1/jobs/${id}`).set(auth);
  expect(res.status).toBe(200);
  return res.body as Json;
}

async function finished(auth: Auth, id: string): Promise<Json> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const body = await job(auth, id);
    if (body.state === 'succeeded' || body.state === 'failed') return body;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${String(body.state)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ingestAsync(t: { auth: Auth }, agent: string, body: Json) {
  return api.http.post(`/v1/agents/${agent}/conversations/ingest?async=true`).set(t.auth).send(body);
}

async function boundKey(t: Tenant, agents: string[], scopes = ['read', 'write', 'admin']): Promise<Auth> {
  const res = await api.http
    .post('/v1/keys')
    .set(t.auth)
    .send({ name: `bound ${agents.join(',')}`, scopes, agent_ids: agents });
  expect(res.status).toBe(201);
  return { Authorization: `Bearer ${(res.body as { api_key: string }).api_key}` };
}

describe(`jobs on ${engine}`, () => {
  it('an async ingest answers 202 with the job, and succeeds with the body of the synchronous call', async () => {
    const [t1, t2] = [await newTenant(api), await newTenant(api)];
    const body = { messages: MESSAGES, conversation_id: 'c1', metadata: { source: 'test' } };
    const res = await ingestAsync(t1, 'agent-a', body);
    expect(res.status).toBe(202);
    const queued = res.body as Json;
    expect(res.headers.location).toBe(`/v1/jobs/${String(queued.id)}`);
    expect(queued).toMatchObject({ kind: 'ingest', agent_ids: ['agent-a'], result: null, error: null });
    expect(['queued', 'running']).toContain(queued.state);

    const done = await finished(t1.auth, queued.id as string);
    expect(done.state).toBe('succeeded');
    expect(done.attempts).toBe(1);
    expect(done.progress).toEqual({ messages: 3, messages_done: 3, memories: expect.any(Number) });

    const sync = await api.http.post('/v1/agents/agent-a/conversations/ingest').set(t2.auth).send(body);
    expect(sync.status).toBe(200);
    expect((sync.body as { memories: unknown[] }).memories.length).toBeGreaterThan(1);
    expect(shape(done.result)).toEqual(shape(sync.body));
    // The job's memories are there, as the synchronous call's are.
    expect(await memoryCount(t1.tenantId)).toBe(await memoryCount(t2.tenantId));
  });

  it('an async import succeeds with the counts of the synchronous import', async () => {
    const [t1, t2] = [await newTenant(api), await newTenant(api)];
    const file = ndjson(
      memoryRecord('The office is on the third floor.', { agent_id: 'agent-a' }),
      memoryRecord('Deliveries arrive on Tuesdays.', { agent_id: 'agent-a' }),
    );
    const res = await api.http
      .post('/v1/import?async=true&format=agent-memory')
      .set(t1.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(file);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ kind: 'import', agent_ids: null });
    const done = await finished(t1.auth, (res.body as Json).id as string);
    const sync = await api.http.post('/v1/import').set(t2.auth).set('Content-Type', 'application/x-ndjson').send(file);
    expect(sync.status).toBe(200);
    expect(done).toMatchObject({ state: 'succeeded', result: sync.body });
    expect(done.progress).toEqual({ bytes: Buffer.byteLength(file), bytes_read: Buffer.byteLength(file) });
    // The body kept for the job is gone once it finished.
    const { rows } = await api.core.db
      .selectFrom('job_inputs')
      .select('seq')
      .where('tenant_id', '=', t1.tenantId)
      .execute()
      .then((r) => ({ rows: r }));
    expect(rows).toEqual([]);
  });

  it('an async batch succeeds with the per-item results of the synchronous batch', async () => {
    const [t1, t2] = [await newTenant(api), await newTenant(api)];
    const body = {
      items: [
        { agent_id: 'agent-a', content: 'Prefers tea over coffee', anchor_external_id: 'cust-1' },
        { agent_id: 'agent-a', content: 'prefers TEA over coffee', anchor_external_id: 'cust-1' },
        { agent_id: 'agent-a', content: ' ' },
      ],
    };
    const res = await api.http.post('/v1/memories/batch?async=true').set(t1.auth).send(body);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ kind: 'batch', agent_ids: ['agent-a'] });
    const done = await finished(t1.auth, (res.body as Json).id as string);
    const sync = await api.http.post('/v1/memories/batch').set(t2.auth).send(body);
    expect(sync.status).toBe(200);
    expect(done.state).toBe('succeeded');
    expect(shape(done.result)).toEqual(shape(sync.body));
    expect(done.progress).toEqual({ items: 3, items_done: 3 });
    expect(await memoryCount(t1.tenantId)).toBe(await memoryCount(t2.tenantId));
  });

  it('a failed job carries the problem the synchronous call answers', async () => {
    const t = await newTenant(api);
    const body = { messages: MESSAGES, session_id: randomUUID() };
    const res = await ingestAsync(t, 'agent-a', body);
    expect(res.status).toBe(202);
    const done = await finished(t.auth, (res.body as Json).id as string);
    const sync = await api.http.post('/v1/agents/agent-a/conversations/ingest').set(t.auth).send(body);
    expect(sync.status).toBe(404);
    expect(done).toMatchObject({ state: 'failed', result: null, error: sync.body });

    const bad = await api.http
      .post('/v1/import?async=true')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(`${HEADER}\n{"type":"memory"}\n`);
    const failed = await finished(t.auth, (bad.body as Json).id as string);
    expect(failed).toMatchObject({ state: 'failed', error: { status: 400, code: 'invalid_request' } });
    expect((failed.error as Json).detail).toMatch(/^line 2/);
  });

  it('records job_finished in the audit trail with ids and counts, never content', async () => {
    const t = await newTenant(api);
    const res = await ingestAsync(t, 'agent-a', { messages: MESSAGES });
    const done = await finished(t.auth, (res.body as Json).id as string);
    const audit = await api.http.get('/v1/audit?action=job_finished').set(t.auth);
    expect(audit.status).toBe(200);
    const events = (audit.body as { events: Json[] }).events;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'job_finished',
      actor: { agent_id: 'agent-a' },
      changes: {
        job_id: done.id,
        kind: 'ingest',
        state: 'succeeded',
        agent_ids: ['agent-a'],
        attempts: 1,
        memories: (done.result as { memories: unknown[] }).memories.length,
        skipped_messages: 0,
      },
    });
    expect(JSON.stringify(events[0])).not.toMatch(/Lisbon|carpenter/);
  });

  it('a job is 404 to another tenant, and absent from its list', async () => {
    const [t1, t2] = [await newTenant(api), await newTenant(api)];
    const res = await ingestAsync(t1, 'agent-a', { messages: MESSAGES });
    const id = (res.body as Json).id as string;
    await finished(t1.auth, id);
    expectProblem(await api.http.get(`/v1/jobs/${id}`).set(t2.auth), 404, 'not_found');
    expectProblem(await api.http.get('/v1/jobs/not-a-uuid').set(t2.auth), 404, 'not_found');
    const list = await api.http.get('/v1/jobs').set(t2.auth);
    expect(list.body).toEqual({ jobs: [], next_cursor: null });
  });

  it("a key bound to agents sees only its agents' jobs, and their events", async () => {
    const t = await newTenant(api);
    const a = await boundKey(t, ['agent-a']);
    const ab = await boundKey(t, ['agent-a', 'agent-b']);
    const ofA = await finished(
      t.auth,
      ((await ingestAsync(t, 'agent-a', { messages: MESSAGES })).body as Json).id as string,
    );
    const ofB = await finished(
      t.auth,
      ((await ingestAsync(t, 'agent-b', { messages: MESSAGES })).body as Json).id as string,
    );
    const anyAgent = await api.http
      .post('/v1/import?async=true')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(ndjson(memoryRecord('Anything at all.', { agent_id: 'agent-c' })));
    await finished(t.auth, (anyAgent.body as Json).id as string);

    expect((await job(a, ofA.id as string)).id).toBe(ofA.id);
    expectProblem(await api.http.get(`/v1/jobs/${String(ofB.id)}`).set(a), 404, 'not_found');
    expectProblem(await api.http.get(`/v1/jobs/${String((anyAgent.body as Json).id)}`).set(a), 404, 'not_found');
    const ids = async (auth: Auth) =>
      ((await api.http.get('/v1/jobs').set(auth)).body as { jobs: Json[] }).jobs.map((j) => j.id);
    expect(await ids(a)).toEqual([ofA.id]);
    expect(new Set(await ids(ab))).toEqual(new Set([ofA.id, ofB.id]));
    expect(await ids(t.auth)).toHaveLength(3);
    const events = async (auth: Auth) =>
      ((await api.http.get('/v1/audit?action=job_finished').set(auth)).body as { events: Json[] }).events.map(
        (e) => (e.changes as Json).job_id,
      );
    expect(await events(a)).toEqual([ofA.id]);
    expect(await events(t.auth)).toHaveLength(3);

    // A bound key asking for another agent's ingest is refused at once, not as a failed job.
    expectProblem(await ingestAsync({ auth: a }, 'agent-b', { messages: MESSAGES }), 403, 'insufficient_scope');
    // An import by a bound key is its agents' job.
    const own = await api.http
      .post('/v1/import?async=true')
      .set(ab)
      .set('Content-Type', 'application/x-ndjson')
      .send(ndjson(memoryRecord('Bound import.', { agent_id: 'agent-b' })));
    expect(own.body).toMatchObject({ agent_ids: ['agent-a', 'agent-b'] });
    expect((await finished(ab, (own.body as Json).id as string)).state).toBe('succeeded');
    expectProblem(await api.http.get(`/v1/jobs/${String((own.body as Json).id)}`).set(a), 404, 'not_found');
  });

  it('lists with filters and pages, newest first', async () => {
    const t = await newTenant(api);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await ingestAsync(t, 'agent-a', { messages: [{ role: 'user', content: `I own ${i + 2} bikes.` }] });
      ids.push((res.body as Json).id as string);
      await finished(t.auth, ids[i]!);
    }
    const first = await api.http.get('/v1/jobs?limit=2&kind=ingest&state=succeeded').set(t.auth);
    expect((first.body as { jobs: Json[] }).jobs.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    const next = (first.body as { next_cursor: string }).next_cursor;
    const second = await api.http.get(`/v1/jobs?limit=2&cursor=${next}`).set(t.auth);
    expect(second.body).toMatchObject({ jobs: [{ id: ids[0] }], next_cursor: null });
    expect((await api.http.get('/v1/jobs?state=failed').set(t.auth)).body).toEqual({ jobs: [], next_cursor: null });
    expectProblem(await api.http.get('/v1/jobs?state=done').set(t.auth), 400, 'invalid_request');
  });

  it('refuses a bad async flag, and an async import over JOB_INPUT_MAX_BYTES', async () => {
    const t = await newTenant(api);
    expectProblem(await ingestAsync(t, 'agent-a', { messages: [] }), 400, 'invalid_request');
    expectProblem(
      await api.http.post('/v1/agents/agent-a/conversations/ingest?async=yes').set(t.auth).send({ messages: MESSAGES }),
      400,
      'invalid_request',
    );
    const small = await testApi({ config: { JOB_INPUT_MAX_BYTES: '100' } });
    const big = ndjson(memoryRecord('x'.repeat(200), { agent_id: 'agent-a' }));
    const res = await small.http
      .post('/v1/import?async=true')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(big);
    expectProblem(res, 413, 'payload_too_large');
    expect((res.body as Json).detail).toMatch(/JOB_INPUT_MAX_BYTES/);
  });

  it('does not run the job of a key revoked before it ran', async () => {
    const t = await newTenant(api);
    const key = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'short-lived', scopes: ['read', 'write'] });
    // Queued straight into the table, so that the runner cannot take it before the revocation.
    const id = await insertJob(api.core, t.tenantId, {
      keyId: (key.body as { id: string }).id,
      state: 'queued',
      hold: true,
    });
    await api.http.delete(`/v1/keys/${(key.body as { id: string }).id}`).set(t.auth);
    await release(api.core, t.tenantId, id);
    const done = await finished(t.auth, id);
    expect(done).toMatchObject({ state: 'failed', error: { code: 'unauthorized' } });
  });
});

interface Inserted {
  keyId?: string | null;
  state: 'queued' | 'running';
  attempts?: number;
  body?: Json;
  /** Created far in the future, so that the runner leaves it until release() (it takes the oldest first)… */
  hold?: boolean;
}

/** A job row as a process that died would leave it, or a queued one. */
async function insertJob(core: Core, tenantId: string, job: Inserted): Promise<string> {
  const id = randomUUID();
  const past = new Date(Date.now() - 60_000);
  await core.db
    .insertInto('jobs')
    .values({
      tenant_id: tenantId,
      id,
      kind: 'ingest',
      // …in a state no runner claims until released.
      state: job.hold ? 'running' : job.state,
      agent_ids: ['agent-a'],
      actor_key_id: job.keyId ?? null,
      actor_scopes: ['read', 'write'],
      actor_agent_ids: null,
      input: JSON.stringify({ agent_id: 'agent-a', body: job.body ?? { messages: MESSAGES } }),
      attempts: job.attempts ?? (job.state === 'running' ? 1 : 0),
      claim_token: job.state === 'running' || job.hold ? randomUUID() : null,
      lease_until: job.hold ? new Date(Date.now() + 3_600_000) : job.state === 'running' ? past : null,
      created_at: past,
      started_at: job.state === 'running' ? past : null,
    })
    .execute();
  if (!job.hold) wakeRunners();
  return id;
}

async function release(core: Core, tenantId: string, id: string): Promise<void> {
  await core.db
    .updateTable('jobs')
    .set({ state: 'queued', lease_until: null, claim_token: null })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
  wakeRunners();
}

describe(`a job whose process died, on ${engine}`, () => {
  it('resumes when the kind can (an ingest with conversation_id and message ids), skipping what was done', async () => {
    const t = await newTenant(api);
    const body = { messages: MESSAGES, conversation_id: 'c-resume' };
    // What the dead process committed: the first call's messages, all of them.
    const first = await api.http.post('/v1/agents/agent-a/conversations/ingest').set(t.auth).send(body);
    expect(first.status).toBe(200);
    const id = await insertJob(api.core, t.tenantId, { state: 'running', body });
    const done = await finished(t.auth, id);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(done.result).toMatchObject({ memories: [], skipped_messages: 3 });
  });

  it('fails with job_interrupted when it cannot resume, and stores nothing again', async () => {
    const t = await newTenant(api);
    const id = await insertJob(api.core, t.tenantId, { state: 'running', body: { messages: MESSAGES } });
    const done = await finished(t.auth, id);
    expect(done).toMatchObject({ state: 'failed', attempts: 2, error: { code: 'job_interrupted', status: 503 } });
    expect((done.error as Json).detail).toMatch(/stopped before it finished/);
    expect(await memoryCount(t.tenantId)).toBe(0);
  });

  it('fails with job_interrupted once started JOB_MAX_ATTEMPTS times', async () => {
    const t = await newTenant(api);
    const body = { messages: MESSAGES, conversation_id: 'c-again' };
    const id = await insertJob(api.core, t.tenantId, { state: 'running', attempts: 3, body });
    const done = await finished(t.auth, id);
    expect(done).toMatchObject({ state: 'failed', attempts: 4, error: { code: 'job_interrupted' } });
    expect((done.error as Json).detail).toMatch(/3 times/);
  });

  it('is left alone while its lease runs', async () => {
    const t = await newTenant(api);
    const id = await insertJob(api.core, t.tenantId, { state: 'queued', hold: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(await job(t.auth, id)).toMatchObject({ state: 'running', attempts: 0 });
  });
});

describe(`retention, on ${engine}`, () => {
  it('deletes the jobs finished longer than JOB_RETENTION_HOURS ago, and only those', async () => {
    const clock = manualClock(new Date());
    const core = { ...(await testApi({ config: { JOB_RETENTION_HOURS: '24' } })).core, clock };
    const t = await newTenant(api);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const hour = 3_600_000;
    const now = clock().getTime();
    const row = (id: string, finishedAgo: number | null) => ({
      tenant_id: t.tenantId,
      id,
      kind: 'ingest',
      state: finishedAgo === null ? ('running' as const) : ('succeeded' as const),
      agent_ids: ['agent-a'],
      actor_scopes: ['read'],
      input: JSON.stringify({ agent_id: 'agent-a', body: { messages: MESSAGES } }),
      // Held by a live lease, so that the runner leaves the unfinished one alone.
      claim_token: finishedAgo === null ? randomUUID() : null,
      lease_until: finishedAgo === null ? new Date(now + hour) : null,
      created_at: new Date(now - 48 * hour),
      finished_at: finishedAgo === null ? null : new Date(now - finishedAgo),
    });
    await core.db
      .insertInto('jobs')
      .values([row(ids[0]!, 25 * hour), row(ids[1]!, 23 * hour), row(ids[2]!, null)])
      .execute();
    await deleteExpiredJobs(core);
    const left = await core.db.selectFrom('jobs').select('id').where('tenant_id', '=', t.tenantId).execute();
    expect(left.map((r) => r.id).sort()).toEqual([ids[1], ids[2]].sort());
    expectProblem(await api.http.get(`/v1/jobs/${ids[0]!}`).set(t.auth), 404, 'not_found');
    clock.advance(2 * hour);
    await deleteExpiredJobs(core);
    const after = await core.db.selectFrom('jobs').select('id').where('tenant_id', '=', t.tenantId).execute();
    expect(after.map((r) => r.id)).toEqual([ids[2]]);
  });
});
