import { createReadStream } from 'node:fs';
import type { Request } from 'express';
import { z } from 'zod';
import { boundAgents } from '../../domain/tenancy/agent-binding.js';
import type { Core } from '../../domain/core.js';
import { AppError } from '../../errors.js';
import { exportTenant } from '../../portability/export.js';
import { IMPORT_FORMATS } from '../../portability/formats.js';
import { importStream } from '../../portability/run-import.js';
import { exportSubject } from '../../portability/subject-export.js';
import { checkedFilter } from '../../filter/language.js';
import { agentId, booleanFlag, memoryFilterParam } from '../../schemas/fields.js';
import { IdParams } from '../../schemas/inputs.js';
import { AsyncQuery } from '../../schemas/jobs.js';
import { submitJob } from '../../jobs/jobs.js';
import type { ImportJobInput } from '../../jobs/import-job.js';
import { accepted, JOB_ACCEPTED } from './jobs.js';
import { AnchorObject, ImportResultObject, MemoryObject, ProblemObject, SessionObject } from '../../schemas/objects.js';
import { ConcurrencyGate } from '../concurrency.js';
import { sendSpooledExport } from '../export-response.js';
import { bodyError, decodedBody } from '../request-body.js';
import { route } from '../route.js';
import { SpoolBudget, spoolBody } from '../spool.js';

const ExportQuery = z.strictObject({
  audit: booleanFlag.optional().describe('true: add the audit trail (ids and counts, never content)'),
  filter: memoryFilterParam.optional(),
});

const SubjectExportQuery = z.strictObject({ filter: memoryFilterParam.optional() });

const ImportQuery = z.strictObject({
  ...AsyncQuery,
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

/** The turns and spool space of one server's imports and exports. */
interface PortabilityLimits {
  imports: ConcurrencyGate;
  exports: ConcurrencyGate;
  spool: SpoolBudget;
}

// One set per app (the app wraps its core once), so that servers in one process (tests) keep theirs apart.
const limitsByCore = new WeakMap<Core, PortabilityLimits>();

function limitsFor(core: Core): PortabilityLimits {
  let limits = limitsByCore.get(core);
  if (!limits) {
    const config = core.config.portability;
    limits = {
      imports: new ConcurrencyGate('imports', config.imports, {
        perTenant: 'IMPORT_CONCURRENCY_PER_TENANT',
        inAll: 'IMPORT_CONCURRENCY',
      }),
      exports: new ConcurrencyGate('exports', config.exports, {
        perTenant: 'EXPORT_CONCURRENCY_PER_TENANT',
        inAll: 'EXPORT_CONCURRENCY',
      }),
      spool: new SpoolBudget(config.spoolMaxBytes),
    };
    limitsByCore.set(core, limits);
  }
  return limits;
}

/** A body whose declared size is over what it may hold is refused before a byte of it is read. */
function checkDeclaredSize(
  req: Request,
  limits: PortabilityLimits,
  maxBytes: number,
  limitName = 'IMPORT_MAX_BYTES',
): void {
  const encoding = (req.get('content-encoding') ?? 'identity').toLowerCase();
  const length = Number(req.get('content-length'));
  // A compressed body's length says nothing of what it decompresses to.
  if (encoding !== 'identity' || !Number.isSafeInteger(length)) return;
  if (length > maxBytes)
    throw new AppError('payload_too_large', `the body is larger than ${maxBytes} bytes (${limitName})`);
  // Taken and given back at once: only a check that the spool has room now.
  limits.spool.take(length);
  limits.spool.give(length);
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
    query: SubjectExportQuery,
    responses: {
      200: { description: 'The subject, read in one snapshot', schema: SubjectExportObject },
      404: { description: 'No such anchor', schema: ProblemObject },
    },
    handle: async ({ core, actor, params, query }) => ({
      status: 200,
      body: await exportSubject(core, actor, params.id, checkedFilter(query.filter)),
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
      const leave = limitsFor(core).exports.enter(actor.tenantId);
      try {
        await sendSpooledExport(res, {
          parent: core.config.portability.spoolDir,
          writeTimeoutMs: core.config.portability.exportWriteTimeoutMs,
          log: core.log,
          // Read on the exports' own pool where there is one: never on the connections of other requests.
          produce: (write) =>
            exportTenant(
              { ...core, db: core.exportDb ?? core.db },
              actor.tenantId,
              { audit: query.audit === true, agents: boundAgents(actor), filter: checkedFilter(query.filter) },
              write,
            ),
          start: () => {
            res.status(200);
            res.type('application/x-ndjson');
            res.setHeader('Content-Disposition', 'attachment; filename="agent-memory-export.ndjson"');
          },
        });
      } finally {
        leave();
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
        'One record a line, each at most the body limit; a mem0 file may also be one JSON document (up to 64 MiB). gzip, deflate and br bodies are decompressed, to at most IMPORT_MAX_COMPRESSION_RATIO times their size; at most IMPORT_MAX_BYTES (4 GiB) in all.',
    },
    responses: {
      200: { description: 'Every line was imported', schema: ImportResultObject },
      202: {
        ...JOB_ACCEPTED,
        description: `${JOB_ACCEPTED.description}. The body is kept in the database until the job ends: at most JOB_INPUT_MAX_BYTES (256 MiB) once decompressed`,
      },
      400: {
        description: 'A bad line, named by its number; the lines before it are imported, nothing of it is',
        schema: ProblemObject,
      },
      409: {
        description: 'A line collides with what the tenant holds (an external id of another anchor)',
        schema: ProblemObject,
      },
      413: {
        description: 'A line over the limit, a body over IMPORT_MAX_BYTES, or one that decompresses too far',
        schema: ProblemObject,
      },
    },
    handle: async ({ core, actor, query, req, res }) => {
      const limits = limitsFor(core);
      const config = core.config.portability;
      const leave = limits.imports.enter(actor.tenantId);
      // A job's body waits in the database, so it has a bound of its own.
      const maxBytes =
        query.async === true ? Math.min(config.importMaxBytes, core.config.jobs.inputMaxBytes) : config.importMaxBytes;
      try {
        checkDeclaredSize(req, limits, maxBytes, query.async === true ? 'JOB_INPUT_MAX_BYTES' : 'IMPORT_MAX_BYTES');
        const spooled = await spoolBody(() => decodedBody(req, config.importMaxCompressionRatio), {
          parent: config.spoolDir,
          maxBytes,
          budget: limits.spool,
          limitName: query.async === true ? 'JOB_INPUT_MAX_BYTES' : 'IMPORT_MAX_BYTES',
        });
        try {
          if (query.async === true) {
            const job = await submitJob<ImportJobInput>(core, actor, {
              kind: 'import',
              input: { format: query.format, agent_id: query.agent_id },
              agentIds: boundAgents(actor),
              bodyFile: spooled.path,
            });
            return accepted(res, job);
          }
          const body = await importStream(core, actor, createReadStream(spooled.path), {
            format: query.format,
            agentId: query.agent_id,
          });
          return { status: 200, body };
        } finally {
          await spooled.remove();
        }
      } catch (error) {
        throw bodyError(error);
      } finally {
        leave();
      }
    },
  }),
];
