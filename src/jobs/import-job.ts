import type { ImportFormat } from '../portability/formats.js';
import type { ImportResult } from '../portability/import.js';
import { importStream } from '../portability/run-import.js';
import type { JobKind } from './kind.js';

/** An import job's input: the query of the request; its body is kept with the job (job_inputs). */
export interface ImportJobInput {
  format: ImportFormat;
  agent_id: string;
}

/** Stops the import at the next chunk once the process stops; the run resumes it (imports are idempotent). */
async function* untilAborted(chunks: AsyncIterable<Buffer>, signal: AbortSignal): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    signal.throwIfAborted();
    yield chunk;
  }
}

export const importJob: JobKind<ImportJobInput, ImportResult> = {
  // An import is idempotent: run again from the start, it finds what the first run wrote and
  // counts it as existing instead of writing it twice.
  resumable: () => true,
  run: ({ core, actor, input, body, bodyBytes, progress, signal }) =>
    importStream(core, actor, untilAborted(body(), signal), {
      format: input.format,
      agentId: input.agent_id,
      onProgress: (bytesRead) => progress({ bytes: bodyBytes, bytes_read: bytesRead }),
    }),
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
