import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { AgentMemoryError, createAgentMemoryClient, ok } from '../../src/client/index.js';
import { createHttpServer } from '../../src/http/server.js';
import { CreatedWebhookObject, WebhookDeliveryObject, WebhookObject } from '../../src/schemas/webhooks.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { engine, SETUP_TOKEN, testCore } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/** The webhook routes through the typed client, each answer checked strictly against its schema. */
describe(`webhooks through agent-memory/client on ${engine}`, () => {
  let server: Server;
  let baseUrl: string;
  let receiver: Receiver;
  let core: Awaited<ReturnType<typeof testCore>>;
  beforeAll(async () => {
    core = await testCore({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    server = createHttpServer(createApp(core), core.config.httpLimits).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('creates, lists, changes and deletes an endpoint, and lists its deliveries', async () => {
    const setup = await ok(
      createAgentMemoryClient({ baseUrl }).POST('/v1/setup', {
        headers: { 'X-Setup-Token': SETUP_TOKEN },
        body: { org_name: `client-hooks-${Date.now()}-${Math.random()}` },
      }),
    );
    const client = createAgentMemoryClient({ baseUrl, apiKey: setup.api_key });
    const created = await ok(client.POST('/v1/webhooks', { body: { url: receiver.url, events: ['memory.created'] } }));
    expectTypeOf(created.secret).toEqualTypeOf<string>();
    CreatedWebhookObject.strict().parse(created);

    await ok(client.POST('/v1/memories', { body: { agent_id: 'agent', content: 'The printer is on floor two' } }));
    await new WebhookDispatcher(core, { tenantId: setup.tenant_id }).drain();
    const [got] = await receiver.waitFor(1);
    expect(new Webhook(created.secret).verify(got!.raw, got!.headers)).toMatchObject({ type: 'memory.created' });

    const list = await ok(client.GET('/v1/webhooks'));
    expect(list.webhooks.map((w) => w.id)).toEqual([created.id]);
    WebhookObject.strict().parse(list.webhooks[0]);
    const changed = await ok(
      client.PATCH('/v1/webhooks/{id}', { params: { path: { id: created.id } }, body: { events: ['*'] } }),
    );
    expect(changed.events).toEqual(['*']);
    const page = await ok(
      client.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: created.id }, query: { limit: 10 } } }),
    );
    expect(page.deliveries).toHaveLength(1);
    WebhookDeliveryObject.strict().parse(page.deliveries[0]);
    expect(page.deliveries[0]).toMatchObject({ status: 'delivered', event_id: got!.headers['webhook-id'] });

    await ok(client.DELETE('/v1/webhooks/{id}', { params: { path: { id: created.id } } }));
    const gone = await ok(client.GET('/v1/webhooks/{id}', { params: { path: { id: created.id } } })).catch(
      (error: unknown) => error,
    );
    expect(gone).toBeInstanceOf(AgentMemoryError);
    expect((gone as AgentMemoryError).status).toBe(404);
  });
});
