import { Writable } from 'node:stream';
import type { Config } from '../config.js';
import { localActor } from '../domain/local-tenant.js';
import { startCore } from '../start-core.js';
import { serveStdio } from '../mcp/stdio.js';

/** Requests received before stdin closed get this long to be answered. */
const DRAIN_MS = 1_000;
/** No orphans: this long after stdin closes the process exits, whatever is still running. */
const EXIT_DEADLINE_MS = 1_800;

/**
 * Takes stdout for the protocol alone: anything else that writes to process.stdout (console.log in
 * a dependency, a stray debug print) goes to stderr instead, so a client never reads a line that
 * is not JSON-RPC. Returns the stream the transport writes to.
 */
function reserveStdout(): Writable {
  const stdout = process.stdout;
  const original: typeof stdout.write = stdout.write.bind(stdout);
  stdout.write = process.stderr.write.bind(process.stderr);
  const protocol = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      original(chunk, (error?: Error | null) => callback(error ?? null));
    },
  });
  // A client gone without closing our stdin leaves a broken pipe: the transport's stream reports it.
  stdout.on('error', (error: Error) => protocol.destroy(error));
  return protocol;
}

/**
 * `agent-memory mcp`: MCP over stdio as the local tenant with every scope, on the embedded database
 * in the default data folder unless configured otherwise. Logs go to stderr. When the client closes
 * stdin, the database is closed and the process exits.
 */
export async function mcp(config: Config): Promise<void> {
  const protocolOut = reserveStdout();
  // Opening the embedded database takes its folder's lock: a second process on it refuses to start.
  const running = await startCore(config);
  const { core } = running;
  const deadline = () => setTimeout(() => process.exit(0), EXIT_DEADLINE_MS).unref();
  process.stdin.once('end', deadline);
  process.stdin.once('close', deadline);
  let exiting = false;
  const exit = (code: number) => {
    if (exiting) return;
    exiting = true;
    deadline();
    void running
      .close()
      .catch((error: unknown) => core.log.error({ err: error }, 'closing the database failed'))
      .finally(() => process.exit(code));
  };
  process.once('SIGINT', () => exit(0));
  process.once('SIGTERM', () => exit(0));

  let actor;
  try {
    actor = await localActor(core);
  } catch (error) {
    await running.close();
    throw error;
  }
  core.log.info(
    { engine: running.engine, embedder: core.embedder.id, agent_id: config.agentId ?? null },
    'agent-memory mcp serving on stdio',
  );
  await serveStdio(
    core,
    { actor, agentId: config.agentId },
    { stdin: process.stdin, stdout: protocolOut, drainMs: DRAIN_MS },
  );
  exit(0);
}
