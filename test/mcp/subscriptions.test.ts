import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { CANON_URI, sessionUri, subjectUri } from '../../src/mcp/resources.js';
import { startCore } from '../../src/start-core.js';
import { engine, newTenant, testApi, testConfig, type TestApi } from '../helpers/harness.js';
import { identityWithScopes, inProcessClient, ok } from '../helpers/mcp.js';

/**
 * resources/subscribe: a subscribed client hears `notifications/resources/updated` after each
 * committed change of what it watches, and of nothing else. No test waits for a silence: the canon
 * resource, written last, is the barrier, since changes are heard in the order they commit.
 */

async function adminClient(api: TestApi) {
  const tenant = await newTenant(api);
  const identity = await identityWithScopes(api, tenant, ['read', 'write', 'admin']);
  return { tenant, ...(await inProcessClient(api.core, identity)) };
}

/** The URIs the client is told of, in order, and a way to wait for the next one naming `uri`. */
function updates(client: Client) {
  const heard: string[] = [];
  const waiting: { uri: string; resolve: () => void }[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    heard.push(notification.params.uri);
    for (const w of waiting.splice(0)) {
      if (w.uri === notification.params.uri) w.resolve();
      else waiting.push(w);
    }
  });
  return {
    heard,
    next: (uri: string) => new Promise<void>((resolve) => waiting.push({ uri, resolve })),
  };
}

describe(`MCP resource subscriptions on ${engine}`, () => {
  it("hears one update after a store for the subject, none for another subject or another tenant's", async () => {
    const api = await testApi();
    const mine = await adminClient(api);
    const theirs = await adminClient(api);
    expect(mine.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const x = subjectUri('customer-x');
    const { heard, next } = updates(mine.client);
    // Subscribed before the subject has any memory: its first one is the update.
    await mine.client.subscribeResource({ uri: x });
    await mine.client.subscribeResource({ uri: CANON_URI });

    await ok(mine.client, 'remember', { content: 'Prefers tea', subject: 'customer-y' });
    await ok(theirs.client, 'remember', { content: 'Prefers coffee', subject: 'customer-x' });
    await ok(theirs.client, 'write_canon', { content: 'Another organisation rule' });
    const heardX = next(x);
    await ok(mine.client, 'remember', { content: 'Prefers green tea', subject: 'customer-x' });
    await heardX;
    const heardCanon = next(CANON_URI);
    await ok(mine.client, 'write_canon', { content: 'Always answer politely' });
    await heardCanon;
    expect(heard).toEqual([x, CANON_URI]);

    // Once unsubscribed, a store for the subject is not heard.
    await mine.client.unsubscribeResource({ uri: x });
    await ok(mine.client, 'remember', { content: 'Prefers black tea', subject: 'customer-x' });
    const again = next(CANON_URI);
    await ok(mine.client, 'write_canon', { content: 'Always answer in time' });
    await again;
    expect(heard).toEqual([x, CANON_URI, CANON_URI]);
    await Promise.all([mine.close(), theirs.close()]);
  });

  it("hears a session's new memories, and a subject's purge", async () => {
    const api = await testApi();
    const { client, close } = await adminClient(api);
    const session = await ok(client, 'start_session', { subject: 'customer-s' });
    const { heard, next } = updates(client);
    await client.subscribeResource({ uri: sessionUri(session.id) });
    await client.subscribeResource({ uri: subjectUri('customer-s') });
    const inSession = next(sessionUri(session.id));
    await ok(client, 'remember', { content: 'Asked for a refund', session_id: session.id });
    await inSession;
    const stored = next(subjectUri('customer-s'));
    await ok(client, 'remember', { content: 'Owns a bakery', subject: 'customer-s' });
    await stored;
    const gone = next(subjectUri('customer-s'));
    await ok(client, 'purge_subject', { subject: 'customer-s', confirm: true });
    await gone;
    expect(heard[0]).toBe(sessionUri(session.id));
    expect(heard.at(-1)).toBe(subjectUri('customer-s'));
    await close();
  });

  it('refuses what the key may not read: a subject without the read scope, another tenant’s session', async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const writer = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['write']));
    await expect(writer.client.subscribeResource({ uri: subjectUri('customer-1') })).rejects.toThrow(/read/);
    const other = await adminClient(api);
    const theirs = await ok(other.client, 'start_session', {});
    const reader = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['read']));
    await expect(reader.client.subscribeResource({ uri: sessionUri(theirs.id) })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(reader.client.subscribeResource({ uri: 'memory://elsewhere' })).rejects.toMatchObject({
      code: -32002,
    });
    await Promise.all([writer.close(), other.close(), reader.close()]);
  });

  it.runIf(engine === 'postgres')('hears a store made by another process on the same database', async () => {
    const api = await testApi();
    const { tenant, client, close } = await adminClient(api);
    const other = await startCore(testConfig(), { embedder: createHashEmbedder(256), log: pino({ level: 'silent' }) });
    try {
      const elsewhere = await inProcessClient(other.core, await identityWithScopes(api, tenant, ['read', 'write']));
      const { next } = updates(client);
      await client.subscribeResource({ uri: subjectUri('customer-p') });
      const heard = next(subjectUri('customer-p'));
      await ok(elsewhere.client, 'remember', { content: 'Works nights', subject: 'customer-p' });
      await heard;
      await elsewhere.close();
    } finally {
      await other.close();
      await close();
    }
  });
});
