import { open } from 'node:fs/promises';
import path from 'node:path';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { LineSink } from '../portability/export.js';
import { makeSpoolDir } from './spool.js';

/** Lines are gathered into writes of about this size: a write per record would cost more than the records. */
const CHUNK_BYTES = 64 * 1024;

class Aborted extends Error {}

export interface SpooledExport {
  /** The spool folders' parent. */
  parent: string;
  /** A write that the client does not take within this long cuts the export. */
  writeTimeoutMs: number;
  log: Logger;
  /** Writes the export's lines; it is told to stop (its next write throws) when the client is gone. */
  produce(write: LineSink): Promise<unknown>;
  /** Sets the status and headers, once the first bytes (or the end) are ready. */
  start(): void;
}

/**
 * Sends an export through a file: the records are written to it at the database's pace and sent
 * from it at the client's, so that a client that reads slowly, or not at all, never holds a
 * database connection (the embedded database has one for everyone). The client holds a file until
 * it has taken it, or until a write of it waits longer than `writeTimeoutMs`: then the connection
 * is cut (the missing end record tells it the file is incomplete), and the file removed.
 */
export async function sendSpooledExport(res: Response, options: SpooledExport): Promise<void> {
  const dir = await makeSpoolDir(options.parent);
  const file = await open(path.join(dir.path, 'export.ndjson'), 'w+');
  let written = 0;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped: Aborted | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const more = () => new Promise<void>((resolve) => (wake = resolve));

  let pending: string[] = [];
  let pendingSize = 0;
  const flush = async () => {
    if (stopped) throw stopped;
    if (pending.length === 0) return;
    const chunk = Buffer.from(pending.join(''));
    pending = [];
    pendingSize = 0;
    await file.write(chunk, 0, chunk.length, written);
    written += chunk.length;
    notify();
  };
  const producing = options
    .produce((line) => {
      if (stopped) return Promise.reject(stopped);
      pending.push(line);
      pendingSize += line.length;
      return pendingSize >= CHUNK_BYTES ? flush() : Promise.resolve();
    })
    .then(flush)
    .then(
      () => {
        finished = true;
        notify();
      },
      (error: unknown) => {
        failure = { error };
        notify();
      },
    );
  const stop = (why: string) => {
    stopped ??= new Aborted(why);
    notify();
  };
  const onClose = () => stop('the client closed the export');
  res.on('close', onClose);

  try {
    while (written === 0 && !finished && !failure && !stopped) await more();
    // Nothing sent yet: the failure is still the request's answer, a problem document.
    if (failure && written === 0) throw failure.error;
    if (stopped) return;
    options.start();
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let sent = 0;
    for (;;) {
      if (stopped) return;
      if (sent < written) {
        const { bytesRead } = await file.read(buffer, 0, Math.min(CHUNK_BYTES, written - sent), sent);
        sent += bytesRead;
        // res.write keeps no reference to a copy it was given: the buffer is reused.
        if (!res.write(Buffer.from(buffer.subarray(0, bytesRead)))) await drained(res, options.writeTimeoutMs);
        continue;
      }
      if (failure) {
        // Once the first line is out the status cannot change: cutting the connection is what
        // tells the client (with the missing end record) that the file is incomplete.
        res.destroy();
        throw failure.error;
      }
      if (finished) {
        res.end();
        return;
      }
      await more();
    }
  } catch (error) {
    if (!(error instanceof WriteTimeout)) throw error;
    options.log.warn({ timeout_ms: options.writeTimeoutMs }, 'export cut: its client took nothing in time');
    res.destroy();
  } finally {
    res.off('close', onClose);
    stop('the export has ended');
    await producing;
    await file.close();
    await dir.remove();
  }
}

class WriteTimeout extends Error {}

/** Resolves when the response can take more; WriteTimeout if it cannot within `ms`. */
function drained(res: Response, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (res.destroyed) {
      resolve();
      return;
    }
    const done = (error?: Error) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onDrain);
      if (error) reject(error);
      else resolve();
    };
    // A closed response resolves too: the loop then sees the export stopped.
    const onDrain = () => done();
    const timer = setTimeout(() => done(new WriteTimeout()), ms);
    res.on('drain', onDrain);
    res.on('close', onDrain);
  });
}
