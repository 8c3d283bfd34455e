import { z } from 'zod';
import type { Config } from '../config.js';
import type { Actor } from '../domain/core.js';
import { isUuid } from '../domain/text.js';
import { AppError } from '../errors.js';
import { nameId } from './foreign-ids.js';
import type { ImportItem } from './import.js';
import type { Line } from './lines.js';
import {
  AnchorRecord,
  ExportRecord,
  type AnchorRecord as AnchorRec,
  type DataRecord,
  type MemoryRecord,
  type SessionRecord,
} from './records.js';
import { agentId as agentIdField, metadata, METADATA_MAX_DEPTH, text } from '../schemas/fields.js';
import { tooDeep, type JsonPath } from './json-depth.js';

/**
 * The import formats, each a function from one line to our records (docs/portability.md says which
 * field goes where). Lines of other services' formats get ids derived from what identifies them
 * there, so a second import of the same file finds them and changes nothing.
 */

export const IMPORT_FORMATS = ['agent-memory', 'mem0', 'mcp-memory'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface FormatContext {
  /** The agent that owns memories whose source names none. */
  agentId: string;
  config: Config;
  actor: Actor;
}

export type LineConverter = (line: Line) => ImportItem;

/**
 * A record is one JSON object, and each of its fields nests at most as deep as metadata may: the
 * record's own level and METADATA_MAX_DEPTH below it. Checked on the text, before anything recurses.
 */
export const RECORD_MAX_DEPTH = METADATA_MAX_DEPTH + 1;

/** A record nested too deep, by the field that is. */
export function tooDeepError(path: JsonPath): AppError {
  const field = path[0] === undefined ? '' : String(path[0]);
  const message = `must not nest deeper than ${METADATA_MAX_DEPTH} levels`;
  return new AppError('invalid_request', `${field || 'record'} ${message}`, [{ path: field, message }]);
}

function parseJson(line: Line): unknown {
  const deep = tooDeep(line.text, RECORD_MAX_DEPTH);
  if (deep) throw tooDeepError(deep.path);
  try {
    return JSON.parse(line.text) as unknown;
  } catch {
    throw new AppError('invalid_request', 'not valid JSON', [{ path: '', message: 'must be one JSON value a line' }]);
  }
}

function invalid(error: z.ZodError): AppError {
  const errors = error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const first = errors[0];
  return new AppError(
    'invalid_request',
    first ? `${first.path || 'record'} ${first.message}` : 'invalid record',
    errors,
  );
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalid(parsed.error);
  return parsed.data;
}

/** Our own export: a header first, then records; the end record closes it. */
function ownFormat(): LineConverter {
  let seenHeader = false;
  return (line) => {
    const record = parseWith(ExportRecord, parseJson(line));
    if (record.type === 'header') {
      seenHeader = true;
      return { line: line.number, records: [] };
    }
    if (!seenHeader)
      throw new AppError('invalid_request', 'the first record must be the header of an agent-memory export', [
        { path: 'type', message: 'must be "header" on the first line' },
      ]);
    if (record.type === 'end') return { line: line.number, records: [] };
    return { line: line.number, records: [record] };
  };
}

/** Another service's time, in whatever ISO form it wrote, as ours (UTC, milliseconds). */
const foreignTime = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO-8601 time')
  .transform((s) => new Date(s).toISOString());

const optionalId = text().trim().min(1).max(256).nullish();

/** One memory as mem0 lists it (get_all, the platform's export): fields beyond these are ignored. */
const Mem0Memory = z.object({
  id: text().min(1).max(256),
  memory: text().refine((s) => s.trim().length > 0, 'must not be empty'),
  user_id: optionalId,
  agent_id: optionalId,
  run_id: optionalId,
  app_id: optionalId,
  hash: text().max(200).nullish(),
  metadata: metadata.nullish(),
  categories: z.array(text().max(200)).max(100).nullish(),
  created_at: foreignTime.nullish(),
  updated_at: foreignTime.nullish(),
});

/** New memories' confidence and decay, as a store would give them (docs/api.md §6). */
function beliefFor(config: Config, binding: 'private' | 'anchored' | 'session') {
  return { confidence: config.initialConfidence, decay_rate: config.decayPerDay[binding] };
}

function mem0Format(ctx: FormatContext, now: Date): LineConverter {
  return (line) => {
    const m = parseWith(Mem0Memory, parseJson(line));
    const agentId = m.agent_id ? parseWith(agentIdField, m.agent_id) : ctx.agentId;
    const created = m.created_at ?? now.toISOString();
    const updated = m.updated_at ?? created;
    const records: DataRecord[] = [];
    let anchorId: string | null = null;
    if (m.user_id) {
      anchorId = nameId('mem0-user', m.user_id);
      records.push(
        parseWith(AnchorRecord, {
          type: 'anchor',
          id: anchorId,
          anchor_external_id: m.user_id,
          name: null,
          metadata: { source: 'mem0' },
          created_at: created,
        }),
      );
    }
    let sessionId: string | null = null;
    if (m.run_id) {
      // One session per run of a user and agent; kept active, so that its memories do not expire.
      sessionId = nameId('mem0-run', m.run_id, m.user_id ?? '', agentId);
      const session: SessionRecord = {
        type: 'session',
        id: sessionId,
        agent_id: agentId,
        anchor_id: anchorId,
        status: 'active',
        metadata: { source: 'mem0', mem0_run_id: m.run_id },
        started_at: created,
        ended_at: null,
        expires_at: null,
      };
      records.push(session);
    }
    const binding = sessionId ? 'session' : anchorId ? 'anchored' : 'private';
    const memory: MemoryRecord = {
      type: 'memory',
      id: isUuid(m.id) ? m.id.toLowerCase() : nameId('mem0-memory', m.id),
      agent_id: agentId,
      content: m.memory.trim(),
      binding,
      anchor_id: anchorId,
      session_id: sessionId,
      status: 'active',
      ...beliefFor(ctx.config, binding),
      reinforcement_count: 0,
      superseded_by: null,
      metadata: {
        ...(m.metadata ?? {}),
        source: 'mem0',
        mem0_id: m.id,
        ...(m.hash ? { mem0_hash: m.hash } : {}),
        ...(m.categories && m.categories.length > 0 ? { categories: m.categories } : {}),
        ...(m.app_id ? { mem0_app_id: m.app_id } : {}),
      },
      created_at: created,
      updated_at: updated,
      last_reinforced_at: updated,
      mentioned_in_sessions: [],
    };
    return { line: line.number, records: [...records, memory] };
  };
}

/** The MCP reference memory server's knowledge graph file (memory.jsonl): entities and relations. */
const McpEntity = z.object({
  type: z.literal('entity'),
  name: text().trim().min(1).max(256),
  entityType: text().max(200).optional(),
  observations: z.array(text()).max(10_000).default([]),
});
const McpRelation = z.object({
  type: z.literal('relation'),
  from: text().trim().min(1).max(256),
  to: text().trim().min(1).max(256),
  relationType: text().trim().min(1).max(200),
});
const McpLine = z.discriminatedUnion('type', [McpEntity, McpRelation]);

function mcpAnchor(name: string, entityType: string | undefined, at: string): AnchorRec {
  return {
    type: 'anchor',
    id: nameId('mcp-entity', name),
    anchor_external_id: name,
    name,
    metadata: { source: 'mcp-memory', ...(entityType ? { entityType } : {}) },
    created_at: at,
  };
}

function mcpMemory(
  ctx: FormatContext,
  anchorId: string,
  content: string,
  at: string,
  metadata: Record<string, unknown>,
): MemoryRecord {
  return {
    type: 'memory',
    // The same fact about the same subject is one memory, however often the file repeats it.
    id: nameId('mcp-observation', anchorId, content),
    agent_id: ctx.agentId,
    content,
    binding: 'anchored',
    anchor_id: anchorId,
    session_id: null,
    status: 'active',
    ...beliefFor(ctx.config, 'anchored'),
    reinforcement_count: 0,
    superseded_by: null,
    metadata: { source: 'mcp-memory', ...metadata },
    created_at: at,
    updated_at: at,
    last_reinforced_at: at,
    mentioned_in_sessions: [],
  };
}

/** Relation types are written as identifiers (works_at); a fact reads better with spaces. */
const spacedRelation = (relationType: string): string => relationType.replace(/[_-]+/gu, ' ').trim();

function mcpFormat(ctx: FormatContext, now: Date): LineConverter {
  const at = now.toISOString();
  return (line) => {
    const value = parseWith(McpLine, parseJson(line));
    if (value.type === 'entity') {
      const anchor = mcpAnchor(value.name, value.entityType, at);
      const observations = value.observations.map((o) => o.trim()).filter((o) => o.length > 0);
      return {
        line: line.number,
        records: [anchor, ...observations.map((o) => mcpMemory(ctx, anchor.id, o, at, {}))],
      };
    }
    // A relation becomes a fact of its source entity ("Alice works at Acme"), so recall about the
    // source finds it; the target becomes a subject too, as the graph names it as one.
    const from = mcpAnchor(value.from, undefined, at);
    const to = mcpAnchor(value.to, undefined, at);
    const fact = `${value.from} ${spacedRelation(value.relationType)} ${value.to}`;
    return {
      line: line.number,
      records: [
        from,
        to,
        mcpMemory(ctx, from.id, fact, at, {
          relation: { from: value.from, to: value.to, relationType: value.relationType },
        }),
      ],
    };
  };
}

export function lineConverter(format: ImportFormat, ctx: FormatContext, now: Date): LineConverter {
  switch (format) {
    case 'agent-memory':
      return ownFormat();
    case 'mem0':
      return mem0Format(ctx, now);
    case 'mcp-memory':
      return mcpFormat(ctx, now);
  }
}
