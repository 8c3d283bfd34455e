import { describe, expect, it } from 'vitest';
import { CONTEXT_LIMIT } from '../../src/mcp/prompts.js';
import { canonCap } from '../../src/retrieval/recall.js';
import { engine, newTenant, testApi, type TestApi } from '../helpers/harness.js';
import { identityWithScopes, inProcessClient, ok } from '../helpers/mcp.js';

/** The prompts of docs/api.md §7 and the completion of their subject argument, in-process. */

async function clientWith(api: TestApi, scopes: Parameters<typeof identityWithScopes>[2]) {
  const tenant = await newTenant(api);
  return inProcessClient(api.core, await identityWithScopes(api, tenant, scopes));
}

const promptText = (result: { messages: { content: { type: string; text?: string } }[] }): string =>
  result.messages.map((m) => (m.content.type === 'text' ? (m.content.text ?? '') : '')).join('\n');

describe(`MCP prompts on ${engine}`, () => {
  it('lists subject_context and remember_conversation with their arguments', async () => {
    const api = await testApi();
    const { client, close } = await clientWith(api, ['read']);
    expect(client.getServerCapabilities()?.prompts).toBeDefined();
    const { prompts } = await client.listPrompts();
    const byName = Object.fromEntries(prompts.map((p) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(['remember_conversation', 'subject_context']);
    expect(byName.subject_context?.arguments?.map((a) => [a.name, a.required])).toEqual([
      ['subject', true],
      ['session_id', false],
    ]);
    expect(byName.remember_conversation?.arguments?.find((a) => a.name === 'conversation')?.required).toBe(true);
    await close();
  });

  it("subject_context composes canon under the cap, the subject's profile and the session, and nothing of another subject", async () => {
    const api = await testApi();
    const { client, close } = await clientWith(api, ['read', 'write', 'admin']);
    const cap = canonCap(CONTEXT_LIMIT);
    for (let i = 0; i <= cap; i++) await ok(client, 'write_canon', { content: `Standing rule number ${i}` });
    await ok(client, 'remember', { content: 'Prefers email over phone', subject: 'customer-1' });
    await ok(client, 'remember', { content: 'Lives in Lisbon and likes trams', subject: 'customer-2' });
    const session = await ok(client, 'start_session', { subject: 'customer-1' });
    await ok(client, 'remember', { content: 'Asked about the invoice of March', session_id: session.id });

    const result = await client.getPrompt({
      name: 'subject_context',
      arguments: { subject: 'customer-1', session_id: session.id },
    });
    expect(result.messages).toHaveLength(1);
    expect(result.messages[0]?.role).toBe('user');
    const text = promptText(result);
    expect(text).toContain('Prefers email over phone');
    expect(text).toContain('Asked about the invoice of March');
    expect(text).not.toContain('Lisbon');
    expect(text.match(/Standing rule number/g)).toHaveLength(cap);

    const unknown = promptText(await client.getPrompt({ name: 'subject_context', arguments: { subject: 'nobody' } }));
    expect(unknown).toContain('Nothing is known about nobody yet.');
    await close();
  });

  it('subject_context refuses a key without the read scope and a session of another tenant', async () => {
    const api = await testApi();
    const writer = await clientWith(api, ['write']);
    await expect(
      writer.client.getPrompt({ name: 'subject_context', arguments: { subject: 'customer-1' } }),
    ).rejects.toThrow(/read/);
    const other = await clientWith(api, ['read', 'write']);
    const theirs = await ok(other.client, 'start_session', { subject: 'customer-1' });
    const reader = await clientWith(api, ['read']);
    await expect(
      reader.client.getPrompt({ name: 'subject_context', arguments: { subject: 'customer-1', session_id: theirs.id } }),
    ).rejects.toThrow(/not found/i);
    await Promise.all([writer.close(), other.close(), reader.close()]);
  });

  it('remember_conversation asks for one remember call per fact, with the subject and the conversation', async () => {
    const api = await testApi();
    const { client, close } = await clientWith(api, ['read', 'write']);
    const text = promptText(
      await client.getPrompt({
        name: 'remember_conversation',
        arguments: { conversation: 'user: I moved to Porto last week', subject: 'customer-9' },
      }),
    );
    expect(text).toContain('`remember`');
    expect(text).toContain('"customer-9"');
    expect(text).toContain('user: I moved to Porto last week');
    await close();
  });

  it("completes subject ids from the caller's tenant by prefix, and none for a key that cannot read", async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const admin = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['read', 'write']));
    for (const subject of ['customer-1', 'customer-2', 'project-x']) {
      await ok(admin.client, 'remember', { content: `A fact about ${subject}`, subject });
    }
    const elsewhere = await clientWith(api, ['read', 'write']);
    await ok(elsewhere.client, 'remember', { content: 'Not this tenant', subject: 'customer-3' });

    const complete = (client: typeof admin.client, name: string, value: string) =>
      client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'subject', value } });
    expect(admin.client.getServerCapabilities()?.completions).toBeDefined();
    expect((await complete(admin.client, 'subject_context', 'cust')).completion.values.sort()).toEqual([
      'customer-1',
      'customer-2',
    ]);
    expect((await complete(admin.client, 'remember_conversation', 'proj')).completion.values).toEqual(['project-x']);
    const writer = await inProcessClient(api.core, await identityWithScopes(api, tenant, ['write']));
    expect((await complete(writer.client, 'subject_context', 'cust')).completion.values).toEqual([]);
    await Promise.all([admin.close(), elsewhere.close(), writer.close()]);
  });
});
