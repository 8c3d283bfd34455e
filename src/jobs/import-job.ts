import type { ImportFormat } from '../portability/formats.js';
import type { ImportResult } from '../portability/import.js';
import { importStream } from '../portability/run-import.js';
import type { JobKind } from './kind.js';

/** An import job's input: the query of the request; its body is kept with the job (job_inputs). */
export interface ImportJobInput {
  format: ImportFormat;
  agent_id: string;
}

/** The body is handed to the import this much at a time, with progress (and a turn for requests) between. */
const SLICE_BYTES = 64 * 1024;

/**
 * The body in slices, reporting the bytes read after each; stops at the next slice once the process
 * stops (the run resumes it: imports are idempotent).
 */
async function* sliced(
  chunks: AsyncIterable<Buffer>,
  signal: AbortSignal,
  onRead: (bytes: number) => Promise<void>,
): AsyncGenerator<Buffer> {
  let read = 0;
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
      signal.throwIfAborted();
      const slice = chunk.subarray(at, at + SLICE_BYTES);
      yield slice;
      read += slice.length;
      await onRead(read);
    }
  }
}

export const importJob: JobKind<ImportJobInput, ImportResult> = {
  // An import is idempotent: run again from the start, it finds what the first run wrote and
  // counts it as existing instead of writing it twice.
  resumable: () => true,
  run: ({ core, actor, input, body, bodyBytes, progress, signal }) =>
    importStream(
      core,
      actor,
      sliced(body(), signal, (read) => progress({ bytes: bodyBytes, bytes_read: read })),
      { format: input.format, agentId: input.agent_id },
    ),
  counts: (result) => ({
    lines: result.lines,
    anchors: result.imported.anchors,
    sessions: result.imported.sessions,
    memories: result.imported.memories,
    canon: result.imported.canon,
    audit: result.imported.audit,
    existing: result.existing,
  }),
};
