import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A debug-level logger whose JSON lines a test reads back (and empties between tests). */
export function capturedLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  return { log, lines };
}
