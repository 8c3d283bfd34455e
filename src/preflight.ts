import type { Config } from './config.js';
import { assertDataDirFree } from './db/data-dir-lock.js';

/**
 * Checks a door makes before it starts the core, each told in one line. Light on purpose: the
 * doors import it before start-core, whose drivers and embedders take most of a second to load.
 */

/** The embedded database's folder is not held by another process (nothing to check on Postgres or in memory). */
export function assertDatabaseFree(config: Config): void {
  if (config.databaseUrl === undefined && config.dataDir !== ':memory:') assertDataDirFree(config.dataDir);
}
