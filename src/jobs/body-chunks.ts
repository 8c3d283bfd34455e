import { createReadStream } from 'node:fs';
import type { Db } from '../db/connect.js';

/** The size of one row of job_inputs: a raw body is kept and read back this much at a time. */
export const CHUNK_BYTES = 1024 * 1024;

/** Fixed-size pieces of a stream, the last one shorter. */
async function* rechunked(source: AsyncIterable<Buffer | string>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let held = 0;
  for await (const piece of source) {
    let b = typeof piece === 'string' ? Buffer.from(piece) : piece;
    while (held + b.length >= size) {
      const take = size - held;
      parts.push(b.subarray(0, take));
      yield Buffer.concat(parts);
      parts = [];
      held = 0;
      b = b.subarray(take);
    }
    if (b.length > 0) {
      parts.push(b);
      held += b.length;
    }
  }
  if (held > 0) yield Buffer.concat(parts);
}

/** Writes a file into job_inputs, inside the transaction that creates the job. */
export async function writeBody(trx: Db, tenantId: string, jobId: string, file: string): Promise<void> {
  let seq = 0;
  for await (const data of rechunked(createReadStream(file), CHUNK_BYTES)) {
    await trx.insertInto('job_inputs').values({ tenant_id: tenantId, job_id: jobId, seq, data }).execute();
    seq += 1;
  }
}

/** A job's body, chunk by chunk: one row in memory at a time. */
export async function* readBody(db: Db, tenantId: string, jobId: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const row = await db
      .selectFrom('job_inputs')
      .select('data')
      .where('tenant_id', '=', tenantId)
      .where('job_id', '=', jobId)
      .where('seq', '=', seq)
      .executeTakeFirst();
    if (!row) return;
    yield Buffer.from(row.data);
  }
}
