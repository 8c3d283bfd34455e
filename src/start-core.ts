import type { Logger } from 'pino';
import type { Config } from './config.js';
import { analyze, openDatabase, openReadReplica, type DbHandle } from './db/connect.js';
import { openExportPool } from './db/export-pool.js';
import { assertDataDirWritable } from './db/data-dir-lock.js';
import { ReadReplicas } from './db/read-replicas.js';
import { CHANGES_CHANNEL, ChangeFeed } from './domain/records/changes.js';
import type { Unlisten } from './db/listen.js';
import { detectCitus, withCitus } from './db/citus.js';
import { distributeForCitus, distributionPending } from './db/citus-distribute.js';
import { migrate } from './db/migrate.js';
import { contradictionDetectorFor } from './beliefs/detector.js';
import type { ContradictionDetector } from './beliefs/contradiction-detector.js';
import type { Clock, Core } from './domain/core.js';
import type { Embedder } from './embedding/embedder.js';
import type { ConversationExtractor } from './extraction/extractor.js';
import { extractorFor } from './extraction/factory.js';
import { createEmbedder } from './embedding/factory.js';
import { llmBreakerFor } from './llm/breaker.js';
import { createLogger } from './logger.js';
import { reportingUnavailable } from './embedding/unavailable.js';
import { cachingQueries } from './embedding/query-cache.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { WEBHOOKS_CHANNEL } from './db/webhook-outbox.js';

export interface Running {
  core: Core;
  engine: 'pglite' | 'postgres';
  /** The Postgres is a Citus coordinator (src/db/citus.ts). */
  citus: boolean;
  /** This process's webhook dispatcher, when it delivers (src/webhooks/dispatcher.ts). */
  webhooks: WebhookDispatcher | undefined;
  close(): Promise<void>;
}

/** The one place that wires the core: database (migrated), embedder, clock, config and logger. */
export async function startCore(
  config: Config,
  overrides: {
    clock?: Clock;
    embedder?: Embedder;
    log?: Logger;
    contradictions?: ContradictionDetector;
    extractor?: ConversationExtractor;
    /**
     * Deliver webhooks from this process (unless WEBHOOK_DISPATCH=false): the long-running servers
     * (`serve`, `mcp`) do; one-shot commands leave what they record to them.
     */
    webhooks?: boolean;
  } = {},
): Promise<Running> {
  const log = overrides.log ?? createLogger(config.logLevel);
  // Before the model starts loading: an unusable folder is told at once, in one line.
  if (config.databaseUrl === undefined && config.dataDir !== ':memory:') assertDataDirWritable(config.dataDir);
  // The model loads (in its worker) while the database opens: together they are most of a start.
  const [loaded, opened] = await Promise.allSettled([
    overrides.embedder ? Promise.resolve(overrides.embedder) : createEmbedder(config),
    openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize, log }),
  ]);
  if (loaded.status === 'rejected' || opened.status === 'rejected') {
    // The database's failure first: it is the one a newcomer meets (no such database, folder in use).
    if (loaded.status === 'fulfilled') await loaded.value.close();
    if (opened.status === 'fulfilled') await opened.value.close();
    throw opened.status === 'rejected' ? opened.reason : (loaded as PromiseRejectedResult).reason;
  }
  const embedder = overrides.embedder ?? reportingUnavailable(cachingQueries(loaded.value), log);
  const handle = opened.value;
  let citus = false;
  try {
    const applied = await migrate(handle.db, embedder);
    if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
    // PGlite runs no autovacuum: nothing else refreshes the planner's statistics there.
    if (handle.engine === 'pglite') await analyze(handle.db);
    if (handle.engine === 'postgres') citus = await detectCitus(handle.db);
    // Citus plans prepared statements for their values (src/db/prepared-driver.ts, PlanModePolicy).
    if (handle.plans) handle.plans.forceGeneric = !citus;
    if (citus && (await distributionPending(handle.db))) {
      log.warn('this Citus database has tables that are not distributed yet: run `agent-memory migrate --citus`');
    }
  } catch (error) {
    await handle.close();
    await embedder.close();
    throw error;
  }
  // Opened after the migrations, which the replicas receive from the primary as they replay its WAL.
  const replicas: DbHandle[] = config.databaseReadUrls.map((url) => openReadReplica(url, config.dbPoolSize, log));
  for (const replica of replicas) if (replica.plans) replica.plans.forceGeneric = !citus;
  if (replicas.length > 0) log.info({ replicas: replicas.length }, 'recall reads the read replicas');
  // Every process hears every committed change of the database, its own and other processes' alike.
  const changes = new ChangeFeed(log);
  let unlisten: Unlisten | undefined;
  try {
    unlisten = await handle.listen?.(CHANGES_CHANNEL, (payload) => changes.receive(payload));
  } catch (error) {
    await Promise.all(replicas.map((r) => r.close()));
    await handle.close();
    await embedder.close();
    throw error;
  }
  const exportPool =
    handle.engine === 'postgres' && config.databaseUrl !== undefined
      ? openExportPool(config.databaseUrl, config.portability.exports.inAll, log)
      : undefined;
  if (exportPool?.plans) exportPool.plans.forceGeneric = !citus;
  // One breaker for the judge and the extractor: they call the same model.
  const llm = llmBreakerFor(config, log);
  // Marked on Citus, so that the statements that need it forward their settings to the workers.
  const marked = (db: DbHandle['db']) => (citus ? withCitus(db) : db);
  const core: Core = {
    db: marked(handle.db),
    embedder,
    contradictions: overrides.contradictions ?? contradictionDetectorFor(config, log, llm),
    extractor: overrides.extractor ?? extractorFor(config, log, llm),
    clock: overrides.clock ?? (() => new Date()),
    llm,
    config,
    log,
    changes,
    reads:
      replicas.length > 0
        ? new ReadReplicas(
            marked(handle.db),
            replicas.map((r) => marked(r.db)),
            config.readAfterWriteMs,
          )
        : undefined,
    exportDb: exportPool ? marked(exportPool.db) : undefined,
  };
  let webhooks: WebhookDispatcher | undefined;
  let unlistenWebhooks: Unlisten | undefined;
  if (overrides.webhooks === true && config.webhooks.dispatch) {
    const dispatcher = new WebhookDispatcher(core);
    try {
      // A commit that queued deliveries wakes this process at once; its timer covers the rest.
      unlistenWebhooks = await handle.listen?.(WEBHOOKS_CHANNEL, () => dispatcher.wake());
    } catch (error) {
      log.warn({ err: error }, 'webhook notifications unavailable: deliveries are found by polling');
    }
    dispatcher.start();
    webhooks = dispatcher;
  }
  let closed = false;
  return {
    core,
    engine: handle.engine,
    citus,
    webhooks,
    close: async () => {
      if (closed) return;
      closed = true;
      await webhooks?.stop();
      await unlistenWebhooks?.().catch((error: unknown) => log.warn({ err: error }, 'unlisten failed'));
      await unlisten?.().catch((error: unknown) => log.warn({ err: error }, 'unlisten failed'));
      await Promise.all([...replicas, ...(exportPool ? [exportPool] : [])].map((r) => r.close()));
      await handle.close();
      await embedder.close();
    },
  };
}

/** `migrate --citus`: distributes the tables over the Citus coordinator (src/db/citus-distribute.ts); the statements run. */
export async function distributeOverCitus(running: Running): Promise<string[]> {
  return distributeForCitus(running.core.db);
}
