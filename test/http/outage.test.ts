import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Core } from '../../src/domain/core.js';
import type { Database } from '../../src/db/schema.js';
import { authenticate } from '../../src/domain/tenancy/keys.js';
import { outageError } from '../../src/errors.js';
import { inProcessClient } from '../helpers/mcp.js';
import { engine, newTenant, SETUP_TOKEN, testApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';

// Nothing listens on port 1 (tcpmux, unused anywhere): every connection is refused, as when the
// database server is down.
const CLOSED_PORT = 1;

describe(`with the database unreachable (${engine})`, () => {
  const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${CLOSED_PORT}/none`, max: 2 });
  pool.on('error', () => undefined);
  const unreachable = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  afterAll(() => unreachable.destroy());

  it('answers 503 unavailable with Retry-After over REST', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const http = request(createApp({ ...api.core, db: unreachable }));
    const responses = [
      await http.get('/v1/anchors').set(t.auth),
      await http.post('/v1/setup').set('X-Setup-Token', SETUP_TOKEN).send({ org_name: 'away' }),
    ];
    for (const res of responses) {
      expectProblem(res, 503, 'unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1:1\b|127\.0\.0\.1/);
    }
  });

  it('answers an isError result over MCP', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const actor = await authenticate(api.core, t.adminKey);
    if (!actor) throw new Error('the setup key does not authenticate');
    const core: Core = { ...api.core, db: unreachable };
    const mcp = await inProcessClient(core, { actor, agentId: 'a' });
    try {
      const result = await mcp.client.callTool({ name: 'recall', arguments: { query: 'anything' } });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/unavailable right now; retry shortly/);
    } finally {
      await mcp.close();
    }
  });
});

describe('outageError', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('translates connection-level driver errors only', () => {
    for (const error of [
      withCode('ECONNREFUSED'),
      withCode('08006'),
      withCode('08001'),
      withCode('57P01'),
      withCode('57P03'),
      withCode('57P04'),
      withCode('57P05'),
      withCode('25P03'),
      withCode('53300'),
      withCode('3D000'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('Client was closed and is not queryable'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
    ]) {
      const translated = outageError(error);
      expect(translated?.code).toBe('unavailable');
      expect(translated?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    for (const error of [withCode('22P02'), withCode('23505'), withCode('57014'), new Error('boom'), 'text', null]) {
      expect(outageError(error)).toBeUndefined();
    }
  });
});
