import { tool } from '@openai/agents';
import { z } from 'zod';
import { recall, recalledForModel, remember, storedForModel, type MemoryScope } from '../memory-door.js';

/**
 * agent-memory for the OpenAI Agents SDK (`@openai/agents`): `remember` and `recall` function tools,
 * and a Session that keeps a conversation's items in one of the service's sessions.
 * `@openai/agents` is a peer dependency: this module imports it, never bundles it.
 */

export { AgentMemorySession, type AgentMemorySessionOptions } from './session.js';
export type { MemoryScope } from '../memory-door.js';

/**
 * The two tools, bound to one agent (and subject, and session) chosen by the application: the model
 * chooses what to remember and what to ask, never whose memory it reads. Strict schemas, as the SDK
 * prefers: every field is required, and `limit` is null for the default.
 */
export function agentMemoryTools(scope: MemoryScope) {
  return [
    tool({
      name: 'remember',
      description:
        'Store one lasting fact worth remembering in later conversations (a preference, a decision, a detail of the person or case). One self-contained statement per call.',
      parameters: z.object({ content: z.string().min(1).describe('The fact, as one self-contained statement') }),
      execute: async ({ content }) => storedForModel(await remember(scope, content)),
    }),
    tool({
      name: 'recall',
      description: 'Search what is remembered from earlier conversations, most relevant first.',
      parameters: z.object({
        query: z.string().min(1).describe('What to look for, in plain words'),
        limit: z.number().int().min(1).max(100).nullable().describe('How many memories at most; null for 10'),
      }),
      execute: async ({ query, limit }) => recalledForModel(await recall(scope, query, limit ?? undefined)),
    }),
  ];
}
