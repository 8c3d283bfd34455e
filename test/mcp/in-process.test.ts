import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ensureLocalTenant, localActor } from '../../src/domain/tenancy/local-tenant.js';
import { instructions } from '../../src/mcp/server.js';
import { CanonObject, SessionObject, StoredMemoryObject } from '../../src/schemas/objects.js';
import { engine, newTenant, testApi, testCore, type TestApi } from '../helpers/harness.js';
import { call, identityWithScopes, inProcessClient, ok, readJson, text, type Json } from '../helpers/mcp.js';
import { SCOPES } from '../../src/vocabulary.js';

/** Every tool and resource of docs/api.md §7, through the SDK Client against createMcpServer in-process. */

async function adminClient(api: TestApi, agentId?: string) {
  const tenant = await newTenant(api);
  const identity = await identityWithScopes(api, tenant, ['read', 'write', 'admin'], agentId);
  return { tenant, identity, ...(await inProcessClient(api.core, identity)) };
}

describe(`MCP in-process on ${engine}`, () => {
  it('lists the seven tools with the annotations of the contract, output schemas and instructions', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    expect(client.getInstructions()).toBe(instructions(api.core.config.sessionTtlHours));
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(
      ['correct', 'end_session', 'purge_subject', 'recall', 'remember', 'start_session', 'write_canon'].sort(),
    );
    expect(byName.recall?.annotations?.readOnlyHint).toBe(true);
    expect(byName.end_session?.annotations?.idempotentHint).toBe(true);
    expect(byName.purge_subject?.annotations?.destructiveHint).toBe(true);
    expect(byName.write_canon?.annotations?.idempotentHint).toBe(true);
    for (const name of ['remember', 'start_session', 'end_session', 'write_canon']) {
      expect(byName[name]?.annotations?.destructiveHint).toBe(false);
      expect(byName[name]?.annotations?.readOnlyHint).toBe(false);
    }
    for (const tool of tools) {
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description?.length).toBeGreaterThan(80);
    }
    expect(byName.recall?.description).toMatch(/start of every task about a subject/);
    expect(Object.keys(byName.remember?.inputSchema.properties ?? {}).sort()).toEqual(
      ['agent_id', 'content', 'metadata', 'occurred_at', 'pinned', 'session_id', 'subject', 'ttl_seconds'].sort(),
    );
    expect(byName.remember?.inputSchema.required).toEqual(['content']);
    expect(byName.purge_subject?.inputSchema.required?.sort()).toEqual(['confirm', 'subject']);
    await close();
  });

  it('remember answers the stored Memory with its outcome, as structuredContent and as text', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    const result = await call(client, 'remember', {
      content: 'Prefers to be contacted by email',
      subject: 'customer-42',
      metadata: { source: 'chat' },
    });
    expect(result.isError).toBeFalsy();
    const memory = StoredMemoryObject.parse(result.structuredContent);
    expect(memory).toMatchObject({
      content: 'Prefers to be contacted by email',
      binding: 'anchored',
      anchor_external_id: 'customer-42',
      outcome: 'created',
      metadata: { source: 'chat' },
    });
    expect(text(result)).toContain('customer-42');
    expect(text(result)).toContain(memory.id);
    await close();
  });

  it('remember takes a list of facts: one result per fact, in order, a repeated one reinforced', async () => {
    const api = await testApi({ config: { CONTENT_LIMIT_CHARS: '60' } });
    const { client, close } = await adminClient(api);
    const result = await call(client, 'remember', {
      content: ['Prefers email', 'Has two dogs', 'prefers EMAIL.', `Writes long notes ${'x'.repeat(60)}`],
      subject: 'customer-43',
    });
    expect(result.isError).toBeFalsy();
    const { results } = result.structuredContent as {
      results: { outcome?: string; memory?: { id: string }; problem?: { status: number } }[];
    };
    expect(results.map((r) => r.outcome ?? r.problem?.status)).toEqual(['created', 'created', 'reinforced', 413]);
    expect(results[2]?.memory?.id).toBe(results[0]?.memory?.id);
    expect(text(result)).toMatch(/^Stored 3 of 4 facts \(1 refused\)/);
    const tooMany = await call(client, 'remember', { content: Array.from({ length: 101 }, (_, i) => `Fact ${i}`) });
    expect(tooMany.isError).toBe(true);
    await close();
  });

  it('recall composes the subject, the session, private memories and canon, with scores', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    const canon = await ok(client, 'write_canon', { content: 'Contact preferences must always be honoured' });
    expect(CanonObject.parse(canon).binding).toBe('canon');
    expect(canon.outcome).toBe('created');
    const session = SessionObject.parse(await ok(client, 'start_session', { subject: 'customer-7' }));
    expect(session).toMatchObject({ status: 'active', anchor_external_id: 'customer-7' });
    const durable = await ok(client, 'remember', { content: 'Contact by phone after 5 pm', subject: 'customer-7' });
    const shortTerm = await ok(client, 'remember', {
      content: 'Contact again tomorrow about the refund',
      session_id: session.id,
    });
    const mine = await ok(client, 'remember', { content: 'Contact escalations go to the on-call lead' });
    const other = await ok(client, 'remember', { content: 'Contact by phone after 5 pm', subject: 'customer-8' });
    expect(shortTerm.binding).toBe('session');
    expect(mine.binding).toBe('private');

    const result = await call(client, 'recall', {
      query: 'how to contact',
      subject: 'customer-7',
      session_id: session.id,
      limit: 20,
    });
    expect(result.isError).toBeFalsy();
    const results = result.structuredContent?.results as Json[];
    const ids = results.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining([canon.id, durable.id, shortTerm.id, mine.id]));
    expect(ids).not.toContain(other.id);
    for (const r of results) {
      expect(typeof r.score).toBe('number');
      expect(Object.keys(r.score_details).sort()).toEqual(['confidence', 'lexical', 'prior', 'recency', 'semantic']);
    }
    expect(text(result)).toMatch(/^4 memories, best first:/);
    expect(text(result)).toContain('[subject customer-7] Contact by phone after 5 pm');
    expect(text(result)).toContain('[canon] Contact preferences must always be honoured');
    await close();
  });

  it("keeps subjects apart: one subject's recall never returns another's, even word for word", async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    const fact = 'Allergic to penicillin';
    const a = await ok(client, 'remember', { content: fact, subject: 'patient-a' });
    const b = await ok(client, 'remember', { content: fact, subject: 'patient-b' });
    for (const [subject, expected] of [
      ['patient-a', a.id],
      ['patient-b', b.id],
    ]) {
      const { results } = await ok(client, 'recall', { query: fact, subject, limit: 100 });
      expect(results.map((r: { id: string }) => r.id)).toEqual([expected]);
    }
    // Each profile holds its own subject's memory only.
    for (const [subject, expected] of [
      ['patient-a', a.id],
      ['patient-b', b.id],
    ]) {
      const profile = await readJson(client, `memory://subjects/${subject}`);
      expect(profile.memories.map((m: { id: string }) => m.id)).toEqual([expected]);
    }
    // Without a subject, neither is visible; an unknown subject matches nothing and is not created.
    expect((await ok(client, 'recall', { query: fact })).results).toEqual([]);
    expect((await ok(client, 'recall', { query: fact, subject: 'patient-c' })).results).toEqual([]);
    await expect(client.readResource({ uri: 'memory://subjects/patient-c' })).rejects.toThrow(/not found/i);
    await close();
  });

  it("keeps tenants apart: another tenant's subject, session and canon are not found or not listed", async () => {
    const api = await testApi();
    const owner = await adminClient(api);
    const stranger = await adminClient(api);
    await ok(owner.client, 'remember', { content: 'Lives in Lisbon', subject: 'shared-name' });
    const session = await ok(owner.client, 'start_session', {});
    await ok(owner.client, 'write_canon', { content: 'Owner tenant policy' });

    expect((await ok(stranger.client, 'recall', { query: 'Lisbon', subject: 'shared-name' })).results).toEqual([]);
    await expect(stranger.client.readResource({ uri: 'memory://subjects/shared-name' })).rejects.toThrow(/not found/i);
    await expect(stranger.client.readResource({ uri: `memory://sessions/${session.id}` })).rejects.toThrow(
      /not found/i,
    );
    const ended = await call(stranger.client, 'end_session', { session_id: session.id });
    expect(ended.isError).toBe(true);
    expect(text(ended)).toMatch(/^Session not found\./);
    const purge = await call(stranger.client, 'purge_subject', { subject: 'shared-name', confirm: true });
    expect(purge.isError).toBe(true);
    expect(text(purge)).toMatch(/^No such subject "shared-name"/);
    expect((await readJson(stranger.client, 'memory://canon')).canon).toEqual([]);
    const { resources } = await stranger.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['memory://canon']);
    // The owner still has everything.
    const mine = (await ok(owner.client, 'recall', { query: 'Lisbon', subject: 'shared-name' })).results;
    expect(mine.map((r: { content: string }) => r.content).sort()).toEqual(['Lives in Lisbon', 'Owner tenant policy']);
    await owner.close();
    await stranger.close();
  });

  it('refuses tools beyond the key: a read key cannot write_canon, purge_subject or remember', async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const reader = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['read']));
    for (const [tool, args, scope] of [
      ['write_canon', { content: 'A policy' }, 'admin'],
      ['purge_subject', { subject: 'someone', confirm: true }, 'admin'],
      ['remember', { content: 'A fact' }, 'write'],
      ['start_session', {}, 'write'],
      ['end_session', { session_id: randomUUID() }, 'write'],
    ] as const) {
      const result = await call(reader.client, tool, args);
      expect(result.isError, tool).toBe(true);
      expect(text(result)).toBe(
        `The ${tool} tool needs the "${scope}" scope, which this key does not have. ` +
          'Do not retry: ask the user for a key with that scope.',
      );
    }
    expect((await call(reader.client, 'recall', { query: 'anything' })).isError).toBeFalsy();
    // A read-write key stores and recalls but still cannot write canon or purge.
    const writer = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['read', 'write']));
    await ok(writer.client, 'remember', { content: 'A fact', subject: 'someone' });
    expect((await call(writer.client, 'write_canon', { content: 'A policy' })).isError).toBe(true);
    expect((await call(writer.client, 'purge_subject', { subject: 'someone', confirm: true })).isError).toBe(true);
    // A write-only key cannot recall, and is offered no subject or session to read.
    const writeOnly = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['write']));
    const refused = await call(writeOnly.client, 'recall', { query: 'fact' });
    expect(text(refused)).toMatch(/^The recall tool needs the "read" scope/);
    expect((await writeOnly.client.listResources()).resources.map((r) => r.uri)).toEqual(['memory://canon']);
    await expect(writeOnly.client.readResource({ uri: 'memory://subjects/someone' })).rejects.toThrow(/"read" scope/);
    for (const c of [reader, writer, writeOnly]) await c.close();
  });

  it('starts and ends sessions; ending is idempotent and an ended session takes no more memories', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    const session = await ok(client, 'start_session', { metadata: { channel: 'chat' } });
    expect(session).toMatchObject({ status: 'active', anchor_id: null, metadata: { channel: 'chat' } });
    const first = await call(client, 'end_session', { session_id: session.id });
    const ended = SessionObject.parse(first.structuredContent);
    expect(ended.status).toBe('ended');
    expect(ended.expires_at).not.toBeNull();
    expect(text(first)).toContain(session.id);
    const again = await ok(client, 'end_session', { session_id: session.id });
    expect(again).toEqual(ended);
    const late = await call(client, 'remember', { content: 'Too late', session_id: session.id });
    expect(late.isError).toBe(true);
    expect(text(late)).toMatch(/^The session has ended.*start_session/);
    const unknown = await call(client, 'end_session', { session_id: randomUUID() });
    expect(text(unknown)).toMatch(/^Session not found\. Check the id/);
    await close();
  });

  it('purges a subject with confirm: true, and refuses without it or for an unknown subject', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    await ok(client, 'remember', { content: 'Wants to be forgotten', subject: 'gdpr-1' });
    const session = await ok(client, 'start_session', { subject: 'gdpr-1' });
    await ok(client, 'remember', { content: 'Said so on the phone', session_id: session.id });
    await ok(client, 'remember', { content: 'Unrelated subject', subject: 'gdpr-2' });

    const unconfirmed = await call(client, 'purge_subject', { subject: 'gdpr-1', confirm: false });
    expect(unconfirmed.isError).toBe(true);
    expect(text(unconfirmed)).toMatch(/confirm/);
    const missing = await call(client, 'purge_subject', { subject: 'nobody', confirm: true });
    expect(text(missing)).toMatch(/^No such subject "nobody"\./);

    const purged = await call(client, 'purge_subject', { subject: 'gdpr-1', confirm: true });
    expect(purged.isError).toBeFalsy();
    expect(purged.structuredContent).toMatchObject({
      purged: true,
      subject: 'gdpr-1',
      deleted: { memories: 2, sessions: 1 },
    });
    expect(text(purged)).toBe('Erased subject "gdpr-1": 2 memories and 1 sessions deleted.');
    expect((await ok(client, 'recall', { query: 'forgotten phone', subject: 'gdpr-1' })).results).toEqual([]);
    await expect(client.readResource({ uri: 'memory://subjects/gdpr-1' })).rejects.toThrow(/not found/i);
    await expect(client.readResource({ uri: `memory://sessions/${session.id}` })).rejects.toThrow(/not found/i);
    expect((await ok(client, 'recall', { query: 'Unrelated', subject: 'gdpr-2' })).results).toHaveLength(1);
    await close();
  });

  it('writes canon once: the same text again is the existing entry', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    const first = await call(client, 'write_canon', { content: 'Never  share contact details ' });
    expect(first.structuredContent).toMatchObject({ content: 'Never share contact details', outcome: 'created' });
    expect(text(first)).toMatch(/^Canon written: "Never share contact details"/);
    const again = await call(client, 'write_canon', { content: 'Never share contact details' });
    expect(again.structuredContent).toMatchObject({ id: first.structuredContent?.id, outcome: 'existing' });
    expect(text(again)).toMatch(/^Already canon/);
    await close();
  });

  it('lists and reads the resources: subject profiles, canon, and sessions with their memories', async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    await ok(client, 'remember', { content: 'Likes green tea', subject: 'user/with spaces' });
    await ok(client, 'remember', { content: 'Works night shifts', subject: 'user/with spaces' });
    await ok(client, 'write_canon', { content: 'Be kind' });
    const session = await ok(client, 'start_session', { subject: 'user/with spaces' });
    const note = await ok(client, 'remember', { content: 'Is on holiday this week', session_id: session.id });

    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
    expect(templates).toEqual(['memory://sessions/{id}', 'memory://subjects/{subject}']);
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    const subjectUri = 'memory://subjects/user%2Fwith%20spaces';
    expect(uris).toEqual(expect.arrayContaining(['memory://canon', subjectUri, `memory://sessions/${session.id}`]));

    const profile = await readJson(client, subjectUri);
    expect(profile.anchor.anchor_external_id).toBe('user/with spaces');
    expect(profile.memories.map((m: { content: string }) => m.content).sort()).toEqual([
      'Likes green tea',
      'Works night shifts',
    ]);
    expect(profile.truncated).toBe(false);
    const canon = await readJson(client, 'memory://canon');
    expect(canon.canon.map((c: { content: string }) => c.content)).toEqual(['Be kind']);
    const read = await readJson(client, `memory://sessions/${session.id}`);
    expect(read.session).toMatchObject({ id: session.id, status: 'active', anchor_external_id: 'user/with spaces' });
    expect(read.memories.map((m: { id: string }) => m.id)).toEqual([note.id]);
    await expect(client.readResource({ uri: `memory://sessions/${randomUUID()}` })).rejects.toThrow(/not found/i);
    await expect(client.readResource({ uri: 'memory://sessions/not-a-uuid' })).rejects.toThrow(/not found/i);
    await close();
  });

  it('takes the agent id from the argument, else the transport, else the client name', async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const bare = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['read', 'write']), 'my-ide');
    const fromClient = await ok(bare.client, 'remember', { content: 'From the client name' });
    expect(fromClient.agent_id).toBe('my-ide');
    expect((await ok(bare.client, 'remember', { content: 'Named', agent_id: 'explicit' })).agent_id).toBe('explicit');
    const configured = await inProcessClient(
      api.core,
      await identityWithScopes(api, tenant, ['read', 'write'], 'from-env'),
      'my-ide',
    );
    const fromTransport = await ok(configured.client, 'remember', { content: 'From the transport' });
    expect(fromTransport.agent_id).toBe('from-env');
    // Private memories follow the agent id: each agent recalls its own only.
    const recalled = async (c: typeof bare) =>
      (await ok(c.client, 'recall', { query: 'from the', limit: 100 })).results.map((r: { id: string }) => r.id);
    expect(await recalled(bare)).toEqual([fromClient.id]);
    expect(await recalled(configured)).toEqual([fromTransport.id]);
    await bare.close();
    await configured.close();
  });

  it('refuses bad arguments with an actionable line: validation, content limit, unknown session', async () => {
    const api = await testApi({ config: { CONTENT_LIMIT_CHARS: '20' } });
    const { client, close } = await adminClient(api);
    const empty = await call(client, 'remember', { content: '   ' });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toMatch(/content/);
    const long = await call(client, 'remember', { content: 'x'.repeat(21) });
    expect(text(long)).toBe(
      'Content is longer than 20 characters. Store shorter, self-contained statements, one fact per call.',
    );
    const longCanon = await call(client, 'write_canon', { content: 'y'.repeat(21) });
    expect(longCanon.isError).toBe(true);
    const badId = await call(client, 'remember', { content: 'A fact', session_id: 'not-a-uuid' });
    expect(badId.isError).toBe(true);
    expect(text(badId)).toMatch(/session_id/);
    const unknown = await call(client, 'remember', { content: 'A fact', session_id: randomUUID() });
    expect(text(unknown)).toMatch(/^Session not found\./);
    await close();
  });

  it('answers unexpected failures without internals, and logs them', async () => {
    const logged: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logged.push(chunk.toString());
        callback();
      },
    });
    const base = await testCore();
    const core = {
      ...base,
      log: pino({ level: 'error' }, sink),
      embedder: {
        ...base.embedder,
        embed: () => Promise.reject(new Error('connection to 10.0.0.7 refused: SELECT secret FROM internals')),
      },
    };
    const api = await testApi();
    const tenant = await newTenant(api);
    const { client, close } = await inProcessClient(core, await identityWithScopes(api, tenant, ['read', 'write']));
    for (const [tool, args] of [
      ['remember', { content: 'A fact' }],
      ['recall', { query: 'a fact' }],
    ] as const) {
      const result = await call(client, tool, args);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^The memory service failed on this call/);
      expect(text(result)).not.toMatch(/10\.0\.0\.7|SELECT|secret/);
    }
    expect(logged.join('')).toContain('mcp tool failed');
    expect(logged.join('')).toContain('10.0.0.7');
    await close();
  });
});

describe(`the local tenant of agent-memory mcp on ${engine}`, () => {
  it('is created once, also when many starts race, and acts with every scope and no key', async () => {
    const core = await testCore();
    const ids = await Promise.all(Array.from({ length: 5 }, () => ensureLocalTenant(core)));
    expect(new Set(ids).size).toBe(1);
    expect(await ensureLocalTenant(core)).toBe(ids[0]);
    const actor = await localActor(core);
    expect(actor).toMatchObject({ tenantId: ids[0], keyId: null });
    expect([...actor.scopes].sort()).toEqual([...SCOPES].sort());
  });
});
