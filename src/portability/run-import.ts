import { recordEvent } from '../domain/records/audit.js';
import type { Actor, Core } from '../domain/core.js';
import { AppError } from '../errors.js';
import { lineConverter, RECORD_MAX_DEPTH, tooDeepError, type ImportFormat } from './formats.js';
import { tooDeep, type JsonPath } from './json-depth.js';
import { atLine, ImportWriter, type ImportResult } from './import.js';
import { readLines, type Line } from './lines.js';

/**
 * mem0 hands out one JSON document (a list, or `{ "results": [...] }`), not lines, so its files
 * are read whole up to this size; our format and the MCP server's are streamed line by line.
 */
export const MEM0_DOCUMENT_MAX_BYTES = 64 * 1024 * 1024;

export interface ImportOptions {
  format: ImportFormat;
  /** The agent that owns imported memories whose source names none (mem0 without agent_id, MCP). */
  agentId: string;
  /** Called after each line with the bytes read so far. */
  onProgress?: (bytesRead: number) => void;
}

async function* counted(chunks: AsyncIterable<Buffer | string>, onBytes: (n: number) => void) {
  let total = 0;
  for await (const chunk of chunks) {
    total += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    onBytes(total);
    yield chunk;
  }
}

/** What a mem0 file is when it is not one JSON document. */
const LINES = Symbol('lines');

/** A mem0 document nested too deep, named by its memory (line N is its Nth) and field. */
function mem0TooDeep(path: JsonPath): AppError {
  // [i, field, ...] in a list; [key, i, field, ...] in { "results": [...] }; [field, ...] in one memory.
  const at = typeof path[0] === 'number' ? 0 : typeof path[1] === 'number' ? 1 : -1;
  const index = at === -1 ? 0 : (path[at] as number);
  return atLine(index + 1, tooDeepError(path.slice(at + 1)));
}

/** A mem0 document as lines, one memory each (line N is its Nth memory); a file of lines as it is. */
async function* mem0Lines(chunks: AsyncIterable<Buffer | string>, maxLineBytes: number): AsyncGenerator<Line> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += b.length;
    if (size > MEM0_DOCUMENT_MAX_BYTES)
      throw new AppError(
        'payload_too_large',
        `a mem0 file is read whole, and this one is over ${MEM0_DOCUMENT_MAX_BYTES} bytes: send it as one memory a line`,
      );
    parts.push(b);
  }
  const text = Buffer.concat(parts).toString('utf8');
  // A list of records (one level) or an object holding one (two) around records: deeper than that,
  // JSON.parse would build what JSON.stringify then cannot walk. Past the first value, the text is
  // not one document but lines, each judged as it is read.
  const deep = tooDeep(text, RECORD_MAX_DEPTH + 2);
  if (deep?.value === 0) throw mem0TooDeep(deep.path);
  let document: unknown = LINES;
  if (!deep) {
    try {
      document = JSON.parse(text) as unknown;
    } catch {
      // Not one document: one memory a line (e.g. `jq -c '.results[]'`).
    }
  }
  if (document === LINES) {
    yield* readLines([text], maxLineBytes);
    return;
  }
  const list = Array.isArray(document)
    ? document
    : typeof document === 'object' && document !== null
      ? ((document as { results?: unknown; memories?: unknown }).results ??
        (document as { memories?: unknown }).memories ?? [document])
      : undefined;
  if (!Array.isArray(list))
    throw new AppError(
      'invalid_request',
      'a mem0 file is a list of memories, an object with "results", or one memory a line',
    );
  let number = 0;
  for (const item of list) yield { number: ++number, text: JSON.stringify(item) };
}

/**
 * Imports a stream into the actor's tenant. Stops at the first bad line: the lines before it stay
 * imported (a second import of the fixed file adds only the rest), nothing of the bad line is written,
 * and the error names its number.
 */
export async function importStream(
  core: Core,
  actor: Actor,
  chunks: AsyncIterable<Buffer | string>,
  options: ImportOptions,
): Promise<ImportResult> {
  const maxLineBytes = core.config.bodyLimitBytes;
  const source = options.onProgress ? counted(chunks, options.onProgress) : chunks;
  const lines = options.format === 'mem0' ? mem0Lines(source, maxLineBytes) : readLines(source, maxLineBytes);
  const convert = lineConverter(options.format, { agentId: options.agentId, config: core.config, actor }, core.clock());
  const writer = new ImportWriter(core, actor);
  let last = 0;
  try {
    for await (const line of lines) {
      let item;
      try {
        item = convert(line);
      } catch (error) {
        throw error instanceof AppError ? atLine(line.number, error) : error;
      }
      await writer.add(item);
      last = line.number;
    }
  } catch (error) {
    // The lines before the bad one (or before the stream broke) are whole: they are kept. A line
    // among them that the database refuses comes earlier, so its error is the one reported.
    await writer.flush();
    await recordFinished(core, actor, options.format, writer.result(), error);
    throw error;
  }
  await writer.flush();
  const result = { ...writer.result(), lines: last };
  await recordFinished(core, actor, options.format, result, undefined);
  return result;
}

/**
 * The import's audit event (and its `import.finished` webhook): counts only. A transaction of its
 * own after the last batch's, so a crash between the two loses this event, never a line. An import
 * that stopped at a bad line says so; when the database itself is failing, recording that fails too
 * and the import's own error is the one reported. An import that completed and wrote nothing (the
 * same file again) records nothing: importing twice changes nothing, the trail included.
 */
async function recordFinished(
  core: Core,
  actor: Actor,
  format: ImportFormat,
  result: ImportResult,
  error: unknown,
): Promise<void> {
  if (error === undefined && Object.values(result.imported).every((n) => n === 0)) return;
  const changes = {
    format,
    outcome: error === undefined ? 'completed' : 'failed',
    lines: result.lines,
    ...result.imported,
    existing: result.existing,
  };
  try {
    await core.db
      .transaction()
      .execute((trx) => recordEvent(trx, actor, core.clock(), { action: 'import_finished', agentId: null, changes }));
  } catch (recordError) {
    if (error === undefined) throw recordError;
    core.log.warn({ err: recordError }, 'the failed import could not be recorded in the audit trail');
  }
}
