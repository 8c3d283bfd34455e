import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { measuredBatch, measuredStore } from '../../measured.js';
import { storedMemory, type StoreResult } from '../../domain/store/store.js';
import { toProblem } from '../../errors.js';
import { content, metadata } from '../../schemas/fields.js';
import { StoreMemoryBody } from '../../schemas/inputs.js';
import { BatchItemResultObject, StoredMemoryObject } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { agentIdArg, sessionIdArg, subjectArg } from './fields.js';

/** Facts one call of remember takes as a list (POST /v1/memories/batch takes 500 of any subjects). */
export const REMEMBER_MAX_FACTS = 100;

/** One fact: the memory stored; a list: one result per fact, in order. */
const RememberOutput = StoredMemoryObject.partial().extend({
  results: z
    .array(BatchItemResultObject)
    .optional()
    .describe('For a list of facts: one result per fact, in order (outcome and memory, or problem)'),
});

function where(memory: StoreResult['memory']): string {
  return memory.binding === 'anchored'
    ? `about subject "${memory.anchor_external_id ?? ''}"`
    : memory.binding === 'session'
      ? `in session ${memory.session_id ?? ''} (short-term)`
      : 'as a private memory of this agent';
}

const DESCRIPTION = `Store one fact worth keeping beyond this conversation: a preference, a decision, a correction, a standing instruction, a commitment.
- With \`subject\` the fact is about that person, customer, project or case, and is recalled only for it.
- With only \`session_id\` (from start_session) it is a short-term note of the current conversation.
- With neither it is private to you (this agent).
Write each fact as one self-contained statement ("Prefers email over phone", not "yes, that one"); several facts of the same subject or session go in one call as a list of up to ${REMEMBER_MAX_FACTS}. Storing the same fact again reinforces it instead of duplicating it; a fact that contradicts an older one about the same thing supersedes it, unless that one is pinned: then both stay and the answer names the pinned one, so check with the user.
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
        content: z
          .union([content, z.array(content).min(1).max(REMEMBER_MAX_FACTS)])
          .describe(
            `The fact, as one self-contained statement; or a list of up to ${REMEMBER_MAX_FACTS} such facts, stored in order`,
          ),
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
      outputSchema: RememberOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'remember', scope: 'write', output: RememberOutput }, async () => {
        const target = {
          agentId: ctx.agentId(args.agent_id),
          anchor: { anchorExternalId: args.subject },
          sessionId: args.session_id,
          metadata: args.metadata,
          occurredAt: args.occurred_at === undefined ? undefined : new Date(args.occurred_at),
          life: { ttlSeconds: args.ttl_seconds, pinned: args.pinned },
        };
        if (Array.isArray(args.content)) {
          const stored = await measuredBatch(
            ctx.core,
            ctx.actor,
            args.content.map((fact) => ({ ...target, content: fact })),
          );
          const results = stored.map((r) =>
            r.ok ? { outcome: r.result.outcome, memory: storedMemory(r.result) } : { problem: toProblem(r.error) },
          );
          const lines = stored.map((r, i) =>
            r.ok
              ? `${i + 1}. ${r.result.outcome} ${where(r.result.memory)}, id: ${r.result.memory.id}`
              : `${i + 1}. not stored: ${r.error.detail}`,
          );
          const failed = stored.filter((r) => !r.ok).length;
          const head = `Stored ${stored.length - failed} of ${stored.length} facts${failed > 0 ? ` (${failed} refused)` : ''}.`;
          return { data: { results }, text: [head, ...lines].join('\n') };
        }
        const result = await measuredStore(ctx.core, ctx.actor, { ...target, content: args.content });
        const { memory, outcome, supersedes, contradicts = [] } = result;
        const what =
          outcome === 'created'
            ? `Remembered ${where(memory)}.`
            : outcome === 'promoted'
              ? `Already known: reinforced and promoted to a durable memory ${where(memory)}.`
              : `Already known ${where(memory)}: reinforced it (confidence ${memory.confidence.toFixed(2)}).`;
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
