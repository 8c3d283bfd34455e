import { Document } from '@langchain/core/documents';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { FakeChatModel } from '@langchain/core/utils/testing';
import { MessagesAnnotation, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentMemoryRetriever } from '../../src/adapters/langchain/index.js';
import { AgentMemoryStore, UnsupportedStoreOperation } from '../../src/adapters/langgraph/index.js';
import { createAgentMemoryClient, ok } from '../../src/client/index.js';
import { engine } from '../helpers/harness.js';
import { serveForAdapters, type Served } from '../helpers/adapters-server.js';

describe(`agent-memory/langchain and agent-memory/langgraph against a live server on ${engine}`, () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveForAdapters();
  });
  afterAll(() => served.close());

  it("a retrieval chain puts the subject's recalled memories in the model's prompt", async () => {
    const client = await served.tenantClient();
    for (const [subject, content] of [
      ['patient-7', 'Allergic to penicillin'],
      ['patient-8', 'Allergic to shellfish'],
    ] as const) {
      await ok(client.POST('/v1/memories', { body: { agent_id: 'nurse', content, anchor_external_id: subject } }));
    }
    const retriever = new AgentMemoryRetriever({ client, agentId: 'nurse', subject: 'patient-7', limit: 5 });

    const docs = await retriever.invoke('allergies to antibiotics');
    expect(docs).toHaveLength(1);
    expect(docs[0]).toBeInstanceOf(Document);
    expect(docs[0]).toMatchObject({
      pageContent: 'Allergic to penicillin',
      metadata: { binding: 'anchored', subject: 'patient-7', agent_id: 'nurse' },
    });
    expect(docs[0]!.metadata['score']).toBeGreaterThan(0);

    // FakeChatModel answers with the text of the messages it was given: the prompt, as sent.
    const chain = RunnableSequence.from([
      {
        context: retriever.pipe((found: Document[]) => found.map((d) => `- ${d.pageContent}`).join('\n')),
        question: new RunnablePassthrough(),
      },
      ChatPromptTemplate.fromMessages([
        ['system', 'What is known about the patient:\n{context}'],
        ['human', '{question}'],
      ]),
      new FakeChatModel({}),
    ]);
    const answer = await chain.invoke('Any allergies?');
    expect(answer.content).toContain('- Allergic to penicillin');
    expect(answer.content).not.toContain('shellfish');
  });

  it('a LangGraph graph writes and searches memories through the store', async () => {
    const client = await served.tenantClient();
    const store = new AgentMemoryStore({ client, agentId: 'support-bot' });
    const model = new FakeChatModel({});
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('remember', async (state, config: LangGraphRunnableConfig) => {
        const said = state.messages.at(-1)!.text;
        if (said.startsWith('Remember: ')) {
          await config.store!.put(['subjects', 'cust-42'], 'contact', { content: said.slice('Remember: '.length) });
        }
        return {};
      })
      .addNode('answer', async (state, config: LangGraphRunnableConfig) => {
        const question = state.messages.at(-1)!.text;
        const memories = await config.store!.search(['subjects', 'cust-42'], { query: question, limit: 3 });
        const context = memories.map((m) => `- ${String(m.value['content'])}`).join('\n');
        return { messages: [await model.invoke([new SystemMessage(`Known:\n${context}`), ...state.messages])] };
      })
      .addEdge('__start__', 'remember')
      .addEdge('remember', 'answer')
      .compile({ store });

    await graph.invoke({ messages: [new HumanMessage('Remember: Prefers email over phone')] });
    const out = await graph.invoke({ messages: [new HumanMessage('How should we contact them?')] });
    const reply = out.messages.at(-1)!;
    expect(reply).toBeInstanceOf(AIMessage);
    expect(reply.text).toContain('- Prefers email over phone');

    // The value is a memory of the subject, written by the store's agent, with its key.
    const item = await store.get(['subjects', 'cust-42'], 'contact');
    expect(item).toMatchObject({
      namespace: ['subjects', 'cust-42'],
      key: 'contact',
      value: { content: 'Prefers email over phone' },
    });
    expect(item!.createdAt).toBeInstanceOf(Date);
    const anchors = await ok(client.GET('/v1/anchors', { params: { query: { anchor_external_id: 'cust-42' } } }));
    const profile = await ok(
      client.GET('/v1/anchors/{id}/memories', { params: { path: { id: anchors.anchors[0]!.id }, query: {} } }),
    );
    expect(profile.memories.map((m) => [m.content, m.agent_id, m.metadata])).toEqual([
      ['Prefers email over phone', 'support-bot', { key: 'contact', value: { content: 'Prefers email over phone' } }],
    ]);
  });

  it('put replaces by key (a correction), get, delete, search with filters and list namespaces', async () => {
    const client = await served.tenantClient();
    const store = new AgentMemoryStore({ client, agentId: 'support-bot' });
    const ns = ['subjects', 'cust-9'];

    expect(await store.get(ns, 'city')).toBeNull();
    await store.put(ns, 'city', { content: 'Lives in Lisbon', source: 'chat' });
    await store.put(ns, 'pet', { text: 'Has a dog named Rex', source: 'form' });
    await store.put(ns, 'plan', { title: 'Gold plan', detail: 'renews in May' }, ['title', 'detail']);

    // A new text for a key corrects its memory: the old one is kept, superseded, in its history.
    const before = (await store.get(ns, 'city'))!;
    await store.put(ns, 'city', { content: 'Lives in Porto', source: 'chat' });
    expect((await store.get(ns, 'city'))!.value).toEqual({ content: 'Lives in Porto', source: 'chat' });
    const recalled = await ok(
      client.GET('/v1/memories/recall', {
        params: {
          query: { agent_id: 'support-bot', query: 'Lives', anchor_external_id: 'cust-9', include_superseded: 'true' },
        },
      }),
    );
    expect(recalled.results.find((r) => r.content === 'Lives in Lisbon')).toMatchObject({ status: 'superseded' });
    expect(before.value).toEqual({ content: 'Lives in Lisbon', source: 'chat' });

    // Same text, another value: the memory now carries the new value.
    await store.put(ns, 'city', { content: 'Lives in Porto', source: 'crm' });
    expect((await store.get(ns, 'city'))!.value).toEqual({ content: 'Lives in Porto', source: 'crm' });

    const plan = await ok(
      client.GET('/v1/memories/recall', {
        params: { query: { agent_id: 'support-bot', query: 'gold', anchor_external_id: 'cust-9' } },
      }),
    );
    expect(plan.results[0]!.content).toBe('Gold plan\nrenews in May');

    const all = await store.search(ns, { limit: 10 });
    expect(all.map((i) => i.key).sort()).toEqual(['city', 'pet', 'plan']);
    expect((await store.search(ns, { filter: { source: 'form' } })).map((i) => i.key)).toEqual(['pet']);
    const found = await store.search(ns, { query: 'dog', limit: 1 });
    expect(found.map((i) => [i.key, typeof i.score])).toEqual([['pet', 'number']]);

    await store.delete(ns, 'pet');
    expect(await store.get(ns, 'pet')).toBeNull();
    await store.delete(ns, 'pet');

    await store.put(['subjects', 'cust-10'], 'x', { content: 'Speaks Portuguese' });
    expect(await store.listNamespaces({ prefix: ['subjects'] })).toEqual([
      ['subjects', 'cust-9'],
      ['subjects', 'cust-10'],
    ]);
    expect(await store.listNamespaces({ suffix: ['cust-10'] })).toEqual([['subjects', 'cust-10']]);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([['subjects']]);
    expect(await store.listNamespaces({ limit: 1, offset: 1 })).toEqual([['subjects', 'cust-10']]);
  });

  it('puts the old value back when replacing a value of the same text fails half-way', async () => {
    const apiKey = await served.tenantKey();
    // The store that follows the delete fails as a network would; every other request goes through.
    let failNextStore = false;
    const flaky = createAgentMemoryClient({
      baseUrl: served.baseUrl,
      apiKey,
      fetch: async (request: Request) => {
        if (request.method === 'DELETE') failNextStore = true;
        else if (failNextStore && request.method === 'POST') {
          failNextStore = false;
          throw new TypeError('fetch failed');
        }
        return fetch(request);
      },
    });
    const store = new AgentMemoryStore({ client: flaky, agentId: 'support-bot' });
    await store.put(['subjects', 'cust-3'], 'city', { content: 'Lives in Lisbon', source: 'chat' });
    await expect(
      store.put(['subjects', 'cust-3'], 'city', { content: 'Lives in Lisbon', source: 'crm' }),
    ).rejects.toThrow('fetch failed');
    expect((await store.get(['subjects', 'cust-3'], 'city'))!.value).toEqual({
      content: 'Lives in Lisbon',
      source: 'chat',
    });
  });

  it("maps ['agents', id] to private memories, and refuses what cannot map with a clear error", async () => {
    const client = await served.tenantClient();
    const store = new AgentMemoryStore({ client, agentId: 'support-bot' });
    await store.put(['agents', 'planner'], 'style', { content: 'Write plans as short bullet lists' });
    const found = await store.search(['agents', 'planner'], { query: 'plans bullet' });
    expect(found.map((i) => [i.key, i.value])).toEqual([['style', { content: 'Write plans as short bullet lists' }]]);
    // Private: another agent recalls nothing of it.
    expect(await store.search(['agents', 'other'], { query: 'plans bullet' })).toEqual([]);

    const refusals: [string, () => Promise<unknown>, RegExp][] = [
      [
        'get by key in an agent namespace',
        () => store.get(['agents', 'planner'], 'style'),
        /lists no agent's private memories/,
      ],
      ['delete in an agent namespace', () => store.delete(['agents', 'planner'], 'style'), /DELETE \/v1\/memories/],
      ['search an agent without a query', () => store.search(['agents', 'planner']), /give a query/],
      ['an unknown namespace', () => store.put(['users', 'u1', 'notes'], 'k', { content: 'x' }), /maps to nothing/],
      ['search across subjects', () => store.search(['subjects'], { query: 'x' }), /recall reads one subject/],
      ['a value without text', () => store.put(['subjects', 's'], 'k', { n: 1 }), /needs its text/],
      ['a filter operator', () => store.search(['subjects', 's'], { filter: { n: { $gt: 1 } } }), /only equality/],
      ['past recall', () => store.search(['subjects', 's'], { query: 'x', offset: 95, limit: 10 }), /first 100/],
      ['listing agents', () => store.listNamespaces({ prefix: ['agents'] }), /lists no agents/],
    ];
    for (const [what, call, message] of refusals) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(UnsupportedStoreOperation);
      expect((error as Error).message, what).toMatch(message);
    }

    // Two keys cannot share one memory: the same fact under another key is refused.
    await store.put(['subjects', 's'], 'a', { content: 'Prefers tea' });
    await expect(store.put(['subjects', 's'], 'b', { content: 'Prefers tea' })).rejects.toThrow(/under the key "a"/);
    expect(await store.get(['subjects', 's'], 'b')).toBeNull();
  });
});
