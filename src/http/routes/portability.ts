import { createReadStream } from 'node:fs';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { boundAgents } from '../../domain/agent-binding.js';
import { AppError } from '../../errors.js';
import { exportTenant } from '../../portability/export.js';
import { IMPORT_FORMATS } from '../../portability/formats.js';
import { importStream } from '../../portability/run-import.js';
import { exportSubject } from '../../portability/subject-export.js';
import { agentId, booleanFlag } from '../../schemas/fields.js';
import { IdParams } from '../../schemas/inputs.js';
import { AnchorObject, MemoryObject, ProblemObject, SessionObject } from '../../schemas/objects.js';
import { route } from '../route.js';
import { spoolBody } from '../spool.js';

const ExportQuery = z.object({
  audit: booleanFlag.optional().describe('true: add the audit trail (ids and counts, never content)'),
});

const ImportQuery = z.object({
  format: z
    .enum(IMPORT_FORMATS)
    .default('agent-memory')
    .describe('agent-memory (our export), mem0 (its memory list), mcp-memory (the MCP memory server file)'),
  agent_id: agentId
    .default('import')
    .describe('The agent that owns imported memories whose source names none (mem0 without agent_id, mcp-memory)'),
});

const SubjectExportObject = z.object({
  format: z.literal('agent-memory-subject'),
  version: z.literal(1),
  exported_at: z.string(),
  anchor: AnchorObject,
  sessions: z.array(SessionObject),
  memories: z.array(MemoryObject.extend({ mentioned_in_sessions: z.array(z.string()) })),
});

const counts = { anchors: z.number().int(), sessions: z.number().int(), memories: z.number().int() };
const ImportResultObject = z.object({
  lines: z.number().int().describe('The number of the last line read'),
  imported: z.object({ ...counts, canon: z.number().int(), audit: z.number().int() }),
  existing: z.number().int().describe('Records left as they were: their id (or subject external id) exists'),
});

/** The most an import body may hold, once decompressed: it is spooled to disk before it is read. */
export const IMPORT_MAX_BYTES = 4 * 1024 * 1024 * 1024;

/** Lines are gathered into writes of about this size: a write per record would cost more than the records. */
const WRITE_BYTES = 64 * 1024;

/** A line sink over the response that waits when the client reads slowly, and fails when it is gone. */
function responseSink(res: Response): { write(line: string): Promise<void>; end(): Promise<void> } {
  let buffered: string[] = [];
  let size = 0;
  const flush = (): Promise<void> => {
    if (buffered.length === 0) return Promise.resolve();
    const chunk = buffered.join('');
    buffered = [];
    size = 0;
    if (res.destroyed) return Promise.reject(new Error('the client closed the export'));
    if (res.write(chunk)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (error?: Error) => {
        res.off('drain', onDrain);
        res.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = () => done();
      const onClose = () => done(new Error('the client closed the export'));
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
  };
  return {
    write(line) {
      buffered.push(line);
      size += line.length;
      return size >= WRITE_BYTES ? flush() : Promise.resolve();
    },
    async end() {
      await flush();
      res.end();
    },
  };
}

/** Errors of the decompressors: the client's bytes are not what their Content-Encoding says. */
const decodeErrors = new WeakSet<object>();

/** The request body, decompressed when it says it is compressed. */
function bodyStream(req: Request): Readable {
  const encoding = (req.get('content-encoding') ?? 'identity').toLowerCase();
  const decoder =
    encoding === 'gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (encoding === 'identity') return req;
  if (!decoder) throw new AppError('unsupported_media_type', 'send the body uncompressed, or with gzip, deflate or br');
  decoder.once('error', (error) => decodeErrors.add(error));
  return req.pipe(decoder);
}

export const portabilityRoutes = [
  route({
    method: 'get',
    path: '/v1/anchors/{id}/export',
    operationId: 'exportAnchor',
    summary:
      'Everything bound to one subject, as one JSON document: the anchor, its memories of every binding and status, its sessions',
    tag: 'portability',
    access: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The subject, read in one snapshot', schema: SubjectExportObject },
      404: { description: 'No such anchor', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({
      status: 200,
      body: await exportSubject(core, actor, params.id),
    }),
  }),
  route({
    method: 'get',
    path: '/v1/export',
    operationId: 'exportTenant',
    summary:
      "The whole tenant as NDJSON, one typed record a line (header, anchors, sessions, memories, canon, audit on request, end), from one snapshot; never keys. A key bound to agents gets no other agent's private memory nor its events",
    tag: 'portability',
    access: 'admin',
    query: ExportQuery,
    responses: {
      200: {
        description: 'NDJSON records; a stream without its closing "end" record was cut short',
        mediaType: 'application/x-ndjson',
      },
    },
    handle: async ({ core, actor, query, res }) => {
      const sink = responseSink(res);
      res.status(200);
      res.type('application/x-ndjson');
      res.setHeader('Content-Disposition', 'attachment; filename="agent-memory-export.ndjson"');
      try {
        await exportTenant(core, actor.tenantId, { audit: query.audit === true, agents: boundAgents(actor) }, (line) =>
          sink.write(line),
        );
        await sink.end();
      } catch (error) {
        // Once the first line is out the status cannot change: cutting the connection is what tells
        // the client (with the missing end record) that the file is incomplete.
        if (res.headersSent) res.destroy();
        throw error;
      }
      return { status: 200, streamed: true };
    },
  }),
  route({
    method: 'post',
    path: '/v1/import',
    operationId: 'importRecords',
    summary:
      "Import NDJSON into the caller's tenant: our own export, a mem0 memory list, or the MCP memory server's file; idempotent",
    tag: 'portability',
    access: 'admin',
    query: ImportQuery,
    rawBody: {
      mediaTypes: ['application/x-ndjson', 'application/jsonl', 'application/json', 'text/plain'],
      description:
        'One record a line, each at most the body limit; a mem0 file may also be one JSON document (up to 64 MiB). gzip, deflate and br bodies are decompressed; at most 4 GiB in all.',
    },
    responses: {
      200: { description: 'Every line was imported', schema: ImportResultObject },
      400: {
        description: 'A bad line, named by its number; the lines before it are imported, nothing of it is',
        schema: ProblemObject,
      },
      409: {
        description: 'A line collides with what the tenant holds (an external id of another anchor)',
        schema: ProblemObject,
      },
      413: { description: 'A line over the limit', schema: ProblemObject },
    },
    handle: async ({ core, actor, query, req }) => {
      try {
        const spooled = await spoolBody(bodyStream(req), IMPORT_MAX_BYTES);
        try {
          const body = await importStream(core, actor, createReadStream(spooled.path), {
            format: query.format,
            agentId: query.agent_id,
          });
          return { status: 200, body };
        } finally {
          await spooled.remove();
        }
      } catch (error) {
        // The client's compressed bytes, not our fault.
        if (typeof error === 'object' && error !== null && decodeErrors.has(error))
          throw new AppError('invalid_request', 'the body is not valid data of its Content-Encoding');
        throw error;
      }
    },
  }),
];
