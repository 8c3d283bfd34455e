import type { z } from 'zod';
import type { IngestInput, IngestResult } from '../domain/store/ingest.js';
import { measuredIngest } from '../measured.js';
import type { IngestBody } from '../schemas/inputs.js';
import type { IngestResponse } from '../schemas/objects.js';
import type { JobKind } from './kind.js';

type Body = z.output<typeof IngestBody>;

/** An ingest job's input: the agent of the path and the validated body, as the request sent them. */
export interface IngestJobInput {
  agent_id: string;
  body: Body;
}

/** The domain's input of one ingest request, the same for the synchronous call and the job. */
export function ingestInputOf(agentId: string, body: Body): IngestInput {
  return {
    agentId,
    messages: body.messages.map((m) => ({
      role: m.role,
      content: m.content,
      id: m.id,
      name: m.name,
      createdAt: m.created_at,
    })),
    conversationId: body.conversation_id,
    anchor: { anchorId: body.anchor_id, anchorExternalId: body.anchor_external_id },
    sessionId: body.session_id,
    metadata: body.metadata,
  };
}

/** The body of a 200 to an ingest, and of its job's result. */
export function ingestResponseOf(result: IngestResult): z.input<typeof IngestResponse> {
  return { extractor: result.extractor, memories: result.memories, skipped_messages: result.skippedMessages };
}

export const ingestJob: JobKind<IngestJobInput, z.input<typeof IngestResponse>> = {
  // Exactly once per message needs a conversation and an id on every message (docs/api.md §5):
  // then a second run skips what the first committed and stores the rest. Without them it would
  // store (reinforce) the first run's facts again.
  resumable: ({ body }) => body.conversation_id !== undefined && body.messages.every((m) => m.id !== undefined),
  run: async ({ core, actor, input, progress }) => {
    const result = await measuredIngest(core, actor, ingestInputOf(input.agent_id, input.body), (p) =>
      progress({ messages: p.messages, messages_done: p.messagesDone, memories: p.memories }),
    );
    return ingestResponseOf(result);
  },
  counts: (result) => ({ memories: result.memories.length, skipped_messages: result.skipped_messages }),
};
