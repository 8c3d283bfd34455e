import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { startSweeper } from '../../src/domain/lifecycle/sweeper.js';
import { createMetrics, createMetricsApp, withMetrics } from '../../src/http/metrics.js';
import { newTenant, testApi, testCore } from '../helpers/harness.js';
import { sweepingApi } from '../helpers/isolated-db.js';
import { expectProblem } from '../helpers/problem.js';

/** Issue 15 point 9: /metrics shows the core's work, whichever door asked for it, and can be guarded. */

/** The value of one series of a Prometheus text exposition (0 when absent). */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const TOKEN = 'metrics-token-0123456789';

describe('domain metrics', () => {
  it('counts store outcomes, supersessions, recall and embedder latency over REST and MCP', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const store = (content: string) =>
      api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a', content, anchor_external_id: 'c1' });
    expect((await store('Lives in Paris')).status).toBe(201);
    expect((await store('Lives in Paris')).status).toBe(200);
    const berlin = await store('Lives in Berlin');
    expect(berlin.body.supersedes).toHaveLength(1);
    expect((await api.http.get('/v1/memories/recall').set(t.auth).query({ agent_id: 'a', query: 'home' })).status).toBe(
      200,
    );
    // The remember and recall tools over MCP's HTTP door count as the REST routes do.
    const rpc = (id: number, name: string, args: Record<string, unknown>) =>
      api.http
        .post('/mcp')
        .set(t.auth)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const remembered = await rpc(1, 'remember', { content: 'Prefers tea', subject: 'c2' });
    expect(remembered.body.result?.isError, JSON.stringify(remembered.body)).toBeFalsy();
    expect((await rpc(2, 'recall', { query: 'tea', subject: 'c2' })).body.result?.isError).toBeFalsy();
    await api.http
      .post('/v1/agents/a/conversations/ingest')
      .set(t.auth)
      .send({ messages: [{ role: 'user', content: 'I prefer trains to planes.' }] });

    const text = (await api.http.get('/metrics')).text;
    expect(value(text, 'agent_memory_store_outcomes_total{via="store",outcome="created"}')).toBe(3);
    expect(value(text, 'agent_memory_store_outcomes_total{via="store",outcome="reinforced"}')).toBe(1);
    expect(value(text, 'agent_memory_store_outcomes_total{via="ingest",outcome="created"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'agent_memory_superseded_total{via="store"}')).toBe(1);
    expect(value(text, 'agent_memory_store_duration_seconds_count{outcome="created"}')).toBe(3);
    expect(value(text, 'agent_memory_recall_duration_seconds_count{result="ok"}')).toBe(2);
    expect(value(text, 'agent_memory_embed_duration_seconds_count{kind="query",result="ok"}')).toBeGreaterThanOrEqual(
      2,
    );
    expect(
      value(text, 'agent_memory_embed_duration_seconds_count{kind="document",result="ok"}'),
    ).toBeGreaterThanOrEqual(4);
    expect(value(text, 'agent_memory_embed_errors_total{kind="document"}')).toBe(0);
    // Series that have not happened yet are there at zero, so alerts have something to read.
    expect(text).toContain('agent_memory_sweeps_total{result="failed"} 0');
    expect(text).toContain('agent_memory_store_outcomes_total{via="store",outcome="promoted"} 0');
  });

  it('counts embedder errors and failed stores and recalls', async () => {
    const base = await testCore();
    const failing: Embedder = {
      ...base.embedder,
      embed: () => Promise.reject(new Error('provider down')),
      close: () => Promise.resolve(),
    };
    const api = await testApi();
    const t = await newTenant(api);
    const http = request(createApp({ ...base, embedder: failing }));
    expect((await http.post('/v1/memories').set(t.auth).send({ agent_id: 'a', content: 'x' })).status).toBe(500);
    expect((await http.get('/v1/memories/recall').set(t.auth).query({ agent_id: 'a', query: 'x' })).status).toBe(500);
    const text = (await http.get('/metrics')).text;
    expect(value(text, 'agent_memory_embed_errors_total{kind="document"}')).toBe(1);
    expect(value(text, 'agent_memory_embed_errors_total{kind="query"}')).toBe(1);
    expect(value(text, 'agent_memory_store_outcomes_total{via="store",outcome="failed"}')).toBe(1);
    expect(value(text, 'agent_memory_recall_duration_seconds_count{result="error"}')).toBe(1);
  });

  it('counts sweeper runs and the memories they delete', async () => {
    const metrics = createMetrics();
    // The sweeper, on the real clock, would delete session memories that other tests, on their
    // moved clocks, still hold: where the database is shared, it gets one of its own.
    const { api, close } = await sweepingApi();
    onTestFinished(close);
    const core = withMetrics(api.core, metrics);
    const stop = startSweeper(core, 20);
    const started = Date.now();
    while (Date.now() - started < 10_000) {
      const text = await metrics.registry.metrics();
      if (
        value(text, 'agent_memory_sweeps_total{result="swept"}') +
          value(text, 'agent_memory_sweeps_total{result="skipped"}') >=
        2
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    stop();
    const text = await metrics.registry.metrics();
    expect(
      value(text, 'agent_memory_sweeps_total{result="swept"}') +
        value(text, 'agent_memory_sweeps_total{result="skipped"}'),
    ).toBeGreaterThanOrEqual(2);
    expect(value(text, 'agent_memory_sweeps_total{result="failed"}')).toBe(0);
    expect(value(text, 'agent_memory_sweep_duration_seconds_count')).toBeGreaterThanOrEqual(2);
  });

  it('counts nothing twice when the core already reports to the metrics', async () => {
    const metrics = createMetrics();
    const core = withMetrics(await testCore(), metrics);
    expect(withMetrics(core, metrics)).toBe(core);
    const http = request(createApp(core, { metrics }));
    const t = await newTenant({ app: createApp(core, { metrics }), core, http });
    await http.post('/v1/memories').set(t.auth).send({ agent_id: 'a', content: 'Likes jazz' });
    const text = (await http.get('/metrics')).text;
    expect(value(text, 'agent_memory_store_outcomes_total{via="store",outcome="created"}')).toBe(1);
    expect(value(text, 'agent_memory_embed_duration_seconds_count{kind="document",result="ok"}')).toBe(1);
  });
});

describe('guarding /metrics', () => {
  it('answers only the METRICS_TOKEN bearer when it is set', async () => {
    const api = await testApi({ config: { METRICS_TOKEN: TOKEN } });
    const none = await api.http.get('/metrics');
    expectProblem(none, 401, 'unauthorized');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expectProblem(await api.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}x`), 401, 'unauthorized');
    const ok = await api.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('agent_memory_recall_duration_seconds');
    const doc = (await api.http.get('/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/metrics'].get.responses)).toContain('401');
  });

  it('moves /metrics to its own app with METRICS_PORT, guarded by the token too', async () => {
    const api = await testApi({ config: { METRICS_PORT: '18251', METRICS_TOKEN: TOKEN } });
    expectProblem(await api.http.get('/metrics'), 404, 'not_found');
    const doc = (await api.http.get('/v1/openapi.json')).body;
    expect(doc.paths['/metrics']).toBeUndefined();
    const metrics = createMetrics();
    const port = request(createMetricsApp(metrics, api.core.config.metrics));
    expectProblem(await port.get('/metrics'), 401, 'unauthorized');
    const ok = await port.get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('agent_memory_store_outcomes_total');
    expectProblem(await port.get('/v1/memories'), 404, 'not_found');
  });

  it('refuses a short token and a metrics port equal to PORT at start', async () => {
    await expect(testCore({ config: { METRICS_TOKEN: 'short' } })).rejects.toThrow(/METRICS_TOKEN/);
    await expect(testCore({ config: { METRICS_PORT: '8080', PORT: '8080' } })).rejects.toThrow(/METRICS_PORT/);
  });
});
