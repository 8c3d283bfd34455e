import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Core } from '../domain/core.js';
import type { McpIdentity } from './context.js';
import { createMcpServer } from './server.js';

type MessageId = string | number;

const requestId = (m: JSONRPCMessage): MessageId | undefined => ('method' in m && 'id' in m ? m.id : undefined);

const responseId = (m: JSONRPCMessage): MessageId | undefined =>
  ('result' in m || 'error' in m) && 'id' in m ? m.id : undefined;

export interface StdioOptions {
  stdin: Readable;
  stdout: Writable;
  /** After stdin ends, how long requests already received may take to be answered. */
  drainMs: number;
}

/**
 * Serves MCP over a pair of streams for one caller until the client closes stdin (or stdout
 * breaks). A client that writes its requests and closes at once, as `printf … | agent-memory mcp`
 * does, still gets its answers: the returned promise settles once every request received has been
 * answered, or `drainMs` after the end, and the server is closed.
 */
export async function serveStdio(core: Core, identity: McpIdentity, options: StdioOptions): Promise<void> {
  const server = createMcpServer(core, identity);
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  const pending = new Set<MessageId>();
  let drained: (() => void) | undefined;

  await server.connect(transport);
  // Wrapped after connect, which installs the handler; stdin delivers nothing before the next tick.
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    const id = requestId(message);
    if (id !== undefined) pending.add(id);
    deliver?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    try {
      await send(message);
    } finally {
      const id = responseId(message);
      if (id !== undefined) pending.delete(id);
      if (pending.size === 0) drained?.();
    }
  };

  return new Promise<void>((resolve) => {
    let finishing = false;
    const finish = (reason: string) => {
      if (finishing) return;
      finishing = true;
      core.log.info({ reason, pending: pending.size }, 'mcp stdio client gone; closing');
      const idle =
        pending.size === 0
          ? Promise.resolve()
          : new Promise<void>((done) => {
              drained = done;
              setTimeout(done, options.drainMs).unref();
            });
      void idle
        .then(() => server.close())
        .catch((error: unknown) => core.log.warn({ err: error }, 'mcp server close failed'))
        .finally(resolve);
    };
    options.stdin.once('end', () => finish('stdin ended'));
    options.stdin.once('close', () => finish('stdin closed'));
    // A client that exits without closing our stdin first leaves a broken pipe behind.
    options.stdout.on('error', (error) => {
      core.log.warn({ err: error }, 'mcp stdout failed');
      finish('stdout failed');
    });
    server.server.onclose = () => finish('transport closed');
  });
}
