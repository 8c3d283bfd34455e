import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { vectorParam } from '../db/vector.js';
import { conceptsOf } from '../text/concepts.js';
import { actAs } from '../domain/tenancy/agent-binding.js';
import { assertContentLimit } from '../domain/store/content-limit.js';
import type { Actor, Core } from '../domain/core.js';
import { contentKey } from '../domain/text.js';
import { inTransactionYieldMs, yieldToRecalls } from '../domain/recall-gate.js';
import { AppError, isForeignKeyViolation, isUniqueViolation, outageError } from '../errors.js';
import { assertOwnAuditEvent, importIds, withIds } from './bound-ids.js';
import type { AnchorRecord, AuditRecord, CanonRecord, DataRecord, MemoryRecord, SessionRecord } from './records.js';

/**
 * The one writer behind every import format: each format turns its lines into our records
 * (src/portability/formats.ts), and this writes them. Records whose id exists are left as they are,
 * so importing a file twice changes nothing (a key bound to agents imports under ids of its own:
 * src/portability/bound-ids.ts). Lines are written in batches, each batch in one
 * transaction; when a batch fails, its lines are written one by one, so that the lines before the
 * bad one are kept, the bad line is named by its number, and nothing of it is written.
 */

/** Lines per transaction: the embedder takes their texts in one call. */
const BATCH_LINES = 200;

export interface ImportItem {
  line: number;
  records: DataRecord[];
}

export type ImportCounts = Record<'anchors' | 'sessions' | 'memories' | 'canon' | 'audit' | 'existing', number>;

export interface ImportResult {
  lines: number;
  imported: Omit<ImportCounts, 'existing'>;
  /** Records left as they were, because their id (or, for anchors, external id) exists. */
  existing: number;
}

type Trx = Transaction<Database>;

const zero = (): ImportCounts => ({ anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0, existing: 0 });

/** Names the line in an error: its detail and every field path. */
export function atLine(line: number, error: AppError): AppError {
  const errors = error.errors?.map((e) => ({ path: `line ${line}${e.path ? `: ${e.path}` : ''}`, message: e.message }));
  return new AppError(
    error.code,
    `line ${line}: ${error.detail}`,
    errors ?? [{ path: `line ${line}`, message: error.detail }],
  );
}

/** A database refusal of one line, in words; anything else is not the line's fault and propagates. */
function refusal(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (isForeignKeyViolation(error))
    return new AppError(
      'invalid_request',
      'it refers to an anchor or session that is neither in the tenant nor on an earlier line',
    );
  if (isUniqueViolation(error)) return new AppError('conflict', 'it collides with a record of the tenant');
  // A CHECK constraint, or a value of the right form out of the database's range (a time in year 0).
  const state = (error as { code?: unknown } | null)?.code;
  if (typeof state === 'string' && (state === '23514' || state.startsWith('22')))
    return new AppError('invalid_request', 'it holds a value the database does not accept');
  return undefined;
}

export class ImportWriter {
  readonly counts = zero();
  /** Record anchor id → stored anchor id, for subjects matched by external id (bounded by the subjects). */
  private readonly anchorIds = new Map<string, string>();
  private pending: ImportItem[] = [];
  /** Lines fully written. */
  lines = 0;

  constructor(
    private readonly core: Core,
    private readonly actor: Actor,
  ) {}

  /** Checks what needs no database, so that a bad line is refused before anything of it is queued. */
  private check(item: ImportItem): void {
    for (const r of item.records) {
      if (r.type === 'memory' || r.type === 'canon' || r.type === 'session') actAs(this.actor, r.agent_id);
      if (r.type === 'memory' || r.type === 'canon') assertContentLimit(r.content, this.core.config.contentLimitChars);
      if (r.type === 'audit') assertOwnAuditEvent(this.actor, r);
    }
  }

  async add(item: ImportItem): Promise<void> {
    try {
      this.check(item);
    } catch (error) {
      await this.flush();
      throw atLine(item.line, error instanceof AppError ? error : new AppError('invalid_request', String(error)));
    }
    this.pending.push(item);
    if (this.pending.length >= BATCH_LINES) await this.flush();
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    try {
      await this.write(batch);
    } catch (error) {
      if (outageError(error) || batch.length === 1) throw this.lineError(batch[0]?.line ?? 0, error);
      // Which line? Each alone, in order: the ones before the bad one are kept.
      for (const item of batch) await this.writeOne(item);
    }
  }

  private async writeOne(item: ImportItem): Promise<void> {
    try {
      await this.write([item]);
    } catch (error) {
      throw this.lineError(item.line, error);
    }
  }

  private lineError(line: number, error: unknown): unknown {
    if (outageError(error)) return error;
    const known = refusal(error);
    return known ? atLine(line, known) : error;
  }

  private async write(lines: ImportItem[]): Promise<void> {
    const { core, actor } = this;
    const ids = await importIds(
      core.db,
      actor,
      lines.flatMap((item) => item.records),
    );
    const batch = lines.map((item) => ({ ...item, records: withIds(item.records, ids) }));
    const texts = new Map<string, string>();
    for (const item of batch) {
      for (const r of item.records) {
        if (r.type === 'memory') texts.set(r.id, r.content.trim());
        if (r.type === 'canon') texts.set(r.id, contentKey(r.content));
      }
    }
    // Vectors are recomputed with this deployment's embedder (an export carries none); memories
    // the tenant holds already are not embedded again, so a second import costs little.
    const known = new Set(
      texts.size === 0
        ? []
        : (
            await core.db
              .selectFrom('memories')
              .select('id')
              .where('tenant_id', '=', actor.tenantId)
              .where('id', 'in', [...texts.keys()])
              .execute()
          ).map((r) => r.id),
    );
    const toEmbed = [...texts].filter(([id]) => !known.has(id));
    const vectors = toEmbed.length > 0 ? await core.embedder.embed(toEmbed.map(([, t]) => t)) : [];
    const vectorOf = new Map(toEmbed.map(([id], i) => [id, vectors[i]]));

    const counts = zero();
    const matched = new Map<string, string>();
    // An import gives way to recalls in flight before its chunk and before the chunk's memories
    // (src/domain/recall-gate.ts).
    await yieldToRecalls(core.config.bulkYieldMs);
    const anchorId = (id: string | null): string | null =>
      id === null ? null : (matched.get(id) ?? this.anchorIds.get(id) ?? id);
    await core.db.transaction().execute(async (trx) => {
      // Subjects and sessions first, record by record (a subject is matched by its external id),
      // each named once however many lines repeat it; then the memories, their mentions and the
      // audit events, each kind in one statement. Nothing of a batch refers to what comes after it
      // in this order (memories to subjects and sessions, mentions to memories).
      const seen = new Set<string>();
      const memories: { r: MemoryRecord | CanonRecord; vector: Float32Array }[] = [];
      const audits: AuditRecord[] = [];
      for (const item of batch) {
        for (const r of item.records) {
          switch (r.type) {
            case 'anchor': {
              const key = `anchor ${r.id} ${r.anchor_external_id}`;
              if (seen.has(key)) counts.existing++;
              else await this.writeAnchor(trx, r, counts, matched);
              seen.add(key);
              break;
            }
            case 'session':
              if (seen.has(`session ${r.id}`)) counts.existing++;
              else await this.writeSession(trx, { ...r, anchor_id: anchorId(r.anchor_id) }, counts);
              seen.add(`session ${r.id}`);
              break;
            case 'memory':
            case 'canon': {
              const vector = vectorOf.get(r.id);
              // Embedded nothing: the memory existed before this batch.
              if (!vector) counts.existing++;
              else memories.push({ r: r.type === 'memory' ? { ...r, anchor_id: anchorId(r.anchor_id) } : r, vector });
              break;
            }
            case 'audit':
              audits.push({ ...r, anchor_id: anchorId(r.anchor_id) });
              break;
          }
        }
      }
      await yieldToRecalls(inTransactionYieldMs(core.config));
      await this.writeMemories(trx, memories, counts);
      await this.writeAudits(trx, audits, counts);
    });
    // Only what committed counts, and only committed matches are remembered.
    for (const [k, v] of matched) this.anchorIds.set(k, v);
    for (const key of Object.keys(counts) as (keyof ImportCounts)[]) this.counts[key] += counts[key];
    this.lines = batch[batch.length - 1]?.line ?? this.lines;
  }

  private async writeAnchor(trx: Trx, r: AnchorRecord, counts: ImportCounts, matched: Map<string, string>) {
    const tenantId = this.actor.tenantId;
    const byExternalId = () =>
      trx
        .selectFrom('entities')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', 'subject')
        .where('external_id', '=', r.anchor_external_id)
        .executeTakeFirst();
    // A subject is its external id within a tenant: the tenant's own anchor of that external id
    // takes the file's records, whatever its id (a restore beside the original, a merge).
    const existing = await byExternalId();
    if (existing) {
      matched.set(r.id, existing.id);
      counts.existing++;
      return;
    }
    const inserted = await trx
      .insertInto('entities')
      .values({
        tenant_id: tenantId,
        id: r.id,
        kind: 'subject',
        external_id: r.anchor_external_id,
        name: r.name,
        attributes: JSON.stringify(r.metadata),
        created_at: r.created_at,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) {
      counts.anchors++;
      return;
    }
    // The id is taken: by this subject, stored meanwhile, or by another subject of the tenant.
    const holder = await byExternalId();
    if (!holder)
      throw new AppError(
        'conflict',
        `anchor ${r.id} is another subject of this tenant, not "${r.anchor_external_id}"`,
        [{ path: 'id', message: 'held by another anchor of the tenant' }],
      );
    matched.set(r.id, holder.id);
    counts.existing++;
  }

  private async writeSession(trx: Trx, r: SessionRecord, counts: ImportCounts) {
    const inserted = await trx
      .insertInto('sessions')
      .values({
        tenant_id: this.actor.tenantId,
        id: r.id,
        agent_id: r.agent_id,
        anchor_id: r.anchor_id,
        status: r.status,
        metadata: JSON.stringify(r.metadata),
        started_at: r.started_at,
        ended_at: r.ended_at,
        expires_at: r.expires_at,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) counts.sessions++;
    else counts.existing++;
  }

  /** The batch's new memories in one insert, their mentions in one; an id the tenant holds stays as it is. */
  private async writeMemories(
    trx: Trx,
    memories: readonly { r: MemoryRecord | CanonRecord; vector: Float32Array }[],
    counts: ImportCounts,
  ) {
    if (memories.length === 0) return;
    const tenantId = this.actor.tenantId;
    const inserted = await trx
      .insertInto('memories')
      .values(memories.map(({ r, vector }) => this.memoryRow(r, vector)))
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    // A record whose id was taken (before, or by an earlier line of the batch) is left as it is.
    const fresh = new Set(inserted.map((row) => row.id));
    const mentions: { tenant_id: string; memory_id: string; session_id: string }[] = [];
    for (const { r } of memories) {
      if (!fresh.delete(r.id)) {
        counts.existing++;
        continue;
      }
      counts[r.type === 'canon' ? 'canon' : 'memories']++;
      if (r.type === 'memory') {
        for (const s of r.mentioned_in_sessions) mentions.push({ tenant_id: tenantId, memory_id: r.id, session_id: s });
      }
    }
    if (mentions.length > 0) {
      await trx
        .insertInto('memory_mentions')
        .values(mentions)
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }

  private memoryRow(r: MemoryRecord | CanonRecord, vector: Float32Array) {
    const placed =
      r.type === 'canon'
        ? { binding: 'canon' as const, anchor_id: null, session_id: null }
        : { binding: r.binding, anchor_id: r.anchor_id, session_id: r.session_id };
    const content = r.type === 'canon' ? contentKey(r.content) : r.content.trim();
    return {
      tenant_id: this.actor.tenantId,
      id: r.id,
      agent_id: r.agent_id,
      content,
      content_key: contentKey(content),
      concepts: conceptsOf(content),
      ...placed,
      status: r.status,
      confidence: r.confidence,
      decay_rate: r.decay_rate,
      reinforcement_count: r.reinforcement_count,
      superseded_by: r.superseded_by,
      metadata: JSON.stringify(r.metadata),
      embedding: vectorParam(vector),
      embedder: this.core.embedder.id,
      created_at: r.created_at,
      updated_at: r.updated_at,
      last_reinforced_at: r.last_reinforced_at,
      occurred_at: r.occurred_at ?? r.created_at,
      superseded_at: r.status === 'superseded' ? (r.superseded_at ?? r.updated_at) : null,
      // Canon cannot expire.
      expires_at: r.type === 'canon' ? null : (r.expires_at ?? null),
      pinned: r.pinned ?? false,
    };
  }

  /** The batch's audit events in one insert; an id the tenant holds stays as it is. */
  private async writeAudits(trx: Trx, audits: readonly AuditRecord[], counts: ImportCounts) {
    if (audits.length === 0) return;
    const inserted = await trx
      .insertInto('audit_events')
      .values(
        audits.map((r) => ({
          tenant_id: this.actor.tenantId,
          id: r.id,
          at: r.at,
          action: r.action,
          memory_id: r.memory_id,
          anchor_id: r.anchor_id,
          session_id: r.session_id,
          actor_key_id: r.actor.key_id,
          actor_agent_id: r.actor.agent_id,
          changes: JSON.stringify(r.changes),
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    counts.audit += inserted.length;
    counts.existing += audits.length - inserted.length;
  }

  result(): ImportResult {
    const { existing, ...imported } = this.counts;
    return { lines: this.lines, imported, existing };
  }
}
