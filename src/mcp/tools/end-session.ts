import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { endSession } from '../../domain/subjects/sessions.js';
import { SessionObject } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { sessionIdArg } from './fields.js';

const description = (ttlHours: number) =>
  `End a session when its conversation or task is over. Nothing more can be stored in it; its short-term memories expire ${ttlHours} h later unless they were promoted to durable memories. Durable and private memories are not affected. Ending an ended session returns it unchanged.`;

export function registerEndSession(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'end_session',
    {
      title: 'End a session',
      description: description(ctx.core.config.sessionTtlHours),
      inputSchema: z.strictObject({ session_id: sessionIdArg }),
      outputSchema: SessionObject,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'end_session', scope: 'write', output: SessionObject }, async () => {
        const session = await endSession(ctx.core, ctx.actor, args.session_id);
        const expiry = session.expires_at ? `; its short-term memories expire at ${session.expires_at}` : '';
        return { data: session, text: `Session ${session.id} has ended${expiry}.` };
      }),
  );
}
