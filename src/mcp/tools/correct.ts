import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { correctMemory } from '../../domain/store/correct.js';
import { content, metadata, uuid } from '../../schemas/fields.js';
import { CorrectedMemoryObject } from '../../schemas/objects.js';
import { runTool, type ToolContext } from '../context.js';
import { agentIdArg } from './fields.js';

const DESCRIPTION = `Correct one memory that is wrong, by its id (from recall): the corrected text becomes a new memory in the same place (same subject, session or agent) and the old one is kept as superseded, so the change stays in the audit trail.
Use it when the user says a remembered fact is wrong ("No, I moved to Porto, not Lisbon"). For a new fact use remember instead; a memory that has been superseded already cannot be corrected: correct the one that replaced it.`;

export function registerCorrect(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'correct',
    {
      title: 'Correct a memory',
      description: DESCRIPTION,
      inputSchema: z.strictObject({
        memory_id: uuid.describe('The id of the memory to correct, as recall returned it'),
        content: content.describe('The corrected fact, as one self-contained statement'),
        metadata: metadata.optional(),
        agent_id: agentIdArg.optional(),
      }),
      outputSchema: CorrectedMemoryObject,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      runTool(ctx, { name: 'correct', scope: 'write', output: CorrectedMemoryObject }, async () => {
        const { memory, corrects } = await correctMemory(ctx.core, ctx.actor, {
          id: args.memory_id,
          content: args.content,
          agentId: ctx.agentId(args.agent_id),
          metadata: args.metadata,
        });
        return {
          data: { ...memory, corrects },
          text: `Corrected: memory ${corrects} is superseded by ${memory.id}.`,
        };
      }),
  );
}
