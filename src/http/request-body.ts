import { Transform, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Request } from 'express';
import { AppError } from '../errors.js';

/**
 * Up to this many decompressed bytes are taken whatever the ratio: the first bytes of a stream say
 * little about its ratio, and a small file of very repetitive lines is no threat.
 */
const RATIO_FREE_BYTES = 1024 * 1024;

/** Errors of the decompressors: the client's bytes are not what their Content-Encoding says. */
const decodeErrors = new WeakSet<object>();

/** A failure of the body's decoding, as the client's 400 (other errors as they are). */
export function bodyError(error: unknown): unknown {
  return typeof error === 'object' && error !== null && decodeErrors.has(error)
    ? new AppError('invalid_request', 'the body is not valid data of its Content-Encoding')
    : error;
}

function decoderFor(encoding: string): Transform | undefined {
  switch (encoding) {
    case 'gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
  }
  return undefined;
}

/**
 * The request body, decompressed when it says it is compressed. A compressed body that grows past
 * `maxRatio` times the bytes received (beyond its first MiB) is refused with 413 as it is read: a
 * decompression bomb of 1 MiB is stopped after a few MiB instead of filling the disk.
 */
export function decodedBody(req: Request, maxRatio: number): Readable {
  const encoding = (req.get('content-encoding') ?? 'identity').toLowerCase();
  if (encoding === 'identity') return req;
  const decoder = decoderFor(encoding);
  if (!decoder) throw new AppError('unsupported_media_type', 'send the body uncompressed, or with gzip, deflate or br');
  // Errors that the streams after it hand back to it (pipeline destroys every stream with the first
  // error) are theirs, not a bad encoding: only the decoder's own are marked.
  decoder.once('error', (error) => {
    if (!(error instanceof AppError)) decodeErrors.add(error);
  });
  let received = 0;
  let produced = 0;
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  const ratio = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      produced += chunk.length;
      if (produced > RATIO_FREE_BYTES && produced > received * maxRatio) {
        done(
          new AppError(
            'payload_too_large',
            `the body decompresses to more than ${maxRatio} times its size (IMPORT_MAX_COMPRESSION_RATIO)`,
          ),
        );
        return;
      }
      done(null, chunk);
    },
  });
  // Decoder failures surface on the stream the caller reads; once that one is done with, for
  // whatever reason, the decoder is released and the rest of the body left for Node to discard.
  decoder.once('error', (error) => ratio.destroy(error));
  ratio.once('close', () => {
    req.unpipe(decoder);
    decoder.destroy();
  });
  req.pipe(decoder).pipe(ratio);
  return ratio;
}
