import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { measuredRecall } from '../../domain/measured.js';
import type { RecallResult } from '../../retrieval/recall.js';
import { limit } from '../../schemas/fields.js';
import { RecallQuery } from '../../schemas/inputs.js';
import { RecallResponse } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { checkedFilter } from '../../filter/language.js';
import { agentIdArg, filterArg, sessionIdArg, subjectArg } from './fields.js';

const DESCRIPTION = `Search memory before you answer or act. Call it at the start of every task about a subject (pass that \`subject\`), and whenever earlier preferences, decisions or context could change what you do: it is cheap, and it saves asking the user again.
Returns, ranked by relevance, confidence and recency (each with its score): the subject's durable memories, the session's short-term memories (with \`session_id\`), your private memories, and the organisation's canon (standing rules, always included).
Phrase \`query\` as what you need to know ("how does this customer want to be contacted"). An unknown subject simply has no memories yet.
To search only part of memory, add \`filter\` on the metadata the memories were stored with, e.g. {"metadata.topic": "billing"}: it narrows the search, never widens it.`;

const label = (m: RecallResult): string => {
  if (m.binding === 'anchored') return `subject ${m.anchor_external_id ?? ''}`;
  if (m.binding === 'session') return 'session';
  return m.binding;
};

function render(results: RecallResult[]): string {
  if (results.length === 0) return 'No memories match.';
  const lines = results.map((m, i) => `${i + 1}. [${label(m)}] ${m.content} (score ${m.score.toFixed(2)})`);
  return `${results.length} memor${results.length === 1 ? 'y' : 'ies'}, best first:\n${lines.join('\n')}`;
}

export function registerRecall(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'recall',
    {
      title: 'Recall memories',
      description: DESCRIPTION,
      inputSchema: z.strictObject({
        query: RecallQuery.shape.query.describe('What you need to know, in a few words or a question'),
        subject: subjectArg.optional(),
        session_id: sessionIdArg.optional(),
        limit: limit(10, 100),
        agent_id: agentIdArg.optional(),
        filter: filterArg.optional(),
      }),
      outputSchema: RecallResponse,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'recall', scope: 'read', output: RecallResponse }, async () => {
        const results = await measuredRecall(ctx.core, ctx.actor, {
          agentId: ctx.agentId(args.agent_id),
          query: args.query,
          anchor: { anchorExternalId: args.subject },
          sessionId: args.session_id,
          limit: args.limit,
          includeSuperseded: false,
          filter: checkedFilter(args.filter),
        });
        return { data: { results }, text: render(results) };
      }),
  );
}
