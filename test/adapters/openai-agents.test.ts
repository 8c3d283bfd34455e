import { Agent, run, type AgentInputItem } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMemoryTools, AgentMemorySession } from '../../src/adapters/openai-agents/index.js';
import { AgentMemoryError, ok } from '../../src/client/index.js';
import { engine } from '../helpers/harness.js';
import { serveForAdapters, type Served } from '../helpers/adapters-server.js';

const textOfInput = (input: string | AgentInputItem[]) => JSON.stringify(input);

describe(`agent-memory/openai-agents against a live server on ${engine}`, () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveForAdapters();
  });
  afterAll(() => served.close());

  it('an agent calls the remember and recall tools against the service', async () => {
    const client = await served.tenantClient();
    const model = new ScriptedModel([
      [functionCall('remember', { content: 'Prefers email over phone' }, { callId: 'call-1' })],
      [assistantMessage('Noted.')],
      [functionCall('recall', { query: 'contact', limit: null }, { callId: 'call-2' })],
      [assistantMessage('By email.')],
    ]);
    const agent = new Agent({
      name: 'support',
      instructions: 'Remember what lasts; recall before answering.',
      model,
      tools: agentMemoryTools({ client, agentId: 'support-bot', subject: 'cust-42' }),
    });

    expect((await run(agent, 'I prefer email.')).finalOutput).toBe('Noted.');
    const anchors = await ok(client.GET('/v1/anchors', { params: { query: { anchor_external_id: 'cust-42' } } }));
    const profile = await ok(
      client.GET('/v1/anchors/{id}/memories', { params: { path: { id: anchors.anchors[0]!.id }, query: {} } }),
    );
    expect(profile.memories.map((m) => [m.content, m.agent_id])).toEqual([['Prefers email over phone', 'support-bot']]);

    expect((await run(agent, 'How do I reach them?')).finalOutput).toBe('By email.');
    // The recall tool's answer went back to the model.
    const afterRecall = textOfInput(model.calls[3]!.request.input);
    expect(afterRecall).toContain('Prefers email over phone');
    model.assertComplete();
  });

  it("keeps a conversation's items in one of the service's sessions, across runs and session objects", async () => {
    const client = await served.tenantClient();
    const model = new ScriptedModel([
      [assistantMessage('Hello Ana.')],
      [assistantMessage('yes')],
      [assistantMessage('yes')],
    ]);
    const agent = new Agent({ name: 'support', instructions: 'Be brief.', model });
    const session = new AgentMemorySession({ client, agentId: 'support-bot', subject: 'cust-7' });

    await run(agent, 'Hi, I am Ana and I live in Lisbon.', { session });
    const sessionId = await session.getSessionId();
    // A session of the service, of the subject, started on first use.
    const started = await ok(client.GET('/v1/sessions/{id}', { params: { path: { id: sessionId } } }));
    expect(started).toMatchObject({ agent_id: 'support-bot', anchor_external_id: 'cust-7', status: 'active' });

    // Another object over the same session (another process, say) reads the same history.
    const again = new AgentMemorySession({ client, agentId: 'support-bot', sessionId });
    await run(agent, 'Still there?', { session: again });
    // The history was in the model's input: the first run's items, then the new message.
    const input = textOfInput(model.calls[1]!.request.input);
    expect(input.indexOf('I live in Lisbon')).toBeGreaterThan(-1);
    expect(input.indexOf('Hello Ana.')).toBeGreaterThan(input.indexOf('I live in Lisbon'));
    expect(input.indexOf('Still there?')).toBeGreaterThan(input.indexOf('Hello Ana.'));

    // The same words twice are two items, in order: a transcript is not a set of beliefs.
    await run(agent, 'Still there?', { session: again });
    const items = await again.getItems();
    const said = items.map((i) => JSON.stringify(i));
    expect(said).toHaveLength(6);
    expect(said.filter((s) => s.includes('Still there?'))).toHaveLength(2);
    expect(said.filter((s) => s.includes('"yes"'))).toHaveLength(2);
    expect(said[0]).toContain('I live in Lisbon');
    expect(await again.getItems(2)).toEqual(items.slice(-2));

    // The items are memories of the session: recall with the session finds what was said.
    const recalled = await ok(
      client.GET('/v1/memories/recall', {
        params: { query: { agent_id: 'support-bot', query: 'Lisbon', session_id: sessionId } },
      }),
    );
    expect(recalled.results[0]).toMatchObject({
      binding: 'session',
      content: 'user: Hi, I am Ana and I live in Lisbon.',
    });

    const popped = await again.popItem();
    expect(popped).toEqual(items.at(-1));
    expect(await session.getItems()).toEqual(items.slice(0, -1));

    await session.clearSession();
    expect(await again.getItems()).toEqual([]);
    expect(await again.popItem()).toBeUndefined();
  });

  it('refuses to add to an ended session with the service error', async () => {
    const client = await served.tenantClient();
    const session = new AgentMemorySession({ client, agentId: 'support-bot' });
    const id = await session.getSessionId();
    await ok(client.POST('/v1/sessions/{id}/end', { params: { path: { id } } }));
    const failure = await session.addItems([{ role: 'user', content: 'late' }]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentMemoryError);
    expect((failure as AgentMemoryError).code).toBe('session_ended');
  });
});
