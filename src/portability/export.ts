import { sql, type Compilable, type Transaction, type WhereInterface } from 'kysely';
import { memoryFilterSql } from '../db/memory-filter.js';
import type { Database } from '../db/schema.js';
import type { MemoryFilter } from '../filter/language.js';
import { memoryVisibleTo } from '../domain/tenancy/agent-binding.js';
import { auditColumns, eventVisibleTo } from '../domain/records/audit.js';
import type { Core } from '../domain/core.js';
import { MEMORY_ROW_COLUMNS } from '../domain/records/memories.js';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type AnchorRecord,
  type AuditRecord,
  type CanonRecord,
  type EndRecord,
  type HeaderRecord,
  type MemoryRecord,
  type SessionRecord,
} from './records.js';

/**
 * The whole-tenant export: NDJSON, one record a line, read in one REPEATABLE READ transaction (one
 * snapshot: a store that lands meanwhile is wholly in or wholly out) through server-side cursors,
 * so the process holds one page of rows however large the tenant is.
 */

/** Rows fetched per round trip: large enough to amortize it, small enough to keep memory flat. */
const PAGE_ROWS = 500;

export interface ExportOptions {
  /** Include the audit trail (ids and counts, never content). */
  audit: boolean;
  /**
   * The agents of the key bound to them that asks (boundAgents): other agents' private memories
   * and their events are left out, as every other route leaves them out. Unset: the whole tenant.
   */
  agents?: readonly string[] | null;
  /** Only the memories and canon entries that pass it (docs/api.md, "Filters"); anchors and sessions whole. */
  filter?: MemoryFilter | null;
  /** Called as records are written, with how many of the snapshot's records there are in all. */
  onProgress?: (done: number, total: number) => void;
}

export type ExportCounts = Record<'anchors' | 'sessions' | 'memories' | 'canon' | 'audit', number>;

/** Writes one line; resolves when the sink can take more (backpressure). */
export type LineSink = (line: string) => Promise<void>;

type Trx = Transaction<Database>;

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** Reads a query through a cursor of this transaction, a page at a time. */
async function* cursorRows<R>(trx: Trx, name: string, query: Compilable<R>): AsyncGenerator<R> {
  // The name is one of ours, never input.
  await sql`DECLARE ${sql.raw(name)} NO SCROLL CURSOR FOR ${query}`.execute(trx);
  try {
    for (;;) {
      const page = await sql<R>`FETCH ${sql.lit(PAGE_ROWS)} FROM ${sql.raw(name)}`.execute(trx);
      for (const row of page.rows) yield row;
      if (page.rows.length < PAGE_ROWS) return;
    }
  } finally {
    await sql`CLOSE ${sql.raw(name)}`.execute(trx);
  }
}

const memoryColumns = (trx: Trx) =>
  trx.selectFrom('memories as m').select([
    ...MEMORY_ROW_COLUMNS,
    sql<string[]>`coalesce((SELECT json_agg(mm.session_id ORDER BY mm.session_id) FROM memory_mentions mm
        WHERE mm.tenant_id = m.tenant_id AND mm.memory_id = m.id), '[]'::json)`.as('mentioned_in_sessions'),
  ]);

type MemoryRow = Awaited<ReturnType<ReturnType<typeof memoryColumns>['executeTakeFirstOrThrow']>>;

function memoryRecordFields(r: MemoryRow) {
  return {
    id: r.id,
    agent_id: r.agent_id,
    content: r.content,
    status: r.status,
    confidence: r.confidence,
    decay_rate: r.decay_rate,
    reinforcement_count: r.reinforcement_count,
    superseded_by: r.superseded_by,
    metadata: r.metadata,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    last_reinforced_at: r.last_reinforced_at.toISOString(),
    occurred_at: r.occurred_at.toISOString(),
    superseded_at: r.superseded_at?.toISOString() ?? null,
    expires_at: r.expires_at?.toISOString() ?? null,
    pinned: r.pinned,
  };
}

export function toMemoryRecord(r: MemoryRow): MemoryRecord {
  // The binding is checked by the query: canon rows go out as canon records.
  const binding = r.binding as MemoryRecord['binding'];
  const { id, agent_id, content, ...rest } = memoryRecordFields(r);
  return {
    type: 'memory',
    id,
    agent_id,
    content,
    binding,
    anchor_id: r.anchor_id,
    session_id: r.session_id,
    ...rest,
    mentioned_in_sessions: r.mentioned_in_sessions,
  };
}

async function countRows(trx: Trx, tenantId: string, options: ExportOptions): Promise<ExportCounts> {
  const count = (table: 'sessions' | 'audit_events') => {
    const query = trx
      .selectFrom(table)
      .select(sql<number>`count(*)::int`.as('n'))
      .where('tenant_id', '=', tenantId);
    const agents = table === 'audit_events' ? options.agents : null;
    return (agents ? query.where(eventVisibleTo(agents)) : query).executeTakeFirstOrThrow().then((r) => Number(r.n));
  };
  const anchors = await trx
    .selectFrom('entities')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', 'subject')
    .executeTakeFirstOrThrow();
  const memories = await trx
    .selectFrom('memories as m')
    .where('m.tenant_id', '=', tenantId)
    .$call(onlyVisibleMemories(options))
    .select([
      sql<number>`count(*) FILTER (WHERE m.binding <> 'canon')::int`.as('memories'),
      sql<number>`count(*) FILTER (WHERE m.binding = 'canon')::int`.as('canon'),
    ])
    .executeTakeFirstOrThrow();
  return {
    anchors: Number(anchors.n),
    sessions: await count('sessions'),
    memories: Number(memories.memories),
    canon: Number(memories.canon),
    audit: options.audit ? await count('audit_events') : 0,
  };
}

/** Keeps of a query on memories `m` those the export may show: every one, or those a bound key can see. */
const onlyVisibleMemories =
  (options: ExportOptions) =>
  <Q extends WhereInterface<Database & { m: Database['memories'] }, 'm'>>(query: Q): Q =>
    passing(options, options.agents ? (query.where(memoryVisibleTo(options.agents)) as Q) : query);

/** Keeps of a query on memories `m` those that pass the export's filter, if it has one. */
const passing = <Q extends WhereInterface<Database & { m: Database['memories'] }, 'm'>>(
  options: ExportOptions,
  query: Q,
): Q => (options.filter ? (query.where(memoryFilterSql(options.filter)) as Q) : query);

/** The tenant's audit events the export may show, by the same rule as GET /v1/audit. */
function visibleEvents(trx: Trx, tenantId: string, options: ExportOptions) {
  const query = trx.selectFrom('audit_events').where('tenant_id', '=', tenantId);
  return options.agents ? query.where(eventVisibleTo(options.agents)) : query;
}

/**
 * Streams the tenant to `write`: a header, then anchors, sessions (which the memories refer to),
 * memories and canon in store order (so that an import keeps the order recall's session context
 * reads), the audit trail when asked, and an end record with the counts, whose absence tells a
 * reader that the stream was cut.
 */
export async function exportTenant(
  core: Core,
  tenantId: string,
  options: ExportOptions,
  write: LineSink,
): Promise<ExportCounts> {
  return core.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const total = await countRows(trx, tenantId, options);
      const all = Object.values(total).reduce((a, b) => a + b, 0);
      let done = 0;
      const emit = async (record: object) => {
        await write(`${JSON.stringify(record)}\n`);
        done++;
        options.onProgress?.(done, all);
      };
      const header: HeaderRecord = {
        type: 'header',
        format: EXPORT_FORMAT,
        version: EXPORT_VERSION,
        embedder: core.embedder.id,
      };
      await write(`${JSON.stringify(header)}\n`);
      options.onProgress?.(0, all);

      const anchors = trx
        .selectFrom('entities')
        .select(['id', 'external_id', 'name', 'attributes', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', 'subject')
        .orderBy('created_at')
        .orderBy('id');
      for await (const r of cursorRows(trx, 'export_anchors', anchors)) {
        const record: AnchorRecord = {
          type: 'anchor',
          id: r.id,
          anchor_external_id: r.external_id,
          name: r.name,
          metadata: r.attributes,
          created_at: r.created_at.toISOString(),
        };
        await emit(record);
      }

      const sessions = trx
        .selectFrom('sessions')
        .select(['id', 'agent_id', 'anchor_id', 'status', 'metadata', 'started_at', 'ended_at', 'expires_at'])
        .where('tenant_id', '=', tenantId)
        .orderBy('started_at')
        .orderBy('id');
      for await (const r of cursorRows(trx, 'export_sessions', sessions)) {
        const record: SessionRecord = {
          type: 'session',
          id: r.id,
          agent_id: r.agent_id,
          anchor_id: r.anchor_id,
          status: r.status,
          metadata: r.metadata,
          started_at: r.started_at.toISOString(),
          ended_at: iso(r.ended_at),
          expires_at: iso(r.expires_at),
        };
        await emit(record);
      }

      const memories = memoryColumns(trx)
        .where('m.tenant_id', '=', tenantId)
        .where('m.binding', '<>', 'canon')
        .$call(onlyVisibleMemories(options))
        .orderBy('m.seq');
      for await (const r of cursorRows(trx, 'export_memories', memories)) await emit(toMemoryRecord(r));

      const canon = memoryColumns(trx)
        .where('m.tenant_id', '=', tenantId)
        .where('m.binding', '=', 'canon')
        .$call((q) => passing(options, q))
        .orderBy('m.seq');
      for await (const r of cursorRows(trx, 'export_canon', canon)) {
        const record: CanonRecord = { type: 'canon', ...memoryRecordFields(r) };
        await emit(record);
      }

      if (options.audit) {
        const events = visibleEvents(trx, tenantId, options).select(auditColumns).orderBy('seq');
        for await (const r of cursorRows(trx, 'export_audit', events)) {
          const record: AuditRecord = {
            type: 'audit',
            id: r.id,
            at: r.at.toISOString(),
            action: r.action,
            memory_id: r.memory_id,
            anchor_id: r.anchor_id,
            session_id: r.session_id,
            actor: { key_id: r.actor_key_id, agent_id: r.actor_agent_id },
            changes: r.changes,
          };
          await emit(record);
        }
      }
      const end: EndRecord = { type: 'end', counts: total };
      await write(`${JSON.stringify(end)}\n`);
      return total;
    });
}
