import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { measuredStore } from '../../domain/measured.js';
import { storedMemory } from '../../domain/store.js';
import { content, metadata } from '../../schemas/fields.js';
import { StoreMemoryBody } from '../../schemas/inputs.js';
import { StoredMemoryObject } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { agentIdArg, sessionIdArg, subjectArg } from './fields.js';

const DESCRIPTION = `Store one fact worth keeping beyond this conversation: a preference, a decision, a correction, a standing instruction, a commitment.
- With \`subject\` the fact is about that person, customer, project or case, and is recalled only for it.
- With only \`session_id\` (from start_session) it is a short-term note of the current conversation.
- With neither it is private to you (this agent).
Write one self-contained statement per call ("Prefers email over phone", not "yes, that one"). Storing the same fact again reinforces it instead of duplicating it; a fact that contradicts an older one about the same thing supersedes it, unless that one is pinned: then both stay and the answer names the pinned one, so check with the user.
- \`ttl_seconds\` for a fact that stops mattering after a while ("is in a meeting until 3pm": ttl_seconds 7200); it leaves recall the moment it expires.
- \`pinned: true\` only for what must never fade or be replaced silently (an allergy, a legal hold, a standing instruction the user insisted on).
- \`occurred_at\` when the fact happened at a known time other than now (ISO-8601).`;

export function registerRemember(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'remember',
    {
      title: 'Remember a fact',
      description: DESCRIPTION,
      inputSchema: z.strictObject({
        content: content.describe('The fact, as one self-contained statement'),
        subject: subjectArg.optional(),
        session_id: sessionIdArg.optional(),
        metadata: metadata.optional(),
        agent_id: agentIdArg.optional(),
        occurred_at: StoreMemoryBody.shape.occurred_at,
        ttl_seconds: StoreMemoryBody.shape.ttl_seconds.describe(
          'Forget it after this many seconds, for facts that are only true for a while',
        ),
        pinned: StoreMemoryBody.shape.pinned.describe(
          'Keep it at full confidence, never expire it, never replace it silently; for critical facts only',
        ),
      }),
      outputSchema: StoredMemoryObject,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'remember', scope: 'write', output: StoredMemoryObject }, async () => {
        const result = await measuredStore(ctx.core, ctx.actor, {
          agentId: ctx.agentId(args.agent_id),
          content: args.content,
          anchor: { anchorExternalId: args.subject },
          sessionId: args.session_id,
          metadata: args.metadata,
          occurredAt: args.occurred_at === undefined ? undefined : new Date(args.occurred_at),
          life: { ttlSeconds: args.ttl_seconds, pinned: args.pinned },
        });
        const { memory, outcome, supersedes, contradicts = [] } = result;
        const where =
          memory.binding === 'anchored'
            ? `about subject "${memory.anchor_external_id ?? ''}"`
            : memory.binding === 'session'
              ? `in session ${memory.session_id ?? ''} (short-term)`
              : 'as a private memory of this agent';
        const what =
          outcome === 'created'
            ? `Remembered ${where}.`
            : outcome === 'promoted'
              ? `Already known: reinforced and promoted to a durable memory ${where}.`
              : `Already known ${where}: reinforced it (confidence ${memory.confidence.toFixed(2)}).`;
        const replaced =
          supersedes.length > 0 ? ` It supersedes ${supersedes.length} older conflicting memory(ies).` : '';
        const kept =
          contradicts.length > 0
            ? ` It contradicts pinned memory(ies) ${contradicts.join(', ')}, which stay active: ask the user which holds.`
            : '';
        const life = `${memory.pinned ? ' Pinned.' : ''}${memory.expires_at ? ` Expires ${memory.expires_at}.` : ''}`;
        return {
          data: storedMemory(result),
          text: `${what}${replaced}${kept}${life} id: ${memory.id}`,
        };
      }),
  );
}
