import { stat } from 'node:fs/promises';
import { sql, type Selectable } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../db/connect.js';
import type { JobsTable } from '../db/schema.js';
import { boundAgents } from '../domain/tenancy/agent-binding.js';
import type { Actor, Core } from '../domain/core.js';
import { decodeTimeIdCursor, toPage, type Page } from '../domain/records/pagination.js';
import { isUuid, newId } from '../domain/text.js';
import { notFound } from '../errors.js';
import type { JobObject } from '../schemas/jobs.js';
import { writeBody } from './body-chunks.js';
import { wakeRunners } from './wake.js';
import type { JobKindName } from '../vocabulary.js';

export type Job = z.output<typeof JobObject>;
type JobRow = Selectable<JobsTable>;

const columns = [
  'id',
  'kind',
  'state',
  'agent_ids',
  'progress',
  'result',
  'error',
  'attempts',
  'created_at',
  'started_at',
  'finished_at',
] as const;

function toJob(row: Pick<JobRow, (typeof columns)[number]>): Job {
  return {
    id: row.id,
    kind: row.kind as JobKindName,
    state: row.state,
    agent_ids: row.agent_ids,
    progress: row.progress as Record<string, number>,
    result: row.result as Job['result'],
    error: row.error as Job['error'],
    attempts: row.attempts,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}

/**
 * A key bound to agents sees a job only when every agent the job acts for is one of its own; a job
 * for any agent (an import by an unbound key) is not its to see, as an unbound key is not (canSeeKey).
 */
function visibleTo(agents: readonly string[]) {
  return sql<boolean>`(jobs.agent_ids IS NOT NULL AND jobs.agent_ids <@ ${agents}::text[])`;
}

export interface NewJob<I> {
  kind: JobKindName;
  input: I;
  /** The agents the job acts for; null for any agent. */
  agentIds: readonly string[] | null;
  /** A spooled raw body to keep with the job (an import's). */
  bodyFile?: string;
}

/**
 * Queues a job with the rights of the request that submits it; the raw body, if any, goes into the
 * database with it in one transaction, so that any process can run it, after a restart too.
 */
export async function submitJob<I>(core: Core, actor: Actor, job: NewJob<I>): Promise<Job> {
  const id = newId();
  const bodyFile = job.bodyFile;
  const bytes = bodyFile === undefined ? 0 : (await stat(bodyFile)).size;
  const row = await core.db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('jobs')
      .values({
        tenant_id: actor.tenantId,
        id,
        kind: job.kind,
        agent_ids: job.agentIds === null ? null : [...new Set(job.agentIds)].sort(),
        actor_key_id: actor.keyId,
        actor_scopes: [...actor.scopes],
        actor_agent_ids: boundAgents(actor),
        input: JSON.stringify(job.input),
        input_bytes: bytes,
        created_at: core.clock(),
      })
      .returning(columns)
      .executeTakeFirstOrThrow();
    if (bodyFile !== undefined) await writeBody(trx, actor.tenantId, id, bodyFile);
    return inserted;
  });
  wakeRunners();
  return toJob(row);
}

/** One job of the actor's tenant; 404 for another tenant's, an unknown id, or one a bound key may not see. */
export async function getJob(db: Db, actor: Actor, id: string): Promise<Job> {
  if (!isUuid(id)) throw notFound('job');
  const agents = boundAgents(actor);
  let query = db.selectFrom('jobs').select(columns).where('tenant_id', '=', actor.tenantId).where('id', '=', id);
  if (agents) query = query.where(visibleTo(agents));
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('job');
  return toJob(row);
}

export interface JobFilter {
  state?: Job['state'] | undefined;
  kind?: JobKindName | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** The tenant's jobs, newest first, as the actor may see them. */
export async function listJobs(db: Db, actor: Actor, filter: JobFilter): Promise<Page<Job>> {
  const agents = boundAgents(actor);
  let query = db.selectFrom('jobs').select(columns).where('tenant_id', '=', actor.tenantId);
  if (agents) query = query.where(visibleTo(agents));
  if (filter.state) query = query.where('state', '=', filter.state);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (filter.cursor) {
    const [createdAt, id] = decodeTimeIdCursor(filter.cursor);
    query = query.where(sql<boolean>`(created_at, id) < (${createdAt}::timestamptz, ${id}::uuid)`);
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
  return toPage(rows, filter.limit, (r) => [r.created_at.toISOString(), r.id], toJob);
}
