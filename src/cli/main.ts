import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { startSweeper, sweepExpired } from '../domain/lifecycle/sweeper.js';
import { createTenant } from '../domain/tenancy/tenants.js';
import type { Running } from '../start-core.js';
import { knownFailure, UsageError } from './failure.js';
import { VERSION } from '../version.js';

// The CLI is the one place that writes to the terminal directly; the server logs through pino.

const USAGE = `agent-memory ${VERSION}: a memory service for LLM agents

Usage:
  agent-memory serve              REST API under /v1 and MCP at /mcp on HOST:PORT (default 127.0.0.1:8080)
  agent-memory mcp                MCP over stdio for a local client (Claude Code, Claude Desktop)
  agent-memory setup --org NAME   create a tenant in the database and print its admin key
  agent-memory keys create [--local | --tenant ID | --org NAME] [--scopes read,write,admin] [--name NAME]
                                  create an API key for a tenant (default: the local one of \`mcp\`) and print it
  agent-memory migrate [--citus]  apply database migrations and exit; with --citus, then distribute
                                  the tables over the Citus cluster of DATABASE_URL by tenant
  agent-memory sweep              delete expired memories (and expired sessions' memories) and old
                                  finished jobs once and exit
  agent-memory reembed            re-embed stored memories with the configured EMBEDDER (servers stopped)
  agent-memory export [--out FILE] [--audit] [--tenant ID]
                                  the tenant as NDJSON (default: the local tenant, to stdout)
  agent-memory import FILE [--format agent-memory|mem0|mcp-memory] [--agent-id ID] [--tenant ID]
                                  import a file of that format into the tenant
  agent-memory help               this text

Configuration comes from the environment: DATABASE_URL (unset: embedded database in DATA_DIR),
PORT, HOST, SETUP_TOKEN, EMBEDDER, LOG_LEVEL; see docs/configuration.md for all of them.`;

/**
 * The core's wiring (database drivers, embedders, the model client) takes most of a second to
 * import; loaded when a command needs it, so that `mcp` answers `initialize` first and `help` is instant.
 */
const startCore = async (config: Config, options: { webhooks?: boolean } = {}): Promise<Running> =>
  (await import('../start-core.js')).startCore(config, options);

/** The URL a person opens: on every interface, this machine's own name reaches it. */
function baseUrl(address: AddressInfo): string {
  const host = address.address === '0.0.0.0' || address.address === '::' ? 'localhost' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

async function serve(config: Config): Promise<void> {
  // Imported here, not at the top: `mcp` answers its client sooner without the HTTP stack loaded.
  const [
    { createApp },
    { createHttpServer },
    { createMetrics, createMetricsApp, withMetrics },
    { sweepSpools },
    { McpSessions },
    { assertPortFree, listenFailure },
    { startJobRunner },
  ] = await Promise.all([
    import('../app.js'),
    import('../http/server.js'),
    import('../http/metrics.js'),
    import('../http/spool.js'),
    import('../mcp/sessions.js'),
    import('../http/port.js'),
    import('../jobs/runner.js'),
  ]);
  // Before the database and the model, which take seconds: a taken port is told at once.
  await assertPortFree(config.port, config.host, 'PORT');
  if (config.metrics.port !== undefined) await assertPortFree(config.metrics.port, config.host, 'METRICS_PORT');
  // The server delivers webhooks too, beside the sweeper (WEBHOOK_DISPATCH=false leaves it to others).
  const running = await startCore(config, { webhooks: true });
  // What imports and exports of a process killed meanwhile left in the spool folder.
  const swept = await sweepSpools(config.portability.spoolDir);
  if (swept.length > 0) running.core.log.info({ folders: swept.length }, 'removed abandoned spool folders');
  // One set of metrics for the API, the sweeper and the metrics port (src/http/metrics.ts).
  const metrics = createMetrics(running.core.llm, running.core.reads);
  const core = withMetrics(running.core, metrics);
  const mcpSessions = new McpSessions(core, config.mcpSessions);
  const app = createApp(core, { metrics, mcpSessions });
  const stopSweeper =
    config.sweepIntervalSeconds > 0 ? startSweeper(core, config.sweepIntervalSeconds * 1000) : () => undefined;
  // Jobs queued with ?async=true, by this process or any other of the database (src/jobs/runner.ts).
  const jobs = startJobRunner(core);
  const server = createHttpServer(app, config.httpLimits).listen(config.port, config.host);
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : createHttpServer(createMetricsApp(metrics, config.metrics), config.httpLimits).listen(
          config.metrics.port,
          config.host,
        );
  const listening = (s: Server, port: number, setting: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      s.once('listening', resolve);
      s.once('error', (error) => reject(listenFailure(error, port, config.host, setting)));
    });
  try {
    await Promise.all([
      listening(server, config.port, 'PORT'),
      ...(metricsServer && config.metrics.port !== undefined
        ? [listening(metricsServer, config.metrics.port, 'METRICS_PORT')]
        : []),
    ]);
  } catch (error) {
    // Taken since the check: the database is open by now, and closing it lets PGlite flush.
    stopSweeper();
    await running.close();
    throw error;
  }
  if (metricsServer) {
    const { port } = metricsServer.address() as AddressInfo;
    core.log.info({ port }, `metrics on http://${config.host}:${port}/metrics`);
  }
  const address = server.address() as AddressInfo;
  const base = baseUrl(address);
  core.log.info(
    {
      host: address.address,
      port: address.port,
      engine: running.engine,
      citus: running.citus,
      embedder: core.embedder.id,
      console: `${base}/console/`,
      docs: `${base}/docs`,
    },
    `agent-memory listening on ${base}: console ${base}/console/, API reference ${base}/docs, MCP ${base}/mcp`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    core.log.info({ signal }, 'shutting down');
    stopSweeper();
    metricsServer?.close();
    // A session's open GET stream would hold its connection, and so the server, open.
    void mcpSessions.closeAll();
    // Stop accepting, let in-flight requests and running jobs finish (or hand the jobs back to the
    // queue), then close the database so PGlite flushes.
    const jobsStopped = jobs.stop();
    server.close(() => {
      void jobsStopped.then(() => running.close()).then(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

async function setup(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { org: { type: 'string' } } });
  const org = values.org?.trim();
  if (!org) throw new UsageError('setup needs --org NAME');
  const running = await startCore(config);
  try {
    const tenant = await createTenant(running.core, org);
    process.stdout.write(`tenant_id: ${tenant.tenantId}\napi_key:   ${tenant.apiKey}\n`);
    process.stderr.write('Store the key now: it is shown only once. It holds the read, write and admin scopes.\n');
  } finally {
    await running.close();
  }
}

async function migrateOnly(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { citus: { type: 'boolean', default: false } } });
  if (values.citus && !config.databaseUrl)
    throw new UsageError('migrate --citus needs DATABASE_URL (a Citus coordinator)');
  const running = await startCore(config);
  try {
    process.stderr.write('migrations are up to date\n');
    if (values.citus) {
      const { distributeOverCitus } = await import('../start-core.js');
      const ran = await distributeOverCitus(running);
      process.stderr.write(
        ran.length > 0 ? `distributed over Citus (${ran.length} statements)\n` : 'already distributed over Citus\n',
      );
    }
  } finally {
    await running.close();
  }
}

async function sweepOnce(config: Config): Promise<void> {
  const running = await startCore(config);
  try {
    const result = await sweepExpired(running.core);
    process.stderr.write(
      result.leader
        ? `deleted ${result.expired} expired memories\n`
        : 'another process is sweeping right now; nothing done\n',
    );
    const { deleteExpiredJobs } = await import('../jobs/runner.js');
    process.stderr.write(`deleted ${await deleteExpiredJobs(running.core)} finished jobs past their retention\n`);
  } finally {
    await running.close();
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === '--version' || command === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve':
      return serve(config);
    case 'setup':
      return setup(config, rest);
    case 'mcp':
      return (await import('./mcp.js')).mcp(config);
    case 'migrate':
      return migrateOnly(config, rest);
    case 'sweep':
      return sweepOnce(config);
    case 'keys':
      return (await import('./keys.js')).keys(config, rest, startCore);
    case 'reembed':
      return (await import('./reembed.js')).reembed(config, rest);
    case 'export':
      return (await import('./portability.js')).exportCommand(config, rest);
    case 'import':
      return (await import('./portability.js')).importCommand(config, rest);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`agent-memory: ${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const known = knownFailure(error);
  if (known !== undefined) {
    process.stderr.write(`agent-memory: ${known}\n`);
    process.exit(1);
  }
  process.stderr.write(`agent-memory: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
