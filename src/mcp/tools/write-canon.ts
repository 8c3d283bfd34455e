import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { writeCanon } from '../../domain/records/canon.js';
import { content, metadata } from '../../schemas/fields.js';
import { CanonObject } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { agentIdArg } from './fields.js';

const DESCRIPTION = `Write a standing rule or fact for the whole organisation: every agent sees it in every recall, whatever the subject (e.g. "Never share a customer's contact details with another customer"). Use it only when the user states such a policy; needs the admin scope. Writing the same text again returns the existing entry.`;

const CanonOutput = CanonObject.extend({
  outcome: z.enum(['created', 'existing']).describe('existing: the same text was already canon'),
});

export function registerWriteCanon(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'write_canon',
    {
      title: 'Write canon',
      description: DESCRIPTION,
      inputSchema: z.strictObject({
        content: content.describe('The rule, as one self-contained statement'),
        metadata: metadata.optional(),
        agent_id: agentIdArg.optional(),
      }),
      outputSchema: CanonOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'write_canon', scope: 'admin', output: CanonOutput }, async () => {
        const { entry, created } = await writeCanon(ctx.core, ctx.actor, {
          agentId: ctx.agentId(args.agent_id),
          content: args.content,
          metadata: args.metadata,
        });
        return {
          data: { ...entry, outcome: created ? ('created' as const) : ('existing' as const) },
          text: `${created ? 'Canon written' : 'Already canon'}: "${entry.content}" (id: ${entry.id})`,
        };
      }),
  );
}
