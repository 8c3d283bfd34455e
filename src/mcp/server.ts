import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { soleAgent } from '../domain/tenancy/agent-binding.js';
import type { Core } from '../domain/core.js';
import { VERSION } from '../version.js';
import { clientAgentId, FALLBACK_AGENT_ID, type McpIdentity, type ToolContext } from './context.js';
import { registerPrompts } from './prompts.js';
import { registerMemoryResources } from './resources.js';
import { registerSubscriptions } from './subscriptions.js';
import { registerCorrect } from './tools/correct.js';
import { registerEndSession } from './tools/end-session.js';
import { registerPurgeSubject } from './tools/purge-subject.js';
import { registerRecall } from './tools/recall.js';
import { registerRemember } from './tools/remember.js';
import { registerStartSession } from './tools/start-session.js';
import { registerWriteCanon } from './tools/write-canon.js';

/** What every client is told about the server: the memory model in a few lines. */
export const instructions = (sessionTtlHours: number): string =>
  `agent-memory keeps what you learn across conversations. Every memory belongs somewhere, and recall never crosses those lines:
- about a subject: pass \`subject\`, a stable id you choose for a person, customer, project or case ("customer-42"). Recalled only for that subject, never for another.
- short-term: pass the \`session_id\` from start_session. Expires ${sessionTtlHours} h after end_session unless it keeps coming back.
- private: neither; visible to you (this agent) only.
- canon: the organisation's standing rules, written by admins, included in every recall.
Call recall at the start of every task about a subject and before decisions where earlier context matters. Call remember with one self-contained fact whenever you learn something worth keeping: a preference, a decision, a correction. Repeating a fact reinforces it; a contradicting fact supersedes the old one. When the user says a recalled memory is wrong, call correct with its id and the right fact.`;

export interface McpServerOptions {
  /**
   * Whether the transport keeps a connection on which the server can notify the client, so that
   * resource subscriptions can be offered: stdio and HTTP sessions do, a POST without a session does not.
   */
  readonly subscriptions: boolean;
}

/**
 * An MCP server for one caller, with its identity closed over: the same tools, prompts and
 * resources over stdio (one server per process) and Streamable HTTP (one per session, or per
 * request without one).
 */
export function createMcpServer(
  core: Core,
  identity: McpIdentity,
  options: McpServerOptions = { subscriptions: true },
): McpServer {
  const server = new McpServer(
    { name: 'agent-memory', title: 'Agent memory', version: VERSION },
    { instructions: instructions(core.config.sessionTtlHours) },
  );
  const ctx: ToolContext = {
    core,
    actor: identity.actor,
    agentId: (argument) =>
      argument ??
      identity.agentId ??
      soleAgent(identity.actor) ??
      clientAgentId(server.server.getClientVersion()?.name) ??
      FALLBACK_AGENT_ID,
  };
  // Malformed messages and transport failures are worth a log line. A JSON parse error quotes the
  // text it choked on, which may be memory content, so only its kind is logged.
  server.server.onerror = (error) =>
    core.log.warn(error instanceof SyntaxError ? { kind: error.name } : { err: error }, 'mcp protocol error');
  registerRemember(server, ctx);
  registerRecall(server, ctx);
  registerCorrect(server, ctx);
  registerStartSession(server, ctx);
  registerEndSession(server, ctx);
  registerPurgeSubject(server, ctx);
  registerWriteCanon(server, ctx);
  registerMemoryResources(server, ctx);
  if (options.subscriptions) registerSubscriptions(server, ctx);
  registerPrompts(server, ctx);
  return server;
}
