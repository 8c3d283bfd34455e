import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { AgentMemoryError, createAgentMemoryClient, ok, type AgentMemoryClient } from '../../src/client/index.js';
import { createHttpServer } from '../../src/http/server.js';
import { AnchorObject, RecallResponse, StoreBatchResponse, StoredMemoryObject } from '../../src/schemas/objects.js';
import { engine, SETUP_TOKEN, testCore } from '../helpers/harness.js';

/**
 * The typed client against a live server. The compiler checks every call here against the types
 * generated from the server's OpenAPI document (npm run typecheck covers this file), and each
 * answer is checked at run time, strictly, against the schema the document was made from: so the
 * types describe the server's real answers, field for field.
 */
describe(`agent-memory/client against a live server on ${engine}`, () => {
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    const core = await testCore();
    server = createHttpServer(createApp(core), core.config.httpLimits).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  async function tenantClient(): Promise<AgentMemoryClient> {
    const anonymous = createAgentMemoryClient({ baseUrl });
    const setup = await ok(
      anonymous.POST('/v1/setup', {
        headers: { 'X-Setup-Token': SETUP_TOKEN },
        body: { org_name: `client-${Date.now()}-${Math.random()}` },
      }),
    );
    expectTypeOf(setup.api_key).toEqualTypeOf<string>();
    return createAgentMemoryClient({ baseUrl, apiKey: setup.api_key });
  }

  it('stores a batch with typed items and per-item results', async () => {
    const client = await tenantClient();
    const answer = await ok(
      client.POST('/v1/memories/batch', {
        body: {
          items: [
            { agent_id: 'support-bot', content: 'Prefers email over phone', anchor_external_id: 'cust-43' },
            { agent_id: 'support-bot', content: 'prefers email over PHONE', anchor_external_id: 'cust-43' },
            { agent_id: 'support-bot', content: ' ' },
          ],
        },
      }),
    );
    // The synchronous answer (a 202 would be the job of ?async=true).
    if (!('results' in answer)) throw new Error('expected the 200 answer');
    const { results } = answer;
    expectTypeOf(results[0]!.outcome).toEqualTypeOf<'created' | 'reinforced' | 'promoted' | undefined>();
    expect(StoreBatchResponse.strict().parse({ results })).toEqual({ results });
    expect(results.map((r) => r.outcome ?? r.problem?.code)).toEqual(['created', 'reinforced', 'invalid_request']);
    expect(results[1]?.memory?.id).toBe(results[0]?.memory?.id);
  });

  it('stores, recalls, reads a subject and exports it with typed requests and answers', async () => {
    const client = await tenantClient();
    const stored = await ok(
      client.POST('/v1/memories', {
        body: { agent_id: 'support-bot', content: 'Prefers email over phone', anchor_external_id: 'cust-42' },
      }),
    );
    expectTypeOf(stored.outcome).toEqualTypeOf<'created' | 'reinforced' | 'promoted'>();
    expectTypeOf(stored.anchor_id).toEqualTypeOf<string | null>();
    expect(StoredMemoryObject.strict().parse(stored)).toEqual(stored);

    const recalled = await ok(
      client.GET('/v1/memories/recall', {
        params: { query: { agent_id: 'support-bot', query: 'how to contact', anchor_external_id: 'cust-42' } },
      }),
    );
    expectTypeOf(recalled.results[0]!.score_details.semantic).toEqualTypeOf<number>();
    expect(RecallResponse.parse(recalled).results.map((r) => r.content)).toEqual(['Prefers email over phone']);
    for (const r of recalled.results) RecallResponse.shape.results.element.strict().parse(r);

    const anchorId = stored.anchor_id ?? '';
    const anchor = await ok(client.GET('/v1/anchors/{id}', { params: { path: { id: anchorId } } }));
    expect(AnchorObject.strict().parse(anchor)).toMatchObject({ anchor_external_id: 'cust-42', memory_count: 1 });

    const subject = await ok(client.GET('/v1/anchors/{id}/export', { params: { path: { id: anchorId } } }));
    expectTypeOf(subject.format).toEqualTypeOf<'agent-memory-subject'>();
    expect(subject.memories.map((m) => [m.content, m.mentioned_in_sessions])).toEqual([
      ['Prefers email over phone', []],
    ]);

    const ndjson = await ok(client.GET('/v1/export', { params: { query: {} }, parseAs: 'text' }));
    expect(
      ndjson
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { type: string }).type),
    ).toEqual(['header', 'anchor', 'memory', 'end']);
  });

  it('recalls with a filter through POST, typed', async () => {
    const client = await tenantClient();
    const body = (content: string, topic: string) => ({
      body: { agent_id: 'support-bot', content, anchor_external_id: 'cust-7', metadata: { topic } },
    });
    const billing = await ok(client.POST('/v1/memories', body('Invoice 12 is unpaid', 'billing')));
    await ok(client.POST('/v1/memories', body('Prefers the phone', 'contact')));
    const recalled = await ok(
      client.POST('/v1/memories/recall', {
        body: {
          agent_id: 'support-bot',
          query: 'invoice phone',
          anchor_external_id: 'cust-7',
          filter: { 'metadata.topic': { $in: ['billing'] } },
        },
      }),
    );
    expect(RecallResponse.strict().parse(recalled)).toEqual(recalled);
    expect(recalled.results.map((r) => r.id)).toEqual([billing.id]);
    const profile = await ok(
      client.GET('/v1/anchors/{id}/memories', {
        params: {
          path: { id: billing.anchor_id ?? '' },
          query: { filter: JSON.stringify({ 'metadata.topic': 'contact' }) },
        },
      }),
    );
    expect(profile.memories.map((m) => m.content)).toEqual(['Prefers the phone']);
  });

  it('throws the problem, typed, for a failed call', async () => {
    const client = await tenantClient();
    const missing = await client.GET('/v1/anchors/{id}', {
      params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
    });
    // openapi-fetch's own shape: the error is the problem the document declares for 404.
    expect(missing.error?.code).toBe('not_found');
    const error = await ok(client.POST('/v1/memories', { body: { agent_id: 'a', content: '' } })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentMemoryError);
    expect((error as AgentMemoryError).problem).toMatchObject({
      status: 400,
      code: 'invalid_request',
      errors: [{ path: 'content', message: expect.any(String) }],
    });
  });
});
