import { measuredIngest } from '../../domain/measured.js';
import { AgentParams, IngestBody } from '../../schemas/inputs.js';
import { AGENT_REFUSED, EMBEDDING_UNAVAILABLE, IngestResponse, ProblemObject } from '../../schemas/objects.js';
import { route } from '../route.js';

export const conversationRoutes = [
  route({
    method: 'post',
    path: '/v1/agents/{id}/conversations/ingest',
    operationId: 'ingestConversation',
    summary:
      "Extract facts from a conversation's messages and store each through the store path, with the binding of docs/api.md §4",
    tag: 'conversations',
    access: 'write',
    params: AgentParams,
    body: IngestBody,
    responses: {
      200: { description: 'The facts stored (created, reinforced or promoted)', schema: IngestResponse },
      400: { description: 'No messages, more than 500, or a malformed body', schema: ProblemObject },
      403: AGENT_REFUSED,
      404: { description: 'Unknown anchor_id or session_id', schema: ProblemObject },
      409: { description: 'Session ended, or anchor and session disagree', schema: ProblemObject },
      413: { description: "A message's content over the limit", schema: ProblemObject },
      503: EMBEDDING_UNAVAILABLE,
    },
    handle: async ({ core, actor, params, body }) => {
      const result = await measuredIngest(core, actor, {
        agentId: params.id,
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
      });
      return {
        status: 200,
        body: { extractor: result.extractor, memories: result.memories, skipped_messages: result.skippedMessages },
      };
    },
  }),
];
