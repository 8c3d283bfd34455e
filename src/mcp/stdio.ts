import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Actor, Core } from '../domain/core.js';
import { createMcpServer } from './server.js';

type MessageId = string | number;

const requestId = (m: JSONRPCMessage): MessageId | undefined => ('method' in m && 'id' in m ? m.id : undefined);

const responseId = (m: JSONRPCMessage): MessageId | undefined =>
  ('result' in m || 'error' in m) && 'id' in m ? m.id : undefined;

const methodOf = (m: JSONRPCMessage): string | undefined => ('method' in m ? m.method : undefined);

/**
 * What is answered while the database opens and the model loads: none of these reads either, and a
 * client gives up on a server that does not answer `initialize` within its connect timeout (the
 * MCP Inspector's is 15 s; a fresh data folder took 20). Everything else waits for startup.
 */
const ANSWERED_WHILE_STARTING = new Set([
  'initialize',
  'notifications/initialized',
  'ping',
  'tools/list',
  'resources/templates/list',
  'prompts/list',
]);

/** JSON-RPC "internal error": the answer to a request that startup's failure leaves unserved. */
const INTERNAL_ERROR = -32603;

export interface StdioStartup {
  /** Known before startup: what the server tells a client in `initialize`, and where it logs. */
  readonly config: Config;
  readonly log: Logger;
  /** What the caller may do, known before its tenant is: the local caller has every scope. */
  readonly scopes: Actor['scopes'];
  /** The transport's agent id (AGENT_ID); undefined when not given. */
  readonly agentId: string | undefined;
  /**
   * Settles once the database is open and migrated, the model loaded and the caller's tenant known;
   * a rejection's message is the one line that says why startup failed.
   */
  readonly ready: Promise<{ core: Core; actor: Actor }>;
}

export interface StdioOptions {
  stdin: Readable;
  stdout: Writable;
  /** After stdin ends (and startup has settled), how long requests already received may take to be answered. */
  drainMs: number;
  /** Called once the answer to `initialize` is written: the moment to begin the heavy startup work. */
  onInitialized?: () => void;
}

/**
 * An object of which some properties are known now and the rest once `bind` gives the real one.
 * The MCP server is built (and answers `initialize`) before the core exists; its handlers run only
 * once startup has finished, so reading a late property earlier is a bug, and throws.
 */
function late<T extends object>(early: Partial<T>, what: string): { value: T; bind(real: T): void } {
  let bound: T | undefined;
  const value = new Proxy(early as T, {
    get(target, property) {
      if (bound) return Reflect.get(bound, property) as unknown;
      if (Object.hasOwn(target, property)) return Reflect.get(target, property) as unknown;
      throw new Error(`${what}.${String(property)} was read before startup finished`);
    },
  });
  return { value, bind: (real) => (bound = real) };
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * Serves MCP over a pair of streams for one caller until the client closes stdin (or stdout
 * breaks). `initialize` and the lists that read nothing are answered at once; tool calls and
 * resource reads wait for startup, and are answered with its failure if it failed. A client that
 * writes its requests and closes at once, as `printf … | agent-memory mcp` does, still gets its
 * answers: the returned promise settles once startup has settled and every request received has
 * been answered, or `drainMs` after that, and the server is closed.
 */
export async function serveStdio(startup: StdioStartup, options: StdioOptions): Promise<void> {
  const { log } = startup;
  const core = late<Core>({ config: startup.config, log }, 'core');
  const actor = late<Actor>({ keyId: null, scopes: startup.scopes }, 'actor');
  const server = createMcpServer(core.value, { actor: actor.value, agentId: startup.agentId });
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  const pending = new Set<MessageId>();
  let drained: (() => void) | undefined;
  let state: 'starting' | 'ready' | 'failed' = 'starting';
  let failure = '';
  const waiting: JSONRPCMessage[] = [];
  let initializeId: MessageId | undefined;

  await server.connect(transport);
  // Wrapped after connect, which installs the handlers; stdin delivers nothing before the next tick.
  const deliver = transport.onmessage;
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    try {
      await send(message);
    } finally {
      const id = responseId(message);
      if (id !== undefined) pending.delete(id);
      if (pending.size === 0) drained?.();
      if (id !== undefined && id === initializeId) options.onInitialized?.();
    }
  };

  /** Answers a request that startup's failure leaves unserved; notifications need no answer. */
  const refuse = (message: JSONRPCMessage) => {
    const id = requestId(message);
    if (id === undefined) return;
    const text = `agent-memory could not start, so memory is unavailable: ${failure}`;
    const answer: JSONRPCMessage =
      methodOf(message) === 'tools/call'
        ? { jsonrpc: '2.0', id, result: { isError: true, content: [{ type: 'text', text }] } }
        : { jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: text } };
    transport.send(answer).catch((error: unknown) => log.warn({ err: error }, 'mcp stdout failed'));
  };

  const route = (message: JSONRPCMessage) => {
    const method = methodOf(message);
    // Responses to our own requests, and what reads nothing, go through whatever the state.
    if (state === 'ready' || method === undefined || ANSWERED_WHILE_STARTING.has(method)) deliver?.(message);
    else if (state === 'starting') waiting.push(message);
    else refuse(message);
  };
  transport.onmessage = (message: JSONRPCMessage) => {
    const id = requestId(message);
    if (id !== undefined) pending.add(id);
    if (methodOf(message) === 'initialize') initializeId = id;
    route(message);
  };

  // What waited is routed in the order received, in the same step as the state changes, so that
  // nothing received meanwhile overtakes it.
  const flush = () => {
    for (const message of waiting.splice(0)) route(message);
  };
  const settled = startup.ready.then(
    (started) => {
      core.bind(started.core);
      actor.bind(started.actor);
      state = 'ready';
      flush();
    },
    (error: unknown) => {
      failure = oneLine(error instanceof Error ? error.message : String(error));
      state = 'failed';
      flush();
    },
  );

  return new Promise<void>((resolve) => {
    let finishing = false;
    const finish = (reason: string) => {
      if (finishing) return;
      finishing = true;
      log.info({ reason, pending: pending.size, starting: state === 'starting' }, 'mcp stdio client gone; closing');
      // Requests that waited for startup are answered once it settles, within the same drain time.
      const idle = settled.then(() =>
        pending.size === 0
          ? undefined
          : new Promise<void>((done) => {
              drained = done;
              setTimeout(done, options.drainMs).unref();
            }),
      );
      void idle
        .then(() => server.close())
        .catch((error: unknown) => log.warn({ err: error }, 'mcp server close failed'))
        .finally(resolve);
    };
    options.stdin.once('end', () => finish('stdin ended'));
    options.stdin.once('close', () => finish('stdin closed'));
    // A client that exits without closing our stdin first leaves a broken pipe behind.
    options.stdout.on('error', (error) => {
      log.warn({ err: error }, 'mcp stdout failed');
      finish('stdout failed');
    });
    server.server.onclose = () => finish('transport closed');
  });
}
