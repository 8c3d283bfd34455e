import { tool, type LanguageModelMiddleware, type Tool } from 'ai';
import { z } from 'zod';
import {
  DEFAULT_RECALL_LIMIT,
  memoriesAsContext,
  recall,
  recalledForModel,
  remember,
  storedForModel,
  type MemoryScope,
} from '../memory-door.js';

/**
 * agent-memory for the Vercel AI SDK (`ai`): `remember` and `recall` tools for generateText and
 * streamText, and a language model middleware that recalls for the subject before each call and
 * puts what it found in the prompt. `ai` is a peer dependency: this module imports it, never bundles it.
 */

export type { MemoryScope } from '../memory-door.js';

/**
 * Named, so that the declarations shipped name only `ai`'s own types, not its dependencies'; a type
 * rather than an interface, so that it is a ToolSet.
 */
export type AgentMemoryTools = {
  remember: Tool<{ content: string }, ReturnType<typeof storedForModel>>;
  recall: Tool<{ query: string; limit?: number | undefined }, ReturnType<typeof recalledForModel>>;
};

/**
 * The two tools, bound to one agent (and subject, and session) chosen by the application: the model
 * chooses what to remember and what to ask, never whose memory it reads.
 */
export function agentMemoryTools(scope: MemoryScope): AgentMemoryTools {
  return {
    remember: tool({
      description:
        'Store one lasting fact worth remembering in later conversations (a preference, a decision, a detail of the person or case). One self-contained statement per call.',
      inputSchema: z.object({
        content: z.string().min(1).describe('The fact, as one self-contained statement'),
      }),
      execute: async ({ content }) => storedForModel(await remember(scope, content)),
    }),
    recall: tool({
      description: 'Search what is remembered from earlier conversations, most relevant first.',
      inputSchema: z.object({
        query: z.string().min(1).describe('What to look for, in plain words'),
        limit: z.number().int().min(1).max(100).optional().describe('How many memories at most (default 10)'),
      }),
      execute: async ({ query, limit }) => recalledForModel(await recall(scope, query, limit)),
    }),
  };
}

export interface MemoryMiddlewareOptions extends MemoryScope {
  /** How many memories go into the prompt at most (default 10). */
  limit?: number;
}

type CallParams = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type PromptMessage = CallParams['prompt'][number];

/**
 * A middleware for `wrapLanguageModel`: before each call, recalls with the text of the last user
 * message and adds the memories as a system message after the prompt's own system messages. A call
 * without user text, or whose recall finds nothing, goes to the model unchanged. A failing recall
 * fails the call (the client's AgentMemoryError), rather than letting the model answer without the
 * memory it was meant to have.
 */
export function agentMemoryMiddleware(options: MemoryMiddlewareOptions): LanguageModelMiddleware {
  const { limit = DEFAULT_RECALL_LIMIT, ...scope } = options;
  return {
    specificationVersion: 'v4',
    transformParams: async ({ params }) => {
      const query = lastUserText(params.prompt);
      if (!query) return params;
      const results = await recall(scope, query, limit);
      if (results.length === 0) return params;
      const prompt = [...params.prompt];
      const firstNonSystem = prompt.findIndex((m) => m.role !== 'system');
      const at = firstNonSystem === -1 ? prompt.length : firstNonSystem;
      prompt.splice(at, 0, { role: 'system', content: memoriesAsContext(results) });
      return { ...params, prompt };
    },
  };
}

function lastUserText(prompt: PromptMessage[]): string | undefined {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== 'user') continue;
    const text = message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('\n')
      .trim();
    return text || undefined;
  }
  return undefined;
}
