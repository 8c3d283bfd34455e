import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './cli.js';

const run = promisify(execFile);

/** The PostgreSQL 15 server binaries of Debian's packages, which CI installs with pgvector. */
const PG_BIN = '/usr/lib/postgresql/15/bin';
export const CLUSTER_BINARIES = [`${PG_BIN}/initdb`, `${PG_BIN}/pg_ctl`];
export const clusterBinariesPresent = (): boolean => CLUSTER_BINARIES.every((file) => existsSync(file));

/**
 * A PostgreSQL cluster of a test's own, in a temporary folder on a free port: one the test may stop,
 * crash and restart, which the machine's shared cluster never is. Root (CI) may not run the server,
 * so there the folder belongs to the postgres user and the binaries run as that user.
 */
export interface OwnCluster {
  port: number;
  /** The URL of a database of the cluster. */
  url(database: string): string;
  start(): Promise<void>;
  /** pg_ctl stop: `fast` ends every session and checkpoints, `immediate` kills the server (a crash). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** One statement on a connection of its own, as the cluster's superuser. */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[], database?: string): Promise<R[]>;
  /** What the server has logged so far. */
  serverLog(): string;
  destroy(): Promise<void>;
}

export async function startOwnCluster(): Promise<OwnCluster> {
  const asRoot = process.getuid?.() === 0;
  const pgCommand = (file: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', file, ...args]) : run(file, args);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-memory-cluster-'));
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const port = await freePort();
  const initdbArgs = ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'];
  await pgCommand(`${PG_BIN}/initdb`, initdbArgs);
  // Appended as root, the file keeps its owner. The socket goes in the folder: the system's socket
  // folder may not be writable by the user the test runs as. Messages in English, for tests that
  // read the server's log.
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nlc_messages = 'C'\n`,
  );
  let running = false;
  const cluster: OwnCluster = {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await pgCommand(`${PG_BIN}/pg_ctl`, ['-D', data, '-l', logFile, '-w', '-t', '120', 'start']);
      running = true;
    },
    async stop(mode) {
      await pgCommand(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', mode, '-w', '-t', '120', 'stop']);
      running = false;
    },
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], database = 'postgres') {
      const client = new pg.Client({ connectionString: cluster.url(database) });
      // This client may see the cluster go away under it; the test process must survive that too.
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    serverLog: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async destroy() {
      try {
        if (running) await cluster.stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return cluster;
}
