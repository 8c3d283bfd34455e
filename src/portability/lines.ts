import { AppError } from '../errors.js';

/** One line of an NDJSON stream, numbered from 1 as an editor shows it. */
export interface Line {
  number: number;
  text: string;
}

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into lines without holding more than one line (and one chunk): a line over
 * `maxBytes` is refused by its number, whatever follows. Blank lines are skipped but counted.
 */
export async function* readLines(
  chunks: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
  maxBytes: number,
): AsyncGenerator<Line> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const tooLong = () =>
    new AppError('payload_too_large', `line ${number + 1} is longer than ${maxBytes} bytes`, [
      { path: `line ${number + 1}`, message: `must be at most ${maxBytes} bytes` },
    ]);
  const take = (last: Buffer): Line | undefined => {
    const text = Buffer.concat([...pending, last])
      .toString('utf8')
      .replace(/\r$/u, '');
    pending = [];
    pendingBytes = 0;
    number++;
    return text.trim() === '' ? undefined : { number, text };
  };
  for await (const raw of chunks) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE)) {
      if (pendingBytes + at > maxBytes) throw tooLong();
      const line = take(chunk.subarray(0, at));
      if (line) yield line;
      chunk = chunk.subarray(at + 1);
    }
    pendingBytes += chunk.length;
    if (pendingBytes > maxBytes) throw tooLong();
    if (chunk.length > 0) pending.push(chunk);
  }
  if (pendingBytes > 0) {
    const line = take(Buffer.alloc(0));
    if (line) yield line;
  }
}
