import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createSession } from '../../domain/subjects/sessions.js';
import { metadata } from '../../schemas/fields.js';
import { SessionObject } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { agentIdArg, subjectArg } from './fields.js';

const description = (ttlHours: number) => `Open a session for one conversation or task, and keep the returned \`id\`.
Memories stored with that \`session_id\` and no subject are short-term: recall returns them when given the same session_id, and they expire ${ttlHours} h after the session ends, unless repeated often enough to become durable facts about the session's subject.
Pass \`subject\` when the conversation is about one subject: recall with the session_id then also brings that subject's durable memories.`;

export function registerStartSession(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'start_session',
    {
      title: 'Start a session',
      description: description(ctx.core.config.sessionTtlHours),
      inputSchema: z.strictObject({
        subject: subjectArg.optional(),
        metadata: metadata.optional(),
        agent_id: agentIdArg.optional(),
      }),
      outputSchema: SessionObject,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'start_session', scope: 'write', output: SessionObject }, async () => {
        const session = await createSession(ctx.core, ctx.actor, {
          agentId: ctx.agentId(args.agent_id),
          anchor: { anchorExternalId: args.subject },
          metadata: args.metadata,
        });
        const about = session.anchor_external_id ? ` about subject "${session.anchor_external_id}"` : '';
        return {
          data: session,
          text: `Session started${about}. session_id: ${session.id} (pass it to remember and recall; end it with end_session).`,
        };
      }),
  );
}
