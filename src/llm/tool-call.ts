import type Anthropic from '@anthropic-ai/sdk';
import { startDeadline } from '../deadline.js';
import { failureOf, MalformedAnswer } from './anthropic.js';
import type { LlmBreaker, LlmPurpose } from './breaker.js';

export interface ToolCall<T> {
  readonly client: Anthropic;
  readonly breaker?: LlmBreaker | undefined;
  readonly purpose: LlmPurpose;
  /** The budget of the whole call, its one retry included. */
  readonly budgetMs: number;
  /** Aborts the call without it counting as a failure of the model (another batch failed). */
  readonly stop?: AbortSignal | undefined;
  readonly model: string;
  readonly maxTokens: number;
  readonly system: string;
  readonly tool: Anthropic.Tool;
  readonly prompt: string;
  /** The tool's input as the caller's answer, or undefined when it is off the schema. */
  readonly read: (input: unknown) => T | undefined;
}

/** A failed tool call, described for the log by kind and status only, never by content. */
export class ToolCallFailed extends Error {
  override readonly name = 'ToolCallFailed';
  constructor(
    readonly failure: Record<string, unknown>,
    override readonly cause: unknown,
  ) {
    super(`model call failed: ${String(failure.reason)}`);
  }
}

/**
 * One forced tool-use request to Claude, within one deadline (retry included), through the
 * breaker; the tool's input read by the caller. Any failure (network, status, timeout, a cut-off
 * or off-schema answer, an open circuit) rejects with ToolCallFailed.
 */
export async function callTool<T>(options: ToolCall<T>): Promise<T> {
  const { client, breaker, purpose, stop, tool } = options;
  const deadline = startDeadline(options.budgetMs, stop);
  const call = async (): Promise<T> => {
    const message = await client.messages.create(
      {
        model: options.model,
        max_tokens: options.maxTokens,
        system: options.system,
        tools: [tool],
        tool_choice: { type: 'tool', name: tool.name, disable_parallel_tool_use: true },
        messages: [{ role: 'user', content: options.prompt }],
      },
      { signal: deadline.signal },
    );
    // A cut-off answer may parse and still miss part of what was asked: it is no answer.
    if (message.stop_reason === 'max_tokens') throw new MalformedAnswer();
    const use = message.content.find((block) => block.type === 'tool_use' && block.name === tool.name);
    const answer = use && 'input' in use ? options.read(use.input) : undefined;
    if (answer === undefined) throw new MalformedAnswer();
    return answer;
  };
  try {
    return await (breaker ? breaker.run(purpose, call, stop) : call());
  } catch (error) {
    throw new ToolCallFailed(failureOf(error, deadline.hit()), error);
  } finally {
    deadline.clear();
  }
}
