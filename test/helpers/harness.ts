import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Clock, Core } from '../../src/domain/core.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';

/**
 * One database per vitest worker: the embedded PGlite in memory by default, or the Postgres named by
 * TEST_DATABASE_URL. Nothing depends on another test's data: each test makes its own tenant.
 */
export const SETUP_TOKEN = 'test-setup-token-0123456789';
export const engine: 'pglite' | 'postgres' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: process.env.TEST_DATABASE_URL,
    DATA_DIR: ':memory:',
    SETUP_TOKEN,
    EMBEDDER: 'hash',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    ...overrides,
  });
}

let shared: Promise<Running> | undefined;

/** The worker's database, migrated, with the hash embedder. Closed when the worker exits. */
export function sharedRunning(): Promise<Running> {
  shared ??= startCore(testConfig(), { embedder: createHashEmbedder(256), log: pino({ level: 'silent' }) });
  return shared;
}

/** A core on the shared database with its own config or clock. */
export async function testCore(options: { config?: Record<string, string>; clock?: Clock } = {}): Promise<Core> {
  const running = await sharedRunning();
  return {
    ...running.core,
    config: options.config ? testConfig(options.config) : running.core.config,
    clock: options.clock ?? running.core.clock,
  };
}

/** A clock that stands still until moved. */
export function manualClock(
  start = new Date('2026-01-01T00:00:00Z'),
): Clock & { advance(ms: number): void; set(d: Date): void } {
  let now = start.getTime();
  const clock = (() => new Date(now)) as Clock & { advance(ms: number): void; set(d: Date): void };
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (d) => {
    now = d.getTime();
  };
  return clock;
}

export interface TestApi {
  app: Express;
  core: Core;
  http: ReturnType<typeof request>;
}

export async function testApi(options: { config?: Record<string, string>; clock?: Clock } = {}): Promise<TestApi> {
  const core = await testCore(options);
  const app = createApp(core);
  return { app, core, http: request(app) };
}

export interface Tenant {
  tenantId: string;
  /** The setup key: read, write and admin. */
  adminKey: string;
  auth: { Authorization: string };
}

/** A fresh tenant through POST /v1/setup, with a unique org name. */
export async function newTenant(api: TestApi): Promise<Tenant> {
  const res = await api.http
    .post('/v1/setup')
    .set('X-Setup-Token', SETUP_TOKEN)
    .send({ org_name: `org-${randomUUID()}` });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${JSON.stringify(res.body)}`);
  const body = res.body as { tenant_id: string; api_key: string };
  return { tenantId: body.tenant_id, adminKey: body.api_key, auth: { Authorization: `Bearer ${body.api_key}` } };
}

/** A key of the tenant with the given scopes. */
export async function newKey(
  api: TestApi,
  tenant: Tenant,
  scopes: string[],
): Promise<{ id: string; auth: { Authorization: string } }> {
  const res = await api.http
    .post('/v1/keys')
    .set(tenant.auth)
    .send({ name: `key-${scopes.join('-')}`, scopes });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  const body = res.body as { id: string; api_key: string };
  return { id: body.id, auth: { Authorization: `Bearer ${body.api_key}` } };
}
