import { z } from 'zod';
import { measuredIngest } from '../../measured.js';
import { actAs } from '../../domain/tenancy/agent-binding.js';
import { assertContentLimit } from '../../domain/store/content-limit.js';
import { ingestInputOf, ingestResponseOf, type IngestJobInput } from '../../jobs/ingest-job.js';
import { submitJob } from '../../jobs/jobs.js';
import { AgentParams, IngestBody } from '../../schemas/inputs.js';
import { AsyncQuery } from '../../schemas/jobs.js';
import { AGENT_REFUSED, EMBEDDING_UNAVAILABLE, IngestResponse, ProblemObject } from '../../schemas/objects.js';
import { route } from '../route.js';
import { accepted, JOB_ACCEPTED } from './jobs.js';

export const conversationRoutes = [
  route({
    method: 'post',
    path: '/v1/agents/{id}/conversations/ingest',
    operationId: 'ingestConversation',
    summary:
      "Extract facts from a conversation's messages and store each through the store path, with the binding of docs/api.md §4; with ?async=true, as a job",
    tag: 'conversations',
    access: 'write',
    params: AgentParams,
    query: z.strictObject(AsyncQuery),
    body: IngestBody,
    responses: {
      200: { description: 'The facts stored (created, reinforced or promoted)', schema: IngestResponse },
      202: JOB_ACCEPTED,
      400: { description: 'No messages, more than 500, or a malformed body', schema: ProblemObject },
      403: AGENT_REFUSED,
      404: { description: 'Unknown anchor_id or session_id', schema: ProblemObject },
      409: { description: 'Session ended, or anchor and session disagree', schema: ProblemObject },
      413: { description: "A message's content over the limit", schema: ProblemObject },
      503: EMBEDDING_UNAVAILABLE,
    },
    handle: async ({ core, actor, params, query, body, res }) => {
      if (query.async === true) {
        // Refused now rather than as a failed job: the key may not act as this agent at all.
        actAs(actor, params.id);
        body.messages.forEach((m, i) =>
          assertContentLimit(m.content, core.config.contentLimitChars, `messages.${i}.content`),
        );
        const job = await submitJob<IngestJobInput>(core, actor, {
          kind: 'ingest',
          input: { agent_id: params.id, body },
          agentIds: [params.id],
        });
        return accepted(res, job);
      }
      const result = await measuredIngest(core, actor, ingestInputOf(params.id, body));
      return { status: 200, body: ingestResponseOf(result) };
    },
  }),
];
