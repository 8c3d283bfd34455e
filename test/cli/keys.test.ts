import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyFor, parseKeysCreate } from '../../src/cli/keys.js';
import { UsageError } from '../../src/cli/failure.js';
import { localActor } from '../../src/domain/tenancy/local-tenant.js';
import { AppError } from '../../src/errors.js';
import { engine, newTenant, SETUP_TOKEN, testApi } from '../helpers/harness.js';
import { inProcessClient, ok } from '../helpers/mcp.js';

describe(`agent-memory keys create on ${engine}`, () => {
  it('makes a key for the local tenant of stdio, which shows over REST what the assistant stored', async () => {
    const api = await testApi();
    // What an assistant stores through `agent-memory mcp`: the local tenant, no key.
    const local = await localActor(api.core);
    const mcp = await inProcessClient(api.core, { actor: local, agentId: 'claude-code' });
    const subject = `project-${randomUUID()}`;
    try {
      await ok(mcp.client, 'remember', { content: 'The build runs on Node 20', subject });
    } finally {
      await mcp.close();
    }

    const created = await createKeyFor(api.core, { local: true }, 'cli', ['read']);
    expect(created.tenant.tenantId).toBe(local.tenantId);
    expect(created.apiKey).toMatch(/^rk_[0-9A-Za-z]{40}$/);
    expect(created.key).toMatchObject({ name: 'cli', scopes: ['read'], revoked_at: null });
    const auth = { Authorization: `Bearer ${created.apiKey}` };
    const anchors = await api.http.get('/v1/anchors').set(auth).query({ anchor_external_id: subject });
    expect(anchors.status).toBe(200);
    expect(anchors.body.anchors).toHaveLength(1);
    expect(anchors.body.anchors[0].memory_count).toBe(1);
    const profile = await api.http.get(`/v1/anchors/${anchors.body.anchors[0].id}/memories`).set(auth);
    expect(profile.body.memories.map((m: { content: string }) => m.content)).toEqual(['The build runs on Node 20']);
    // Read only, as asked.
    expect((await api.http.post('/v1/memories').set(auth).send({ agent_id: 'a', content: 'x' })).status).toBe(403);
  });

  it('finds another tenant by id or by org name in any case, and records the key in its audit', async () => {
    const api = await testApi();
    const org = `Acme-${randomUUID()}`;
    const setup = await api.http.post('/v1/setup').set('X-Setup-Token', SETUP_TOKEN).send({ org_name: org });
    expect(setup.status).toBe(201);
    const tenantId: string = setup.body.tenant_id;
    const admin = { Authorization: `Bearer ${setup.body.api_key}` };

    const byName = await createKeyFor(api.core, { orgName: org.toUpperCase() }, 'ops', ['read', 'write', 'admin']);
    expect(byName.tenant).toEqual({ tenantId, orgName: org });
    expect(byName.apiKey).toMatch(/^mk_/);
    const byId = await createKeyFor(api.core, { id: tenantId }, 'viewer', ['read']);
    expect(byId.tenant.tenantId).toBe(tenantId);

    const keys = await api.http.get('/v1/keys').set(admin);
    expect(keys.body.keys.map((k: { name: string }) => k.name).sort()).toEqual(['ops', 'setup', 'viewer']);
    const audit = await api.http.get('/v1/audit').set({ Authorization: `Bearer ${byName.apiKey}` });
    const made = audit.body.events.filter((e: { action: string }) => e.action === 'key_created');
    // Setup's key and the two made here; the command line acts with no key behind it.
    expect(made).toHaveLength(3);
    expect(made.filter((e: { actor: { key_id: string | null } }) => e.actor.key_id === null)).toHaveLength(2);
  });

  it('refuses a tenant that does not exist, by id or by name, and changes nothing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const choice of [{ id: randomUUID() }, { id: 'not-a-uuid' }, { orgName: `nobody-${randomUUID()}` }]) {
      const failure = await createKeyFor(api.core, choice, 'cli', ['read']).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AppError);
      expect((failure as AppError).message).toMatch(/^no tenant with .*agent-memory setup --org NAME/);
    }
    expect((await api.http.get('/v1/keys').set(t.auth)).body.keys).toHaveLength(1);
  });
});

describe('keys create options', () => {
  it('defaults to the local tenant, read and write, named cli', () => {
    expect(parseKeysCreate(['create'])).toEqual({ choice: { local: true }, name: 'cli', scopes: ['read', 'write'] });
    expect(parseKeysCreate(['create', '--org', ' Acme ', '--scopes', 'read, admin', '--name', 'me'])).toEqual({
      choice: { orgName: 'Acme' },
      name: 'me',
      scopes: ['read', 'admin'],
    });
    expect(parseKeysCreate(['create', '--tenant', 'abc']).choice).toEqual({ id: 'abc' });
  });

  it('refuses what it does not understand, saying what it takes', () => {
    const cases: [string[], RegExp][] = [
      [[], /keys needs a command: create/],
      [['list'], /unknown keys command "list"/],
      [['create', '--org', 'a', '--tenant', 'b'], /one of --local, --tenant, --org/],
      [['create', '--scopes', 'read,delete'], /--scopes takes a comma-separated list of read, write, admin/],
      [['create', '--scopes', ''], /--scopes takes/],
      [['create', '--colour', 'red'], /--colour/],
    ];
    for (const [args, message] of cases) {
      expect(() => parseKeysCreate(args), args.join(' ')).toThrow(UsageError);
      expect(() => parseKeysCreate(args), args.join(' ')).toThrow(message);
    }
  });
});
