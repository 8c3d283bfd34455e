import { describe, expect, it } from 'vitest';
import { writeCanon } from '../../src/domain/records/canon.js';
import type { Actor } from '../../src/domain/core.js';
import { ingestConversation } from '../../src/domain/store/ingest.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { testCore } from '../helpers/harness.js';

// The limit is the domain's: a caller that reaches the core without a transport is refused too.
describe('the content limit, enforced by the domain', () => {
  async function setup() {
    const core = await testCore({ config: { CONTENT_LIMIT_CHARS: '20' } });
    const tenant = await createTenant(core, `limit-${Date.now()}-${Math.random()}`);
    const actor: Actor = {
      tenantId: tenant.tenantId,
      keyId: tenant.keyId,
      scopes: new Set(['read', 'write', 'admin']),
    };
    return { core, actor };
  }
  const long = 'x'.repeat(21);

  it('refuses a store, canon and an ingest message over the limit with payload_too_large', async () => {
    const { core, actor } = await setup();
    await expect(storeMemory(core, actor, { agentId: 'a', content: long, anchor: {} })).rejects.toMatchObject({
      code: 'payload_too_large',
      detail: 'content is longer than 20 characters',
    });
    await expect(writeCanon(core, actor, { agentId: 'a', content: long })).rejects.toMatchObject({
      code: 'payload_too_large',
    });
    const refused = ingestConversation(core, actor, {
      agentId: 'a',
      messages: [
        { role: 'user', content: 'short' },
        { role: 'user', content: long },
      ],
      anchor: {},
    });
    await expect(refused).rejects.toMatchObject({ code: 'payload_too_large' });
    await expect(refused).rejects.toHaveProperty('detail', 'messages.1.content is longer than 20 characters');
  });

  it('stores content at the limit', async () => {
    const { core, actor } = await setup();
    const result = await storeMemory(core, actor, { agentId: 'a', content: 'y'.repeat(20), anchor: {} });
    expect(result.outcome).toBe('created');
  });
});
