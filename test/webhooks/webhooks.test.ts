import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/records/audit.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { engine, newKey, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/**
 * Webhooks end to end in one process, on the engine under test: endpoints through the API, events
 * written to the outbox by the changes themselves, delivered by a dispatcher to a receiver on
 * loopback (WEBHOOK_ALLOW_PRIVATE=true, as loopback is refused otherwise), and checked with the
 * Standard Webhooks library, not with our own code.
 */
const ALLOW = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' };

type Json = Record<string, unknown>;

describe(`webhooks on ${engine}`, () => {
  let api: TestApi;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    api = await testApi({ config: ALLOW });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** Sends the tenant's due deliveries: only its own, as other tests' share the database. */
  const drain = (t: Tenant, on: TestApi = api) => new WebhookDispatcher(on.core, { tenantId: t.tenantId }).drain();

  const receiver = async (answer: number | 'hang' = 204): Promise<Receiver> => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };

  async function endpoint(t: Tenant, url: string, events: string[] = ['*']): Promise<{ id: string; secret: string }> {
    const res = await api.http.post('/v1/webhooks').set(t.auth).send({ url, events });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; secret: string };
  }

  const store = (t: Tenant, content: string, subject?: string) =>
    api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'agent-1', content, ...(subject ? { anchor_external_id: subject } : {}) });

  const deliveries = async (t: Tenant, id: string, query = ''): Promise<Json[]> => {
    const res = await api.http.get(`/v1/webhooks/${id}/deliveries${query}`).set(t.auth);
    expect(res.status).toBe(200);
    return (res.body as { deliveries: Json[] }).deliveries;
  };

  it('manages endpoints: the secret once, in the Standard Webhooks form; patch, list, delete', async () => {
    const t = await newTenant(api);
    const created = await api.http
      .post('/v1/webhooks')
      .set(t.auth)
      .send({ url: 'https://example.com/hooks', events: ['memory.created', 'subject.purged'], description: 'crm' });
    expect(created.status).toBe(201);
    const body = created.body as Json;
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(String(body.secret).slice(6), 'base64')).toHaveLength(32);
    expect(body).toMatchObject({ enabled: true, events: ['memory.created', 'subject.purged'], disabled_reason: null });

    const got = await api.http.get(`/v1/webhooks/${String(body.id)}`).set(t.auth);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('secret');
    expect(JSON.stringify(got.body)).not.toContain(String(body.secret).slice(6));
    const listed = await api.http.get('/v1/webhooks').set(t.auth);
    expect((listed.body as { webhooks: Json[] }).webhooks.map((w) => w.id)).toEqual([body.id]);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const patched = await api.http
      .patch(`/v1/webhooks/${String(body.id)}`)
      .set(t.auth)
      .send({ enabled: false });
    expect(patched.body).toMatchObject({ enabled: false, disabled_reason: null });
    expect((patched.body as Json).disabled_at).toEqual(expect.any(String));

    // Another tenant sees none of it.
    const other = await newTenant(api);
    expect((await api.http.get(`/v1/webhooks/${String(body.id)}`).set(other.auth)).status).toBe(404);
    expect((await api.http.delete(`/v1/webhooks/${String(body.id)}`).set(other.auth)).status).toBe(404);

    expect((await api.http.delete(`/v1/webhooks/${String(body.id)}`).set(t.auth)).status).toBe(204);
    expect((await api.http.get(`/v1/webhooks/${String(body.id)}`).set(t.auth)).status).toBe(404);
  });

  it('refuses bad input with the field named, and keys that are not unbound admins', async () => {
    const t = await newTenant(api);
    const bad = async (send: Json, field: string) => {
      const res = await api.http.post('/v1/webhooks').set(t.auth).send(send);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect((res.body as { errors: { path: string }[] }).errors.map((e) => e.path)).toContain(field);
    };
    await bad({ url: 'ftp://example.com/x', events: ['*'] }, 'url');
    await bad({ url: 'not a url', events: ['*'] }, 'url');
    await bad({ url: 'https://example.com/x', events: [] }, 'events');
    await bad({ url: 'https://example.com/x', events: ['memory.eaten'] }, 'events.0');
    await bad({ url: 'https://user:pw@example.com/x', events: ['*'] }, 'url');
    const created = await endpoint(t, 'https://example.com/x');
    const empty = await api.http.patch(`/v1/webhooks/${created.id}`).set(t.auth).send({});
    expect(empty.status).toBe(400);

    const writer = await newKey(api, t, ['read', 'write']);
    expect((await api.http.get('/v1/webhooks').set(writer.auth)).status).toBe(403);
    const bound = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'bound', scopes: ['admin', 'read', 'write'], agent_ids: ['agent-1'] });
    const boundAuth = { Authorization: `Bearer ${(bound.body as { api_key: string }).api_key}` };
    const refused = await api.http
      .post('/v1/webhooks')
      .set(boundAuth)
      .send({ url: 'https://example.com/y', events: ['*'] });
    expect(refused.status).toBe(403);
    expect((refused.body as { detail: string }).detail).toMatch(/not bound to agents/);
  });

  it('delivers a committed store, signed so that the Standard Webhooks verifier accepts it, without content', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    const hook = await endpoint(t, r.url);
    const content = `The customer's locker code is ${randomUUID()}`;
    const stored = await store(t, content, 'customer-42');
    expect(stored.status).toBe(201);
    const memoryId = (stored.body as { id: string }).id;

    expect(await drain(t)).toBe(1);
    const [got] = await r.waitFor(1);
    const verified = new Webhook(hook.secret).verify(got!.raw, got!.headers) as Json;
    expect(verified).toMatchObject({
      type: 'memory.created',
      data: { memory_id: memoryId, agent_id: 'agent-1', tenant_id: t.tenantId, changes: { binding: 'anchored' } },
    });
    expect(got!.headers['webhook-id']).toBe((verified.data as Json).event_id);
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got!.raw).not.toContain(content.slice(-36));
    expect(got!.raw).not.toContain('customer-42');
    // The event id is the audit event's: a receiver can look it up in the trail.
    const trail = await api.http.get(`/v1/audit?memory_id=${memoryId}`).set(t.auth);
    expect((trail.body as { events: Json[] }).events.map((e) => e.id)).toContain(got!.headers['webhook-id']);
    // A wrong secret fails the same verifier: the check can fail.
    const wrong = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    expect(() => wrong.verify(got!.raw, got!.headers)).toThrow();

    const [delivery] = await deliveries(t, hook.id);
    expect(delivery).toMatchObject({
      event_type: 'memory.created',
      status: 'delivered',
      attempts: 1,
      last_status_code: 204,
    });
    const endpointNow = await api.http.get(`/v1/webhooks/${hook.id}`).set(t.auth);
    expect((endpointNow.body as Json).last_success_at).toEqual(expect.any(String));
  });

  it('delivers each event of a batch once, with the audit event ids, those written set-based too', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    const hook = await endpoint(t, r.url, ['memory.created', 'memory.reinforced']);
    const item = (content: string, subject: string) => ({ agent_id: 'agent-1', content, anchor_external_id: subject });
    const res = await api.http
      .post('/v1/memories/batch')
      .set(t.auth)
      .send({
        items: [
          item('Prefers aisle seats', 'ana'),
          item('Has two daughters', 'ana'),
          item('prefers aisle seats.', 'ana'),
          item('Speaks Portuguese', 'ben'),
        ],
      });
    expect(res.status).toBe(200);
    const outcomes = (res.body as { results: { outcome: string }[] }).results.map((x) => x.outcome);
    expect(outcomes).toEqual(['created', 'created', 'reinforced', 'created']);
    expect(await drain(t)).toBe(4);
    const got = await r.waitFor(4);
    for (const g of got) expect(() => new Webhook(hook.secret).verify(g.raw, g.headers)).not.toThrow();
    const trail = await api.http.get('/v1/audit').set(t.auth);
    const events = (trail.body as { events: Json[] }).events.filter((e) => e.memory_id !== null);
    expect(got.map((g) => g.headers['webhook-id']).sort()).toEqual(events.map((e) => e.id).sort());
    expect(got.map((g) => g.body.type).sort()).toEqual([
      'memory.created',
      'memory.created',
      'memory.created',
      'memory.reinforced',
    ]);
    expect(await deliveries(t, hook.id)).toHaveLength(4);
  });

  it('sends only the kinds an endpoint asks for, and nothing for a key created', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    const hook = await endpoint(t, r.url, ['canon.written']);
    await store(t, `a private note ${randomUUID()}`);
    await newKey(api, t, ['read']);
    const canon = await api.http
      .post('/v1/canon')
      .set(t.auth)
      .send({ agent_id: 'agent-1', content: `house rule ${randomUUID()}` });
    expect(canon.status).toBe(201);
    await drain(t);
    expect(r.received.map((x) => x.body.type)).toEqual(['canon.written']);
    expect(await deliveries(t, hook.id)).toHaveLength(1);
  });

  it('sends nothing for a change that rolls back', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    const hook = await endpoint(t, r.url);
    const actor = { tenantId: t.tenantId, keyId: null, scopes: new Set<never>() };
    await expect(
      api.core.db.transaction().execute(async (trx) => {
        await recordEvent(trx, actor, api.core.clock(), {
          action: 'created',
          agentId: 'agent-1',
          memoryId: randomUUID(),
        });
        throw new Error('the change fails after its event was written');
      }),
    ).rejects.toThrow('the change fails');
    expect(await drain(t)).toBe(0);
    expect(await deliveries(t, hook.id)).toEqual([]);
    expect(r.received).toEqual([]);
  });

  it('reports a purge with counts only, and sends nothing more of the erased subject', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    const secret = `diagnosis ${randomUUID()}`;
    const first = await store(t, `The patient's ${secret}`, 'patient-7');
    const anchorId = (first.body as { anchor_id: string }).anchor_id;
    // Registered after the store: only the purge itself is an event for it.
    const hook = await endpoint(t, r.url);
    // A store after registration queues an event naming the subject, still undelivered at the purge.
    await store(t, `The patient takes the bus on ${randomUUID()}`, 'patient-7').expect(201);
    const purged = await api.http.delete(`/v1/anchors/${anchorId}?purge=true`).set(t.auth);
    expect(purged.status).toBe(200);
    await drain(t);
    expect(r.received.map((x) => x.body.type)).toEqual(['subject.purged']);
    const [got] = r.received;
    new Webhook(hook.secret).verify(got!.raw, got!.headers);
    expect(got!.body.data).toMatchObject({
      anchor_id: anchorId,
      memory_id: null,
      changes: { memories: 2, sessions: 0 },
    });
    expect(got!.raw).not.toContain(secret);
    expect(got!.raw).not.toContain('patient-7');
    expect((await deliveries(t, hook.id)).map((d) => d.event_type)).toEqual(['subject.purged']);
  });

  it('reports an import as it finished, with counts, and one that stopped at a bad line as failed', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    await endpoint(t, r.url, ['import.finished']);
    const secret = `imported fact ${randomUUID()}`;
    const lines = [
      { id: 'm1', memory: secret },
      { id: 'm2', memory: `another ${randomUUID()}` },
    ];
    const ok = await api.http
      .post('/v1/import?format=mem0&agent_id=importer')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(lines.map((l) => JSON.stringify(l)).join('\n'));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const bad = await api.http
      .post('/v1/import?format=mem0&agent_id=importer')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(`${JSON.stringify({ id: 'm3', memory: `third ${randomUUID()}` })}\n{"id": "m4", "memory": ""}`);
    expect(bad.status).toBe(400);
    await drain(t);
    expect(r.received.map((x) => x.body.type)).toEqual(['import.finished', 'import.finished']);
    const [first, second] = r.received.map((x) => x.body.data);
    expect(first).toMatchObject({ changes: { format: 'mem0', outcome: 'completed', lines: 2, memories: 2 } });
    expect(second).toMatchObject({ changes: { format: 'mem0', outcome: 'failed', lines: 1, memories: 1 } });
    expect(r.received[0]!.raw).not.toContain(secret);
    // The same file again writes nothing, and records nothing: no event.
    const again = await api.http
      .post('/v1/import?format=mem0&agent_id=importer')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(lines.map((l) => JSON.stringify(l)).join('\n'));
    expect(again.body).toMatchObject({ imported: { memories: 0 }, existing: 2 });
    expect(await drain(t)).toBe(0);
  });

  it('retries a failing receiver on schedule, then fails the delivery and disables the endpoint', async () => {
    const schedule = [0.4, 0.8];
    const failing = await testApi({ config: { ...ALLOW, WEBHOOK_RETRY_SCHEDULE: schedule.join(',') } });
    const t = await newTenant(failing);
    const own = new WebhookDispatcher(failing.core, { tenantId: t.tenantId });
    try {
      const r = await receiver(500);
      const created = await failing.http
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: r.url, events: ['*'] });
      const hook = created.body as { id: string; secret: string };
      const committed = Date.now();
      await store(t, `flaky ${randomUUID()}`).expect(201);
      own.start();
      await r.waitFor(3);
      const last = async () =>
        ((await failing.http.get(`/v1/webhooks/${hook.id}/deliveries`).set(t.auth)).body as { deliveries: Json[] })
          .deliveries[0];
      const deadline = Date.now() + 5000;
      while ((await last())?.status !== 'failed' && Date.now() < deadline) await new Promise((x) => setTimeout(x, 20));
      expect(r.received).toHaveLength(3);
      expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
      for (const x of r.received) new Webhook(hook.secret).verify(x.raw, x.headers);
      const gaps = r.received.map((x, i) => x.at - (i === 0 ? committed : r.received[i - 1]!.at));
      expect(gaps[0]).toBeLessThan(1000);
      // Each wait is its step of the schedule, ±10 % jitter: never sooner, and later only by the
      // dispatcher's own work (a poll interval of 50 ms, a busy machine).
      schedule.forEach((seconds, i) => {
        expect(gaps[i + 1]).toBeGreaterThanOrEqual(seconds * 1000 * 0.9 - 5);
        expect(gaps[i + 1]).toBeLessThanOrEqual(seconds * 1000 * 1.1 + 500);
      });
      expect(await last()).toMatchObject({
        status: 'failed',
        attempts: 3,
        last_status_code: 500,
        last_error: 'HTTP 500',
        next_attempt_at: null,
      });
      const disabled = (await failing.http.get(`/v1/webhooks/${hook.id}`).set(t.auth)).body as Json;
      expect(disabled).toMatchObject({ enabled: false });
      expect(disabled.disabled_reason).toMatch(
        /every delivery has failed since .* failed all 3 attempts \(last: HTTP 500\)/,
      );

      // A disabled endpoint queues nothing; enabled again, it is sent what comes next.
      await store(t, `while disabled ${randomUUID()}`).expect(201);
      r.answer = 204;
      const enabled = await failing.http.patch(`/v1/webhooks/${hook.id}`).set(t.auth).send({ enabled: true });
      expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
      await store(t, `after ${randomUUID()}`).expect(201);
      own.wake();
      await r.waitFor(4);
      expect(r.received[3]!.body.type).toBe('memory.created');
      // The receiver has answered; the dispatcher records it a moment later.
      const delivered = async () =>
        (
          (await failing.http.get(`/v1/webhooks/${hook.id}/deliveries?status=delivered`).set(t.auth)).body as {
            deliveries: Json[];
          }
        ).deliveries;
      const recorded = Date.now() + 5000;
      while ((await delivered()).length === 0 && Date.now() < recorded) await new Promise((x) => setTimeout(x, 20));
      expect(await delivered()).toHaveLength(1);
    } finally {
      await own.stop();
    }
  });

  it('treats a redirect and a timeout as failures', async () => {
    const quick = await testApi({ config: { ...ALLOW, WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_RETRY_SCHEDULE: '3600' } });
    const t = await newTenant(quick);
    const moved = await receiver(302);
    const slow = await receiver('hang');
    const a = (
      await quick.http
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: moved.url, events: ['*'] })
    ).body as Json;
    const b = (
      await quick.http
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: slow.url, events: ['*'] })
    ).body as Json;
    await store(t, `moved ${randomUUID()}`).expect(201);
    const started = Date.now();
    expect(await drain(t, quick)).toBe(2);
    expect(Date.now() - started).toBeLessThan(3000);
    const last = async (id: unknown) =>
      ((await quick.http.get(`/v1/webhooks/${String(id)}/deliveries`).set(t.auth)).body as { deliveries: Json[] })
        .deliveries[0];
    expect(await last(a.id)).toMatchObject({ status: 'pending', last_status_code: 302 });
    expect((await last(a.id))!.last_error).toMatch(/redirects are not followed/);
    expect(await last(b.id)).toMatchObject({
      status: 'pending',
      last_status_code: null,
      last_error: 'no answer within 300 ms',
    });
    expect(moved.received).toHaveLength(1);
  });

  it('refuses private, loopback and link-local addresses without WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = await testApi();
    const t = await newTenant(strict);
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost/x',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[::ffff:a9fe:a9fe]/x',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/x',
      'http://192.168.0.1/x',
      'http://[fe80::1]/x',
      'http://[fd00::1]/x',
      'http://0.0.0.0/x',
    ]) {
      const res = await strict.http
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url, events: ['*'] });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect((res.body as { errors: { path: string; message: string }[] }).errors[0]).toMatchObject({
        path: 'url',
        message: expect.stringMatching(/WEBHOOK_ALLOW_PRIVATE=true/),
      });
    }
    // Registered while allowed, delivered by a process that does not allow it: refused at delivery.
    const r = await receiver();
    const hook = await endpoint(t, r.url);
    await store(t, `strict ${randomUUID()}`).expect(201);
    expect(await drain(t, strict)).toBe(1);
    expect(r.received).toEqual([]);
    const [d] = await deliveries(t, hook.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(d!.last_error).toMatch(/127\.0\.0\.1 is a private, loopback or link-local address/);
  });

  it('pages deliveries newest first', async () => {
    const t = await newTenant(api);
    const r = await receiver();
    const hook = await endpoint(t, r.url, ['memory.created']);
    for (let i = 0; i < 5; i++) await store(t, `page ${i} ${randomUUID()}`).expect(201);
    const seen: Json[] = [];
    let cursor: string | null = null;
    do {
      const res = await api.http
        .get(`/v1/webhooks/${hook.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        .set(t.auth);
      const page = res.body as { deliveries: Json[]; next_cursor: string | null };
      seen.push(...page.deliveries);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    const times = seen.map((d) => String(d.created_at));
    expect([...times].sort().reverse()).toEqual(times);
    const bad = await api.http.get(`/v1/webhooks/${hook.id}/deliveries?cursor=nope`).set(t.auth);
    expect(bad.status).toBe(400);
  });
});
