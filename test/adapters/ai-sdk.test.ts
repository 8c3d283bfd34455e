import { generateText, isStepCount, streamText, wrapLanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMemoryMiddleware, agentMemoryTools } from '../../src/adapters/ai-sdk/index.js';
import { AgentMemoryError, createAgentMemoryClient, ok } from '../../src/client/index.js';
import { engine } from '../helpers/harness.js';
import { serveForAdapters, type Served } from '../helpers/adapters-server.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const stop = { unified: 'stop' as const, raw: 'stop' };

/** The text of a prompt the mock model was called with, whatever its parts. */
function promptText(prompt: { role: string; content: unknown }[]): string {
  return prompt
    .map((m) =>
      typeof m.content === 'string'
        ? `${m.role}: ${m.content}`
        : `${m.role}: ${(m.content as { type: string; text?: string }[]).map((p) => p.text ?? JSON.stringify(p)).join(' ')}`,
    )
    .join('\n');
}

describe(`agent-memory/ai-sdk against a live server on ${engine}`, () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveForAdapters();
  });
  afterAll(() => served.close());

  it('generateText calls the remember tool, then the recall tool, against the service', async () => {
    const client = await served.tenantClient();
    const tools = agentMemoryTools({ client, agentId: 'support-bot', subject: 'cust-42' });
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call-1',
              toolName: 'remember',
              input: JSON.stringify({ content: 'Prefers email over phone' }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'Noted.' }], finishReason: stop, usage, warnings: [] },
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call-2',
              toolName: 'recall',
              input: JSON.stringify({ query: 'contact' }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'By email.' }], finishReason: stop, usage, warnings: [] },
      ],
    });

    const stored = await generateText({ model, tools, prompt: 'I prefer email.', stopWhen: isStepCount(3) });
    expect(stored.text).toBe('Noted.');
    const storedResult = stored.steps[0]!.toolResults[0]!;
    expect(storedResult.output).toMatchObject({ outcome: 'created', binding: 'anchored' });

    // The memory is the service's: the subject's profile holds it.
    const anchors = await ok(client.GET('/v1/anchors', { params: { query: { anchor_external_id: 'cust-42' } } }));
    const profile = await ok(
      client.GET('/v1/anchors/{id}/memories', { params: { path: { id: anchors.anchors[0]!.id }, query: {} } }),
    );
    expect(profile.memories.map((m) => m.content)).toEqual(['Prefers email over phone']);

    const recalled = await generateText({ model, tools, prompt: 'How do I reach them?', stopWhen: isStepCount(3) });
    expect(recalled.text).toBe('By email.');
    expect(recalled.steps[0]!.toolResults[0]!.output).toEqual([
      expect.objectContaining({ content: 'Prefers email over phone', binding: 'anchored' }),
    ]);
    // The tool result went back to the model in the next step's prompt.
    expect(promptText(model.doGenerateCalls[3]!.prompt)).toContain('Prefers email over phone');
  });

  it("the middleware puts the subject's memories in the prompt of generateText and streamText", async () => {
    const client = await served.tenantClient();
    await ok(
      client.POST('/v1/memories', {
        body: { agent_id: 'support-bot', content: 'Allergic to penicillin', anchor_external_id: 'patient-7' },
      }),
    );
    await ok(
      client.POST('/v1/memories', {
        body: { agent_id: 'support-bot', content: 'Allergic to shellfish', anchor_external_id: 'patient-8' },
      }),
    );
    const mock = new MockLanguageModelV4({
      doGenerate: { content: [{ type: 'text', text: 'ok' }], finishReason: stop, usage, warnings: [] },
      doStream: {
        stream: convertArrayToReadableStream([
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'ok' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: stop, usage },
        ]),
      },
    });
    const model = wrapLanguageModel({
      model: mock,
      middleware: agentMemoryMiddleware({ client, agentId: 'support-bot', subject: 'patient-7' }),
    });

    await generateText({ model, system: 'You are a pharmacist.', prompt: 'Any allergies to antibiotics?' });
    const prompt = mock.doGenerateCalls[0]!.prompt;
    expect(prompt.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(prompt[0]).toMatchObject({ content: 'You are a pharmacist.' });
    expect(prompt[1]!.content).toContain('- Allergic to penicillin');
    // Another subject's memory is not this subject's.
    expect(promptText(prompt)).not.toContain('shellfish');

    const streamed = streamText({ model, prompt: 'Which allergy again?' });
    expect(await streamed.text).toBe('ok');
    expect(promptText(mock.doStreamCalls[0]!.prompt)).toContain('Allergic to penicillin');
  });

  it('leaves a prompt without memories unchanged, and fails the call when recall fails', async () => {
    const client = await served.tenantClient();
    const mock = new MockLanguageModelV4({
      doGenerate: { content: [{ type: 'text', text: 'ok' }], finishReason: stop, usage, warnings: [] },
    });
    const model = wrapLanguageModel({
      model: mock,
      middleware: agentMemoryMiddleware({ client, agentId: 'support-bot', subject: 'nobody-yet' }),
    });
    await generateText({ model, prompt: 'Hello' });
    expect(mock.doGenerateCalls[0]!.prompt.map((m) => m.role)).toEqual(['user']);

    const refused = wrapLanguageModel({
      model: mock,
      // A key the service does not know: recall answers 401.
      middleware: agentMemoryMiddleware({
        client: createAgentMemoryClient({ baseUrl: served.baseUrl, apiKey: `mk_${'x'.repeat(40)}` }),
        agentId: 'support-bot',
        subject: 'x',
      }),
    });
    const failure = await generateText({ model: refused, prompt: 'Hello', maxRetries: 0 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentMemoryError);
    expect((failure as AgentMemoryError).status).toBe(401);
    expect(mock.doGenerateCalls).toHaveLength(1);
  });
});
