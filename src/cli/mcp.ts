import { Writable } from 'node:stream';
import type { Config } from '../config.js';
import { localActor } from '../domain/tenancy/local-tenant.js';
import { createLogger } from '../logger.js';
import { assertDatabaseFree } from '../preflight.js';
import type { Running } from '../start-core.js';
import { serveStdio } from '../mcp/stdio.js';
import { knownFailure } from './failure.js';
import { SCOPES } from '../vocabulary.js';

/** Requests received before stdin closed get this long to be answered (once startup has settled). */
const DRAIN_MS = 1_000;
/** No orphans: this long after stdin closes and startup has settled, the process exits, whatever still runs. */
const EXIT_DEADLINE_MS = 1_800;
/** A startup that has not settled this long after stdin closed is abandoned: the process exits. */
const STARTUP_CEILING_MS = 120_000;
/** Startup begins once `initialize` is answered, or this long after the start if none comes. */
const START_ANYWAY_MS = 1_000;

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
 * in the default data folder unless configured otherwise. `initialize` is answered at once, while
 * the database opens and migrates and the model loads; tool calls wait for that. Logs go to
 * stderr. When the client closes stdin, the database is closed and the process exits.
 */
export async function mcp(config: Config): Promise<void> {
  // The embedded folder's lock is checked before anything is answered: a client shows a server that
  // exits before `initialize` as failed, with its stderr, and this one line says why and what to do.
  assertDatabaseFree(config);
  const protocolOut = reserveStdout();
  const log = createLogger(config.logLevel);
  let running: Running | undefined;
  let begun = false;
  let exiting = false;
  const started = performance.now();

  // Loading the core's modules and opening the database keep the one thread busy for a while, so
  // they begin once `initialize` is answered: clients send it first thing, and give up without it.
  let begin = () => undefined as void;
  const initialized = new Promise<void>((resolve) => (begin = resolve));
  const startAnyway = setTimeout(begin, START_ANYWAY_MS);
  const ready = (async () => {
    await initialized;
    clearTimeout(startAnyway);
    // Stopped before it began: nothing to open, and nothing to wait for.
    if (exiting) return new Promise<never>(() => undefined);
    begun = true;
    // Imported here: its drivers and embedders take most of a second to load, after `initialize`.
    const { startCore } = await import('../start-core.js');
    running = await startCore(config, { log, webhooks: true });
    const actor = await localActor(running.core);
    log.info(
      { engine: running.engine, embedder: running.core.embedder.id, ms: Math.round(performance.now() - started) },
      'agent-memory mcp ready',
    );
    return { core: running.core, actor };
  })().catch(async (error: unknown) => {
    const known = knownFailure(error);
    // One line on stderr, which clients show; the stack only when the failure is unexpected.
    if (known === undefined) log.error({ err: error }, 'startup failed');
    const line = known ?? (error instanceof Error ? error.message : String(error));
    process.stderr.write(`agent-memory: ${line}\n`);
    await running?.close().catch(() => undefined);
    running = undefined;
    throw new Error(line);
  });
  // Settles either way; what failed is answered to the client by serveStdio.
  const settled = ready.then(
    () => undefined,
    () => undefined,
  );

  const deadline = () => {
    setTimeout(() => process.exit(0), STARTUP_CEILING_MS).unref();
    void settled.then(() => setTimeout(() => process.exit(0), EXIT_DEADLINE_MS).unref());
  };
  process.stdin.once('end', deadline);
  process.stdin.once('close', deadline);
  const exit = (code: number) => {
    if (exiting) return;
    exiting = true;
    deadline();
    // A database still opening is closed once it is open, so that PGlite leaves its folder whole.
    void (begun ? settled : Promise.resolve())
      .then(() => running?.close())
      .catch((error: unknown) => log.error({ err: error }, 'closing the database failed'))
      .finally(() => process.exit(code));
  };
  process.once('SIGINT', () => exit(0));
  process.once('SIGTERM', () => exit(0));

  log.info({ agent_id: config.agentId ?? null }, 'agent-memory mcp serving on stdio');
  await serveStdio(
    { config, log, scopes: new Set(SCOPES), agentId: config.agentId, ready },
    { stdin: process.stdin, stdout: protocolOut, drainMs: DRAIN_MS, onInitialized: () => begin() },
  );
  exit(0);
}
