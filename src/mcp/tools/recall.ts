import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { measuredRecall } from '../../measured.js';
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
- \`as_of\` (ISO-8601, past) answers as memory stood then: for "what did we know on 1 March?" or to explain an earlier decision. Leave it out for the present.
- \`include_superseded: true\` also returns facts that were replaced, each marked with what replaced it and when: for "what did they want before?".

To search only part of memory, add \`filter\` on the metadata the memories were stored with, e.g. {"metadata.topic": "billing"}: it narrows the search, never widens it.`;

const label = (m: RecallResult): string => {
  if (m.binding === 'anchored') return `subject ${m.anchor_external_id ?? ''}`;
  if (m.binding === 'session') return 'session';
  return m.binding;
};

function render(results: RecallResult[]): string {
  if (results.length === 0) return 'No memories match.';
  const lines = results.map((m, i) => {
    const superseded = m.superseded_at
      ? `, superseded ${m.superseded_at} by ${m.superseded_by ?? 'another memory'}`
      : '';
    const pinned = m.pinned ? ', pinned' : '';
    return `${i + 1}. [${label(m)}] ${m.content} (score ${m.score.toFixed(2)}${pinned}${superseded})`;
  });
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
        as_of: RecallQuery.shape.as_of.describe('Answer as of this past moment (ISO-8601); leave out for now'),
        include_superseded: z
          .boolean()
          .default(false)
          .describe('Also return replaced facts, marked with superseded_by and superseded_at'),
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
          includeSuperseded: args.include_superseded,
          asOf: args.as_of === undefined ? undefined : new Date(args.as_of),
          filter: checkedFilter(args.filter),
        });
        return { data: { results }, text: render(results) };
      }),
  );
}
