import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { findAnchorIdByExternalId } from '../../domain/subjects/anchors.js';
import { purgeAnchor } from '../../domain/subjects/purge.js';
import { AppError } from '../../errors.js';
import { runTool, type ToolContext } from '../context.js';
import { subjectArg } from './fields.js';

const DESCRIPTION = `Erase everything stored about one subject, for good: its durable and short-term memories, its sessions, and the audit events that name them (for example when a person asks to be forgotten). This cannot be undone and needs \`confirm: true\` and the admin scope.
Do not use it to correct a fact: call remember with the correct fact instead, and it supersedes the old one.`;

const PurgeOutput = z.object({
  purged: z.literal(true),
  subject: z.string(),
  anchor_id: z.string(),
  deleted: z.object({ memories: z.number().int(), sessions: z.number().int() }),
});

export function registerPurgeSubject(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'purge_subject',
    {
      title: 'Erase a subject',
      description: DESCRIPTION,
      inputSchema: z.strictObject({
        subject: subjectArg,
        confirm: z.literal(true).describe('Must be true: the erasure cannot be undone'),
      }),
      outputSchema: PurgeOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'purge_subject', scope: 'admin', output: PurgeOutput }, async () => {
        const anchorId = await findAnchorIdByExternalId(ctx.core.db, ctx.actor.tenantId, args.subject);
        if (!anchorId) throw new AppError('not_found', `no such subject "${args.subject}"`);
        const result = await purgeAnchor(ctx.core, ctx.actor, anchorId);
        const { memories, sessions } = result.deleted;
        return {
          data: { purged: true as const, subject: args.subject, anchor_id: result.anchorId, deleted: result.deleted },
          text: `Erased subject "${args.subject}": ${memories} memories and ${sessions} sessions deleted.`,
        };
      }),
  );
}
