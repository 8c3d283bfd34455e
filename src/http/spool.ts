import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors.js';

/**
 * A request body written to a temporary file as fast as it arrives. HTTP_REQUEST_TIMEOUT_MS counts
 * until the whole body is received, and an import that read its body only as fast as it embeds and
 * writes would be cut by it; spooled, the body is in within the timeout and is then read from disk
 * at the import's pace, in constant memory either way.
 */
export interface Spooled {
  path: string;
  remove(): Promise<void>;
}

export async function spoolBody(body: Readable, maxBytes: number): Promise<Spooled> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-memory-import-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const file = path.join(dir, 'body');
  let size = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) done(new AppError('payload_too_large', `the body is larger than ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(body, limit, createWriteStream(file));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path: file, remove };
}
