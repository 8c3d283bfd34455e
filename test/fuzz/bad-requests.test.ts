import { gzipSync } from 'node:zlib';
import type { Test } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';

/**
 * Generated bad requests against every route of the OpenAPI document and /mcp: each must be answered
 * with a 4xx problem document. Seeded, so a failure reproduces; the seed is in the failure message.
 */
const SEED = 20261123;
const MIN_REQUESTS = 1000;

/** mulberry32: small, fast and deterministic. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = Record<string, unknown>;
type Method = 'get' | 'post' | 'delete';

interface Case {
  method: Method;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  auth: boolean;
  why: string;
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const nestedObject = (depth: number): Json => {
  let value: Json = { leaf: 1 };
  for (let i = 0; i < depth; i++) value = { n: value };
  return value;
};

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';
const BAD_STRING_VALUES: unknown[] = [
  NUL,
  LONE,
  12345,
  1e308,
  -0.5,
  true,
  false,
  null,
  [],
  {},
  ['x'],
  nestedObject(40),
];
const BAD_INTEGER_VALUES: unknown[] = ['5', 1.5, 0, -1, 1e308, true, null, [], {}, NUL];
const BAD_BOOLEAN_VALUES: unknown[] = ['true', 'false', 0, 1, null, [], {}, NUL];
const BAD_ARRAY_VALUES: unknown[] = ['x', 5, {}, null, [], [null], [{}], [NUL], [[[]]], nestedObject(40)];
const BAD_OBJECT_VALUES: unknown[] = [
  { k: NUL },
  { k: LONE },
  { [LONE]: 1 },
  { [NUL]: 1 },
  { a: [{ b: { c: LONE } }] },
  nestedObject(40),
  'text',
  7,
  null,
  [],
];
const BAD_LIMITS = ['NaN', '0', '-5', '1.5', '1e999', '99999999999999999999', 'abc', '', 'Infinity'];
const BAD_CURSORS = [
  '!!!',
  'AAAA',
  'bnVsbA',
  b64([1.5]),
  b64([1e20]),
  b64([-1]),
  b64(['x', 'y']),
  b64(['0000-01-01T00:00:00.000Z', 'not-a-uuid']),
  b64({ a: 1 }),
  'x'.repeat(600),
  '%00',
];
const BAD_DATES = [
  '0000-01-01T00:00:00Z',
  '1969-12-31T23:59:59Z',
  '+275760-09-13T00:00:00Z',
  '2026-13-45T00:00:00Z',
  'yesterday',
  'NaN',
  '%00',
  '2026-01-01',
];
const BAD_UUIDS = ['nope', '123', '00000000-0000-0000-0000-00000000000g', `${'a'.repeat(8)}-xyz`, '%00'];
const BAD_IDS = [
  'not-a-uuid',
  '%00',
  'x%ED%A0%80',
  '%ZZ',
  '%',
  'a'.repeat(3000),
  '00000000-0000-0000-0000-000000000000',
];
const BAD_AGENT_IDS = ['a'.repeat(300), '%00', '%ZZ', '%20', 'x%ED%A0%80'];
const GARBAGE_JSON = ['{', '{"a":', '[1,2', 'nul', "{'a':1}", '{"a":1}}', '\u0000', '{"a":NaN}', '{"a":1e999x}', ']'];
const BAD_AUTH = [
  undefined,
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNz',
  `Bearer mk_${'A'.repeat(42)}`,
  `Bearer rk_${'x'.repeat(10)}`,
  'Bearer a b c',
  `Bearer ${'k'.repeat(5000)}`,
  'bearer\tmk_',
];

interface Operation {
  method: Method;
  path: string;
  access: 'public' | 'setup' | 'key';
  body?: Json;
  query: Json[];
  pathParams: string[];
}

/** A schema as the document names it: a $ref to components.schemas is followed to the schema. */
function resolved(doc: Json, schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  return ((doc.components as Json).schemas as Record<string, Json>)[name];
}

/** The routes as the service documents them. */
function operations(doc: Json): Operation[] {
  const result: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const security = op.security as Json[];
      const access = security.length === 0 ? 'public' : 'setupToken' in (security[0] ?? {}) ? 'setup' : 'key';
      const parameters = (op.parameters as Json[]) ?? [];
      const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      result.push({
        method: method as Method,
        path,
        access,
        body: resolved(doc, body?.['application/json']?.schema as Json | undefined),
        query: parameters.filter((p) => p.in === 'query'),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name as string),
      });
    }
  }
  return result;
}

/** Required query parameters with a good value, so that one bad parameter is the only fault. */
function goodQuery(op: Operation): Record<string, string> {
  const query: Record<string, string> = {};
  for (const p of op.query) {
    if (!p.required) continue;
    query[p.name as string] = p.name === 'agent_id' ? 'agent' : 'something';
  }
  if (op.method === 'delete' && op.query.some((p) => p.name === 'purge')) query.purge = 'true';
  return query;
}

const encodeQuery = (query: Record<string, string>, raw: Record<string, string> = {}): string =>
  [
    ...Object.entries(query).map(([k, v]) => `${k}=${encodeURIComponent(v)}`),
    ...Object.entries(raw).map(([k, v]) => `${k}=${v}`),
  ].join('&');

function badQueryValues(param: Json): string[] {
  const name = param.name as string;
  const schema = (param.schema ?? {}) as Json;
  if (name === 'limit') return BAD_LIMITS;
  if (name === 'cursor') return BAD_CURSORS;
  if (name === 'since') return BAD_DATES;
  if (schema.format === 'uuid' || (/_id$/.test(name) && name !== 'agent_id' && name !== 'anchor_external_id'))
    return BAD_UUIDS;
  if (schema.enum) return ['bogus', 'TRUE', '%00', ''];
  return ['%00', encodeURIComponent('x'.repeat(3000))];
}

function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '00000000-0000-4000-8000-000000000000');
}

function badBodies(schema: Json, pick: () => number): Json[] {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = (schema.required as string[] | undefined) ?? [];
  const typed = Object.entries(properties).filter(([, p]) => typeof p.type === 'string' || p.enum || p.anyOf);
  const bodies: Json[] = [];
  const base: Json = {};
  for (const name of required) base[name] = goodBodyValue(name, properties[name] ?? {});
  for (const [name, prop] of typed) {
    // A nullable field is an anyOf of its type and null: its bad values are its type's, null aside.
    const variants = (prop.anyOf as Json[] | undefined) ?? [prop];
    const type = variants.find((v) => v.type !== 'null')?.type as string | undefined;
    const nullable = variants.some((v) => v.type === 'null');
    const values =
      type === 'array'
        ? BAD_ARRAY_VALUES
        : type === 'object'
          ? BAD_OBJECT_VALUES
          : type === 'integer'
            ? BAD_INTEGER_VALUES
            : type === 'boolean'
              ? BAD_BOOLEAN_VALUES
              : BAD_STRING_VALUES;
    for (const value of values) {
      if (nullable && value === null) continue;
      if (pick() < 0.6) bodies.push({ ...base, [name]: value });
    }
  }
  // Each required field missing in turn.
  for (const name of required) {
    const rest = { ...base };
    delete rest[name];
    bodies.push(rest);
  }
  return bodies;
}

function goodBodyValue(name: string, prop: Json): unknown {
  if (name === 'messages') return [{ role: 'user', content: 'hello' }];
  if (prop.type === 'array') return ['read'];
  return name === 'content' ? 'some content' : `good-${name}`;
}

function cases(op: Operation, pick: () => number): Case[] {
  const out: Case[] = [];
  const path = fillPath(op.path, {});
  const query = encodeQuery(goodQuery(op));
  const auth = op.access !== 'public';
  const json = { 'Content-Type': 'application/json' };
  // Whatever the route, a body that is no JSON, in no accepted type or encoding, is refused first.
  for (const body of GARBAGE_JSON)
    out.push({
      method: op.method,
      path,
      query,
      headers: json,
      body,
      auth,
      why: `garbage JSON ${JSON.stringify(body)}`,
    });
  for (const type of [
    'text/plain',
    'application/xml',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'application/x-www-form-urlencoded',
  ])
    out.push({
      method: op.method,
      path,
      query,
      headers: { 'Content-Type': type },
      body: 'a=1',
      auth,
      why: `content type ${type}`,
    });
  for (const encoding of ['gzip', 'deflate', 'br'])
    out.push({
      method: op.method,
      path,
      query,
      headers: { ...json, 'Content-Encoding': encoding },
      body: '{"a":1}',
      auth,
      why: `undecodable ${encoding}`,
    });
  for (const encoding of ['zip', 'compress', 'identity, gzip, x'])
    out.push({
      method: op.method,
      path,
      query,
      headers: { ...json, 'Content-Encoding': encoding },
      body: '{"a":1}',
      auth,
      why: `unknown encoding ${encoding}`,
    });
  out.push({
    method: op.method,
    path,
    query,
    headers: { ...json, 'Content-Encoding': 'gzip' },
    body: gzipSync('{"a":'),
    auth,
    why: 'gzip of bad JSON',
  });
  if (op.access === 'public') return out;

  for (const header of BAD_AUTH) {
    const headers: Record<string, string> = header === undefined ? {} : { Authorization: header };
    if (op.access === 'setup') headers['X-Setup-Token'] = header ?? 'short';
    out.push({
      method: op.method,
      path,
      query,
      headers,
      auth: false,
      why: `credentials ${String(header).slice(0, 20)}`,
    });
  }
  for (const param of op.query) {
    for (const value of badQueryValues(param)) {
      const good = goodQuery(op);
      delete good[param.name as string];
      out.push({
        method: op.method,
        path,
        query: encodeQuery(good, { [param.name as string]: value }),
        auth,
        why: `query ${String(param.name)}=${value.slice(0, 40)}`,
      });
    }
    // A parameter given twice arrives as an array.
    out.push({
      method: op.method,
      path,
      query:
        encodeQuery({ ...goodQuery(op) }, { [param.name as string]: 'x', [`${String(param.name)}`]: 'y' }) +
        `&${String(param.name)}=z`,
      auth,
      why: `query ${String(param.name)} repeated`,
    });
  }
  for (const name of op.pathParams) {
    for (const value of name === 'id' && op.path.startsWith('/v1/agents/') ? BAD_AGENT_IDS : BAD_IDS) {
      out.push({
        method: op.method,
        path: fillPath(op.path, { [name]: value }),
        query,
        auth,
        why: `path ${name}=${value.slice(0, 40)}`,
      });
    }
  }
  if (op.body) {
    for (const body of badBodies(op.body, pick)) {
      out.push({
        method: op.method,
        path,
        query,
        headers: json,
        body: JSON.stringify(body),
        auth,
        why: `body ${JSON.stringify(body).slice(0, 80)}`,
      });
    }
    for (const body of [
      '[]',
      '"text"',
      '123',
      'null',
      'true',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      JSON.stringify(nestedObject(2000)),
    ]) {
      out.push({
        method: op.method,
        path,
        query,
        headers: json,
        body,
        auth,
        why: `body of the wrong shape ${body.slice(0, 20)}`,
      });
    }
  }
  return out;
}

function mcpCases(): Case[] {
  const out: Case[] = [];
  const json = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  for (const header of BAD_AUTH) {
    out.push({
      method: 'post',
      path: '/mcp',
      headers: { ...json, ...(header ? { Authorization: header } : {}) },
      body: call,
      auth: false,
      why: `mcp credentials ${String(header).slice(0, 20)}`,
    });
  }
  for (const body of GARBAGE_JSON)
    out.push({ method: 'post', path: '/mcp', headers: json, body, auth: true, why: `mcp garbage ${body}` });
  for (const type of ['text/plain', 'application/xml'])
    out.push({
      method: 'post',
      path: '/mcp',
      headers: { ...json, 'Content-Type': type },
      body: call,
      auth: true,
      why: `mcp type ${type}`,
    });
  for (const encoding of ['gzip', 'br', 'zip'])
    out.push({
      method: 'post',
      path: '/mcp',
      headers: { ...json, 'Content-Encoding': encoding },
      body: call,
      auth: true,
      why: `mcp encoding ${encoding}`,
    });
  for (const agent of ['a'.repeat(300), ' '])
    out.push({
      method: 'post',
      path: '/mcp',
      headers: { ...json, 'X-Agent-Id': agent },
      body: call,
      auth: true,
      why: 'mcp X-Agent-Id',
    });
  return out;
}

describe('generated bad requests', () => {
  let api: TestApi;
  let tenant: Tenant;

  beforeAll(async () => {
    api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '0' } });
    tenant = await newTenant(api);
  });

  it(`answers at least ${MIN_REQUESTS} of them on every route with a 4xx problem (seed ${SEED})`, async () => {
    const doc = (await api.http.get('/v1/openapi.json')).body as Json;
    const pick = random(SEED);
    const all = [...operations(doc).flatMap((op) => cases(op, pick)), ...mcpCases()];
    expect(all.length).toBeGreaterThanOrEqual(MIN_REQUESTS);
    const failures: string[] = [];
    for (const c of all) {
      const url = c.query ? `${c.path}?${c.query}` : c.path;
      let req: Test = api.http[c.method](url);
      if (c.auth) req = req.set(tenant.auth);
      for (const [name, value] of Object.entries(c.headers ?? {})) req = req.set(name, value);
      const res = c.body === undefined ? await req : await req.send(c.body);
      const problem =
        res.status >= 400 &&
        res.status < 500 &&
        /^application\/problem\+json/.test(String(res.headers['content-type'])) &&
        res.body?.status === res.status &&
        typeof res.body?.code === 'string';
      // A batch refuses a bad item alone: 200, with that item's 4xx problem in its place.
      const results = (res.body as { results?: { problem?: { status?: number; code?: unknown } }[] } | undefined)
        ?.results;
      const itemProblems =
        c.path === '/v1/memories/batch' &&
        res.status === 200 &&
        results !== undefined &&
        results.length > 0 &&
        results.every(
          (r) =>
            (r.problem?.status ?? 0) >= 400 && (r.problem?.status ?? 0) < 500 && typeof r.problem?.code === 'string',
        );
      if (!problem && !itemProblems)
        failures.push(`${c.method.toUpperCase()} ${c.path} (${c.why}): ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });
});
