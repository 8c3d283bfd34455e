import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors.js';

const LOCK_FILE = 'agent-memory.lock';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const inUse = (dataDir: string, owner: number, file: string): AppError =>
  new AppError(
    'unavailable',
    `the embedded database in ${dataDir} is in use by process ${owner}, and two processes would ` +
      'corrupt it. For several clients at once, run `agent-memory serve` and connect them over HTTP ' +
      `(/mcp), or give each its own DATA_DIR. If no such process runs, delete ${file}.`,
  );

/** The live process other than this one that holds the folder's lock, if any. */
function holder(dataDir: string): { pid: number; file: string } | undefined {
  const file = path.join(dataDir, LOCK_FILE);
  const owner = readPid(file);
  return owner !== undefined && owner !== process.pid && isRunning(owner) ? { pid: owner, file } : undefined;
}

/**
 * Refuses at once when another live process holds the folder, without taking the lock: `mcp`
 * answers its client before it opens the database, so it checks first to fail where the client
 * sees it (stderr, exit 1) instead of on the first tool call. Opening still takes the lock.
 */
export function assertDataDirFree(dataDir: string): void {
  const held = holder(dataDir);
  if (held) throw inUse(dataDir, held.pid, held.file);
}

/**
 * The embedded database has no locking of its own, and two processes opening one data folder
 * corrupt it (the second one's writes break the first one's catalog). MCP clients start a server
 * per session, and `serve` and `mcp` share the default folder, so a second process on one folder is
 * likely: every opener takes this lock and a second one refuses to start instead. Returns the
 * release function; the lock is also released when the process exits.
 */
export function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        if (readPid(file) === process.pid) fs.rmSync(file, { force: true });
      };
      process.on('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = holder(dataDir);
      if (held) throw inUse(dataDir, held.pid, held.file);
      // Left behind by a process that died without cleaning up.
      fs.rmSync(file, { force: true });
    }
  }
  throw new AppError('unavailable', `could not lock ${dataDir}; another process keeps taking it`);
}

/**
 * Refuses, in one line, a data folder this process cannot create or write, before the database
 * opens and the model loads (which would end in a stack trace from deep inside the driver).
 */
export function assertDataDirWritable(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.W_OK | fs.constants.X_OK);
    if (!fs.statSync(dataDir).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'this user may not write there'
        : code === 'EROFS'
          ? 'it is on a read-only file system'
          : code === 'ENOTDIR' || code === 'EEXIST'
            ? 'it, or a folder on its path, is a file'
            : `${code}`;
    throw new AppError(
      'unavailable',
      `the data folder ${dataDir} (DATA_DIR) cannot be used: ${why}. Set DATA_DIR to a folder this user ` +
        'can write (it is created if missing), or set DATABASE_URL to use PostgreSQL instead.',
    );
  }
}
