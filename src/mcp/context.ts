import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Actor, Core } from '../domain/core.js';
import { AppError } from '../errors.js';
import { agentId as agentIdField } from '../schemas/fields.js';
import { toolError } from './errors.js';
import type { Scope } from '../vocabulary.js';

/** Who calls, resolved by the transport before any tool runs: tools never read headers or env. */
export interface McpIdentity {
  readonly actor: Actor;
  /** The X-Agent-Id header (HTTP) or AGENT_ID (stdio); undefined when not given. */
  readonly agentId: string | undefined;
}

/** What a tool gets: the core, the caller, and the agent id rule of docs/api.md §7. */
export interface ToolContext {
  readonly core: Core;
  readonly actor: Actor;
  /**
   * The tool's `agent_id` argument, else the transport's, else the one agent a bound key is bound
   * to, else the client's name. Whichever it is, the domain refuses an agent the key may not act as.
   */
  agentId(argument: string | undefined): string;
}

/**
 * The agent id when nothing names one: over HTTP without a session a tool call arrives without the
 * initialize handshake, so the client's name is unknown there.
 */
export const FALLBACK_AGENT_ID = 'mcp-client';

/** The client's clientInfo.name as an agent id, when it is a valid one. */
export function clientAgentId(clientName: string | undefined): string | undefined {
  if (clientName === undefined) return undefined;
  const parsed = agentIdField.safeParse(clientName);
  return parsed.success ? parsed.data : undefined;
}

/** Refuses what the caller's key may not do; `what` names the action ("the recall tool"). */
export function requireScope(actor: Actor, scope: Scope, what: string): void {
  if (!actor.scopes.has(scope)) {
    throw new AppError('insufficient_scope', `${what} needs the "${scope}" scope, which this key does not have`);
  }
}

export interface ToolAnswer<T> {
  /** The whole answer; it must match the tool's outputSchema. */
  data: T;
  /** A short rendering for clients that show the model text only. */
  text: string;
}

/**
 * Runs a tool body for the caller: checks the scope, then answers the whole result as
 * structuredContent (parsed through the output schema, so the result never carries a field the
 * schema does not declare and clients that validate strictly accept it) and a short text.
 */
export async function runTool<S extends z.ZodType>(
  ctx: ToolContext,
  tool: { name: string; scope: Scope; output: S },
  body: () => Promise<ToolAnswer<z.input<S>>>,
): Promise<CallToolResult> {
  const started = performance.now();
  let result: CallToolResult;
  try {
    requireScope(ctx.actor, tool.scope, `the ${tool.name} tool`);
    // Every tool but recall writes: the key's next recalls read the primary (read-your-writes).
    if (tool.scope !== 'read') ctx.core.reads?.wrote(ctx.actor);
    const answer = await body();
    const structured = tool.output.parse(answer.data) as Record<string, unknown>;
    result = { content: [{ type: 'text', text: answer.text }], structuredContent: structured };
  } catch (error) {
    result = toolError(ctx.core, tool.name, error);
  }
  // Names and timings only: arguments carry memory content, which is never logged.
  ctx.core.log.debug(
    { tool: tool.name, ms: Math.round(performance.now() - started), is_error: result.isError === true },
    'mcp tool call',
  );
  return result;
}
