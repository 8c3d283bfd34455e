import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, UnavailableError } from '../errors.js';

/**
 * Spool folders: an import's body, written to a temporary file as fast as it arrives, and an
 * export's records, written as fast as the database reads them. HTTP_REQUEST_TIMEOUT_MS counts
 * until the whole body is received, and an import that read its body only as fast as it embeds and
 * writes would be cut by it; spooled, the body is in within the timeout and is then read from disk
 * at the import's pace, in constant memory either way. An export spooled holds the database only
 * as long as reading takes, never as long as a slow client.
 *
 * A process killed mid-import cannot remove its folder, so every process sweeps abandoned ones at
 * start and whenever it makes a new one. A folder is abandoned when its owner file names this host
 * and a process that no longer runs (or this process, which has not made it), or when its owner has
 * not touched it for SPOOL_STALE_MS: live owners touch theirs every minute. The second rule covers
 * processes of other hosts or containers sharing the folder, whose process ids mean nothing here,
 * and process ids reused since.
 */

const PREFIX = 'agent-memory-spool-';
/** Folders of earlier versions: no owner file, so only their age tells. */
const LEGACY_PREFIX = 'agent-memory-import-';
const OWNER_FILE = 'owner.json';
export const SPOOL_STALE_MS = 10 * 60_000;
const HEARTBEAT_MS = 60_000;
const SWEEP_EVERY_MS = 60_000;

/** This process's live folders, touched by the heartbeat and never swept. */
const live = new Set<string>();
let heartbeat: NodeJS.Timeout | undefined;
const lastSweep = new Map<string, number>();

function beat(): void {
  const now = new Date();
  for (const dir of live) void utimes(dir, now, now).catch(() => undefined);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function ownerOf(dir: string): Promise<{ host: string; pid: number } | undefined> {
  try {
    const owner = JSON.parse(await readFile(path.join(dir, OWNER_FILE), 'utf8')) as { host?: unknown; pid?: unknown };
    return typeof owner.host === 'string' && Number.isSafeInteger(owner.pid)
      ? { host: owner.host, pid: owner.pid as number }
      : undefined;
  } catch {
    return undefined;
  }
}

async function abandoned(dir: string, now: number, staleMs: number): Promise<boolean> {
  const owner = await ownerOf(dir);
  if (owner?.host === os.hostname() && (owner.pid === process.pid || !isRunning(owner.pid))) return true;
  try {
    return (await stat(dir)).mtimeMs < now - staleMs;
  } catch {
    return false;
  }
}

/** Removes the abandoned spool folders in `parent`; answers the paths removed. */
export async function sweepSpools(parent: string, staleMs = SPOOL_STALE_MS): Promise<string[]> {
  lastSweep.set(parent, Date.now());
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return [];
  }
  const now = Date.now();
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(PREFIX) && !name.startsWith(LEGACY_PREFIX)) continue;
    const dir = path.join(parent, name);
    if (live.has(dir) || !(await abandoned(dir, now, staleMs))) continue;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    removed.push(dir);
  }
  return removed;
}

export interface SpoolDir {
  path: string;
  remove(): Promise<void>;
}

/** A new folder of this process in `parent`, after sweeping the abandoned ones (at most once a minute). */
export async function makeSpoolDir(parent: string): Promise<SpoolDir> {
  if (Date.now() - (lastSweep.get(parent) ?? 0) >= SWEEP_EVERY_MS) await sweepSpools(parent);
  const dir = await mkdtemp(path.join(parent, PREFIX));
  live.add(dir);
  if (!heartbeat) {
    heartbeat = setInterval(beat, HEARTBEAT_MS);
    heartbeat.unref();
  }
  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    live.delete(dir);
    if (live.size === 0 && heartbeat) {
      clearInterval(heartbeat);
      heartbeat = undefined;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await writeFile(path.join(dir, OWNER_FILE), JSON.stringify({ host: os.hostname(), pid: process.pid }));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path: dir, remove };
}

/** Seconds a client should wait for spool space or a turn: imports and exports take a while. */
export const BUSY_RETRY_SECONDS = 10;

/** The bytes all spools of one server may hold at once; each takes its share as it writes. */
export class SpoolBudget {
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get free(): number {
    return this.maxBytes - this.used;
  }

  /** Takes `bytes`, or refuses with 503: the space is held by other requests, and will be free again. */
  take(bytes: number): void {
    if (bytes > this.free) {
      throw new UnavailableError(
        `the server's spool space (${this.maxBytes} bytes) is held by other imports; retry later`,
        BUSY_RETRY_SECONDS,
      );
    }
    this.used += bytes;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}

export interface Spooled {
  path: string;
  remove(): Promise<void>;
}

/**
 * Writes a body to a file of a new spool folder: 413 past `maxBytes`, 503 when `budget` has no room
 * left. The body's bytes stay taken from the budget until `remove`.
 */
export async function spoolBody(
  open: () => Readable,
  options: { parent: string; maxBytes: number; budget: SpoolBudget; limitName?: string },
): Promise<Spooled> {
  const dir = await makeSpoolDir(options.parent);
  const file = path.join(dir.path, 'body');
  let size = 0;
  const remove = async () => {
    options.budget.give(size);
    size = 0;
    await dir.remove();
  };
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (size + chunk.length > options.maxBytes) {
        const name = options.limitName ?? 'IMPORT_MAX_BYTES';
        done(new AppError('payload_too_large', `the body is larger than ${options.maxBytes} bytes (${name})`));
        return;
      }
      try {
        options.budget.take(chunk.length);
      } catch (error) {
        done(error as Error);
        return;
      }
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    // The body is opened only once the pipeline can take its errors: a decoder opened before the
    // folder was made could fail with no listener yet, which ends the process.
    await pipeline(open(), limit, createWriteStream(file));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path: file, remove };
}
