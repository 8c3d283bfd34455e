import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { contradictionDetectorFor } from '../../src/beliefs/detector.js';
import { BATCH_REPORT_TOOL, REPORT_TOOL } from '../../src/beliefs/llm-judge.js';
import type { Core } from '../../src/domain/core.js';
import { RECORD_TOOL } from '../../src/extraction/claude.js';
import { extractorFor } from '../../src/extraction/factory.js';
import { llmBreakerFor } from '../../src/llm/breaker.js';
import { engine, newTenant, testConfig, testCore, type TestApi } from '../helpers/harness.js';
import { hang, startMessagesApi, type Json, type MessagesApi } from '../helpers/messages-api.js';
import { capturedLog } from '../helpers/captured-log.js';

/**
 * A failing model must not make ingest crawl: the contradictions of one ingest are judged in one
 * call, and after a few failures in a row the model is skipped (the circuit breaker) and the
 * deterministic extractor and detector answer at once.
 */

const KEY = 'sk-ant-test-key-do-not-log-0123456789';
let api: MessagesApi;

const { log, lines: logLines } = capturedLog();

beforeAll(async () => {
  api = await startMessagesApi();
});

afterAll(async () => {
  await api.close();
});

beforeEach(() => {
  api.reset();
  logLines.length = 0;
});

/** The service as `serve` wires it with a key, against the local Messages API: one breaker for both. */
async function claudeApi(env: Record<string, string> = {}): Promise<TestApi> {
  const base = await testCore();
  const config = testConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.baseURL, ...env });
  const llm = llmBreakerFor(config, log);
  const core: Core = {
    ...base,
    log,
    llm,
    contradictions: contradictionDetectorFor(config, log, llm),
    extractor: extractorFor(config, log, llm),
  };
  const app = createApp(core);
  return { app, core, http: request(app) };
}

const toolOf = (seen: { body: Json }): string | undefined => seen.body?.tool_choice?.name;

function logged(event: string): Json[] {
  return logLines.map((l) => JSON.parse(l)).filter((l) => l.event === event);
}

/** Two facts per user message for the deterministic extractor ("lives in …", "has … cats"). */
const chat = (count: number) =>
  Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? { role: 'user', content: `I live in city ${i} and I have ${i} cats.` }
      : { role: 'assistant', content: 'Noted.' },
  );

async function metric(svc: TestApi, line: string): Promise<number | undefined> {
  const text = (await svc.http.get('/metrics')).text;
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe(`a failing model during ingest, on ${engine}`, () => {
  it(
    'an endpoint answering 500: a 250-message ingest makes a handful of calls and answers 200',
    { timeout: 180_000 },
    async () => {
      const svc = await claudeApi();
      const t = await newTenant(svc);
      api.enqueue(...Array.from({ length: 1000 }, () => api.apiError(500, 'api_error')));
      const ingest = (count: number) =>
        svc.http
          .post('/v1/agents/bot/conversations/ingest')
          .set(t.auth)
          .send({ messages: chat(count), anchor_external_id: 'crawl-500' });
      const res = await ingest(250);
      expect(res.status).toBe(200);
      expect(res.body.extractor).toBe('heuristic');
      expect(res.body.memories.length).toBeGreaterThan(100);
      // Three extraction batches at once, each tried twice at most, and one judging call of the
      // facts, tried twice; the chunks after it are left to the heuristic (before: 502 calls, one
      // judgement per fact).
      const tools = api.seen.map(toolOf);
      expect(tools.filter((name) => name === RECORD_TOOL).length).toBeLessThanOrEqual(6);
      expect(tools.filter((name) => name === BATCH_REPORT_TOOL)).toHaveLength(2);
      expect(tools.filter((name) => name === REPORT_TOOL)).toHaveLength(0);
      expect(await metric(svc, 'agent_memory_llm_fallbacks_total{purpose="extract"}')).toBe(1);
      expect(await metric(svc, 'agent_memory_llm_fallbacks_total{purpose="judge"}')).toBe(1);

      // The next ingest's failure is the third in a row: the circuit opens, and judging is skipped.
      const seen = api.seen.length;
      expect((await ingest(20)).status).toBe(200);
      expect(api.seen.slice(seen).map(toolOf)).toEqual([RECORD_TOOL, RECORD_TOOL]);
      expect(logged('llm_circuit_open')).toHaveLength(1);
      expect(await metric(svc, 'agent_memory_llm_circuit_open')).toBe(1);
      expect(await metric(svc, 'agent_memory_llm_failures_total{purpose="extract"}')).toBe(2);
      expect(await metric(svc, 'agent_memory_llm_failures_total{purpose="judge"}')).toBe(1);

      // While it is open, an ingest asks the model nothing and still answers.
      const third = await ingest(20);
      expect(third.status).toBe(200);
      expect(third.body.extractor).toBe('heuristic');
      expect(api.seen.length).toBe(seen + 2);
      expect(await metric(svc, 'agent_memory_llm_skipped_total{purpose="extract"}')).toBe(1);
      expect(await metric(svc, 'agent_memory_llm_skipped_total{purpose="judge"}')).toBe(2);
      expect(logLines.join('\n')).not.toContain('city');
    },
  );

  it('a hanging endpoint: the breaker opens after three judgements and later stores skip the model', async () => {
    const svc = await claudeApi({ LLM_TIMEOUT_MS: '200' });
    const t = await newTenant(svc);
    const store = (content: string) =>
      svc.http.post('/v1/memories').set(t.auth).send({ agent_id: 'bot', content, anchor_external_id: 'hang' });
    api.enqueue(...Array.from({ length: 20 }, () => hang));
    // The first has no neighbour to judge against: no call.
    expect((await store('Lives in Paris')).status).toBe(201);
    expect(api.seen).toHaveLength(0);
    for (const city of ['Berlin', 'Rome', 'Oslo']) expect((await store(`Lives in ${city}`)).status).toBe(201);
    // One call per store, each given up at the deadline.
    expect(api.seen).toHaveLength(3);
    expect(logged('llm_circuit_open')).toHaveLength(1);
    expect(await metric(svc, 'agent_memory_llm_circuit_open')).toBe(1);

    const res = await store('Lives in Madrid');
    expect(res.status).toBe(201);
    expect(api.seen).toHaveLength(3);
    // The deterministic detector judged: Madrid supersedes Oslo.
    expect(res.body.supersedes).toHaveLength(1);
    const ingest = await svc.http
      .post('/v1/agents/bot/conversations/ingest')
      .set(t.auth)
      .send({ messages: chat(20), anchor_external_id: 'hang' });
    expect(ingest.status).toBe(200);
    expect(ingest.body.extractor).toBe('heuristic');
    expect(api.seen).toHaveLength(3);
    expect(await metric(svc, 'agent_memory_llm_skipped_total{purpose="judge"}')).toBe(2);
    expect(await metric(svc, 'agent_memory_llm_skipped_total{purpose="extract"}')).toBe(1);
    // Said once per opening, not once per skipped call.
    expect(logged('llm_circuit_open')).toHaveLength(1);
    expect(logged('contradiction_judge_failed').filter((l) => l.level === 40)).toHaveLength(3);
  });
});

describe(`a healthy model during ingest, on ${engine}`, () => {
  it('judges the facts of one ingest in one call, against stored memories and earlier facts', async () => {
    const svc = await claudeApi();
    const t = await newTenant(svc);
    const stored = await svc.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'bot', content: 'The user lives in Paris.', anchor_external_id: 'healthy' });
    expect(stored.status).toBe(201);
    expect(api.seen).toHaveLength(0);

    const facts = ['The user works in Paris.', 'The user lives in Lisbon.', 'The user lives in Porto.'];
    api.enqueue(
      api.toolAnswer(RECORD_TOOL, { facts: facts.map((statement, message) => ({ statement, kind: 'fact', message })) }),
      // Lisbon contradicts the stored Paris, and Porto the Lisbon said before it in this ingest.
      api.toolAnswer(BATCH_REPORT_TOOL, (body: Json) => {
        const prompt: string = body.messages[0].content;
        const items = [...prompt.matchAll(/<item index="(\d+)">([\s\S]*?)<\/item>/gu)].map((m) => m[2] ?? '');
        const contradicted = [];
        for (const [newer, older] of [
          ['Lisbon', 'lives in Paris'],
          ['Porto', 'Lisbon'],
        ] as const) {
          const item = items.findIndex((text) => /<new_memory>\n[^<]*/u.exec(text)?.[0].includes(newer));
          const candidates = [...(items[item] ?? '').matchAll(/<candidate index="(\d+)">\n([^<]*)/gu)];
          const candidate = candidates.find((c) => c[2]?.includes(older))?.[1];
          if (item >= 0 && candidate !== undefined) contradicted.push({ item, candidate: Number(candidate) });
        }
        return { contradicted };
      }),
    );
    const res = await svc.http
      .post('/v1/agents/bot/conversations/ingest')
      .set(t.auth)
      .send({ messages: facts.map((content) => ({ role: 'user', content })), anchor_external_id: 'healthy' });
    expect(res.status).toBe(200);
    expect(api.seen.map(toolOf)).toEqual([RECORD_TOOL, BATCH_REPORT_TOOL]);
    expect(api.seen.map(toolOf)).not.toContain(REPORT_TOOL);
    const [works, lisbon, porto] = res.body.memories as Json[];
    expect(works.supersedes).toBeUndefined();
    expect(lisbon.supersedes).toEqual([stored.body.id]);
    expect(porto.supersedes).toEqual([lisbon.id]);
    expect(await metric(svc, 'agent_memory_llm_circuit_open')).toBe(0);
    expect(await metric(svc, 'agent_memory_llm_calls_total{purpose="judge"}')).toBe(1);
  });
});
