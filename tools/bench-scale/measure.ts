import http from 'node:http';
import { AGENT_BIG, AGENT_READER, SUBJECT_BIG, midSubject, storeSubject, typicalSubject, type Sizes } from './plan.js';
import { BIG_SUBJECT_RARE_EVERY, BIG_SUBJECT_TOPICS } from './rows.js';
import { prng, query, sentence } from './text.js';

export interface Client {
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  close(): void;
}

/** Node's http with one keep-alive agent, so that timings measure the server, not connection setup. */
export function client(baseUrl: string, apiKey: string, maxSockets: number): Client {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const base = new URL(baseUrl);
  return {
    request: (method, path, body) =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = http.request(
          {
            agent,
            host: base.hostname,
            port: base.port,
            method,
            path,
            headers: {
              authorization: `Bearer ${apiKey}`,
              ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let parsed: unknown = text;
              try {
                parsed = text.length > 0 ? JSON.parse(text) : undefined;
              } catch {
                // Not JSON: kept as text.
              }
              resolve({ status: res.statusCode ?? 0, body: parsed });
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(payload);
      }),
    close: () => agent.destroy(),
  };
}

export interface Latencies {
  count: number;
  errors: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const round = (n: number): number => Math.round(n * 10) / 10;

export function summarize(samples: number[], errors: number): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: samples.length,
    errors,
    mean: round(samples.reduce((a, b) => a + b, 0) / samples.length),
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
  };
}

const typicalParams =
  (l: Sizes['layout']) =>
  (i: number): Record<string, string> => ({
    agent_id: AGENT_READER,
    anchor_external_id: typicalSubject(i % l.typicalSubjects),
  });

/** One recall target: the query string's scope part and how many memories it sees. */
export interface Scope {
  label: string;
  size: number;
  params(i: number): Record<string, string>;
  /** A filter (docs/api.md, "Filters"): the recall is then a POST with it; `size` is how many pass. */
  filter?: Record<string, unknown>;
}

/**
 * The measured tenant's scopes from ~100 memories up to the big agent's private ones; with
 * `filtered`, the big subject under a filter that lets a tenth of it through, and one that lets 5 of
 * 10,000 through, after it.
 */
export function scopes(sizes: Sizes, filtered = false): Scope[] {
  const l = sizes.layout;
  const subject = (externalId: string) => () => ({ agent_id: AGENT_READER, anchor_external_id: externalId });
  return [
    { label: `subject-typical-* (${l.typicalSubjects})`, size: l.typicalSize, params: typicalParams(l) },
    ...l.midSubjects.map((size) => ({ label: midSubject(size), size, params: subject(midSubject(size)) })),
    { label: SUBJECT_BIG, size: sizes.bigSubject, params: subject(SUBJECT_BIG) },
    ...(filtered
      ? [
          {
            label: `${SUBJECT_BIG}, topic filter`,
            size: Math.ceil(sizes.bigSubject / BIG_SUBJECT_TOPICS),
            params: subject(SUBJECT_BIG),
            filter: { 'metadata.topic': 't3' },
          },
          {
            label: `${SUBJECT_BIG}, rare filter`,
            size: Math.ceil(sizes.bigSubject / BIG_SUBJECT_RARE_EVERY),
            params: subject(SUBJECT_BIG),
            filter: { 'metadata.rare': true },
          },
        ]
      : []),
    { label: `${AGENT_BIG} (private)`, size: sizes.bigAgent, params: () => ({ agent_id: AGENT_BIG }) },
  ];
}

const recallPath = (params: Record<string, string>, text: string): string =>
  `/v1/memories/recall?${new URLSearchParams({ ...params, query: text, limit: '10' }).toString()}`;

async function timed(c: Client, method: string, path: string, body?: unknown) {
  const started = performance.now();
  const response = await c.request(method, path, body);
  return { ...response, ms: performance.now() - started };
}

/**
 * `queries` recalls, one at a time, after a short warm-up; a scope slower than `budgetSeconds` in
 * all stops early (with at least a few samples), since the slow scopes are what this shows.
 * `afterWarmUp` runs between the warm-up and the timed recalls.
 */
export async function recallLatency(
  c: Client,
  scope: Scope,
  queries: number,
  budgetSeconds: number,
  seed: number,
  afterWarmUp: () => Promise<void> = () => Promise.resolve(),
): Promise<Latencies> {
  const random = prng(seed);
  const send = (i: number) =>
    scope.filter
      ? timed(c, 'POST', '/v1/memories/recall', {
          ...scope.params(i),
          query: query(random),
          limit: 10,
          filter: scope.filter,
        })
      : timed(c, 'GET', recallPath(scope.params(i), query(random)));
  for (let i = 0; i < 3; i++) await send(i);
  await afterWarmUp();
  const samples: number[] = [];
  let errors = 0;
  const deadline = performance.now() + budgetSeconds * 1000;
  for (let i = 0; i < queries; i++) {
    if (i >= 10 && performance.now() > deadline) break;
    const r = await send(i);
    if (r.status === 200) samples.push(r.ms);
    else errors++;
  }
  return summarize(samples, errors);
}

/** What a server's /metrics says of the recalls it has served so far (seconds and counts). */
export interface ServerRecalls {
  /** Its HTTP request histogram for GET /v1/memories/recall. */
  requestSeconds: number;
  requests: number;
  /** Its recall histogram: the core's recall, the query's embedding included. */
  recallSeconds: number;
  recalls: number;
}

/** The sum of a metric's samples over its lines whose labels hold every one of `labels`. */
function metricTotal(text: string, name: string, labels: readonly string[] = []): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (!match || match[1] !== name || !labels.every((l) => (match[2] ?? '').includes(l))) continue;
    total += Number(match[3]);
  }
  return total;
}

/**
 * The server's recall totals from its /metrics, or undefined where it does not serve them beside the
 * API (METRICS_PORT) or wants a token (METRICS_TOKEN).
 */
export async function serverRecalls(c: Client): Promise<ServerRecalls | undefined> {
  const r = await c.request('GET', '/metrics');
  if (r.status !== 200 || typeof r.body !== 'string') return undefined;
  const text = r.body;
  const recallRoute = ['method="GET"', 'route="/v1/memories/recall"'];
  return {
    requestSeconds: metricTotal(text, 'http_request_duration_seconds_sum', recallRoute),
    requests: metricTotal(text, 'http_request_duration_seconds_count', recallRoute),
    recallSeconds: metricTotal(text, 'agent_memory_recall_duration_seconds_sum'),
    recalls: metricTotal(text, 'agent_memory_recall_duration_seconds_count'),
  };
}

/** Mean milliseconds of a recall between two readings: the server's whole request, and recall's own part of it. */
export function serverMeans(before: ServerRecalls, after: ServerRecalls): { request: number; recall: number } {
  const mean = (seconds: number, count: number) => (count > 0 ? round((1000 * seconds) / count) : NaN);
  return {
    request: mean(after.requestSeconds - before.requestSeconds, after.requests - before.requests),
    recall: mean(after.recallSeconds - before.recallSeconds, after.recalls - before.recalls),
  };
}

/** Closed-loop load: `concurrency` workers recall typical subjects back to back for `seconds`. */
export async function recallThroughput(
  baseUrl: string,
  apiKey: string,
  sizes: Sizes,
  concurrency: number,
  seconds: number,
): Promise<{ perSecond: number; errors: number; latency: Latencies }> {
  const c = client(baseUrl, apiKey, concurrency);
  const params = typicalParams(sizes.layout);
  const samples: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async (w: number) => {
    const random = prng(1_000 + w);
    while (performance.now() < deadline) {
      const i = next++;
      try {
        const r = await timed(c, 'GET', recallPath(params(i), query(random)));
        if (r.status === 200) samples.push(r.ms);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = (performance.now() - started) / 1000;
  c.close();
  return { perSecond: round(samples.length / elapsed), errors, latency: summarize(samples, errors) };
}

/**
 * A new fact into a subject of ~100 memories, then the same fact again (a reinforcement); each is
 * deleted afterwards so that reruns find the dataset as it was built.
 */
export async function storeLatency(
  c: Client,
  sizes: Sizes,
  stores: number,
): Promise<{ new: Latencies; reinforce: Latencies; session: Latencies }> {
  const random = prng(4_242);
  const fresh: number[] = [];
  const again: number[] = [];
  const inSession: number[] = [];
  let freshErrors = 0;
  let againErrors = 0;
  let sessionErrors = 0;
  for (let i = 0; i < stores; i++) {
    const body = {
      agent_id: AGENT_READER,
      content: sentence(random),
      anchor_external_id: storeSubject(i % sizes.layout.storeSubjects),
    };
    const first = await timed(c, 'POST', '/v1/memories', body);
    // 200: the subject already held a near-identical fact, so this was no new one to time.
    if (first.status === 200) continue;
    if (first.status !== 201) {
      freshErrors++;
      continue;
    }
    fresh.push(first.ms);
    const second = await timed(c, 'POST', '/v1/memories', body);
    if (second.status === 200) again.push(second.ms);
    else againErrors++;
    const id = (first.body as { id?: string }).id;
    if (id) await c.request('DELETE', `/v1/memories/${id}`);
  }
  // A conversation's turns, one session per store subject: from the second turn on, a store also
  // embeds the turn after the one before it (a window vector) and checks that one under its lock.
  const sessions: string[] = [];
  for (let s = 0; s < sizes.layout.storeSubjects; s++) {
    const started = await c.request('POST', '/v1/sessions', {
      agent_id: AGENT_READER,
      anchor_external_id: storeSubject(s),
    });
    const id = (started.body as { id?: string }).id;
    if (id) sessions.push(id);
  }
  const turns = sessions.length === 0 ? 0 : stores;
  const stored: string[] = [];
  for (let i = 0; i < turns; i++) {
    const s = i % sessions.length;
    const body = {
      agent_id: AGENT_READER,
      content: sentence(random),
      anchor_external_id: storeSubject(s),
      session_id: sessions[s],
    };
    const r = await timed(c, 'POST', '/v1/memories', body);
    const id = (r.body as { id?: string }).id;
    if (r.status === 201 && id) stored.push(id);
    // The first turn of each session has no turn before it: it is timed with the new facts above.
    if (r.status === 201 && i >= sessions.length) inSession.push(r.ms);
    else if (r.status !== 201 && r.status !== 200) sessionErrors++;
  }
  // The dataset stays as it was built, so that the next run times new turns again.
  for (const id of sessions) await c.request('POST', `/v1/sessions/${id}/end`, {});
  for (const id of stored) await c.request('DELETE', `/v1/memories/${id}`);
  return {
    new: summarize(fresh, freshErrors),
    reinforce: summarize(again, againErrors),
    session: summarize(inSession, sessionErrors + (sessions.length === 0 ? stores : 0)),
  };
}
