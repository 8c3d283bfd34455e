import { sql, type Selectable } from 'kysely';
import type { JobsTable } from '../db/schema.js';
import { recordEvent, type AuditChanges } from '../domain/records/audit.js';
import type { Actor, Core } from '../domain/core.js';
import { newId } from '../domain/text.js';
import { AppError, outageError, toProblem, type Problem } from '../errors.js';
import { readBody } from './body-chunks.js';
import { type JobCounts } from './kind.js';
import { jobKind } from './kinds.js';
import { onJobSubmitted } from './wake.js';
import { type Scope, JOB_KIND_NAMES } from '../vocabulary.js';

/**
 * The job runner of one process (docs/architecture.md#jobs). Every process of a database may run
 * one: each claims a job by locking its row with FOR UPDATE SKIP LOCKED, so that two never take the
 * same, marks it running with a lease, and renews the lease while it works. A process that dies
 * stops renewing; once the lease has run out, the next runner to look takes the job over: it runs
 * it again from its start when the kind can resume (an import, an ingest with conversation_id and
 * message ids: both skip what the first run committed), and fails it with `job_interrupted`
 * otherwise, or once it has been started JOB_MAX_ATTEMPTS times.
 */

type JobRow = Selectable<JobsTable>;

/** How long a stopping runner waits for its jobs to end before it stops them. */
export const STOP_GRACE_MS = 5_000;
/** How often a runner deletes the finished jobs past their retention. */
const RETENTION_EVERY_MS = 60_000;
/** Candidates read per look: each is then claimed by its key, skipping the ones another runner holds. */
const CANDIDATES = 10;

const INTERRUPTED_UNRESUMABLE =
  'the process running this job stopped before it finished (a restart or a crash), and this job cannot run ' +
  'again without storing twice what it had stored: what it stored stays stored; send the request again ' +
  '(an ingest with conversation_id and an id on every message resumes by itself)';
const interruptedTooOften = (attempts: number) =>
  `the processes running this job stopped before it finished ${attempts} times (JOB_MAX_ATTEMPTS); ` +
  'what it stored stays stored; send the request again';

/** The reason a stopping runner aborts its jobs with: they are handed back to the queue, not failed. */
class RunnerStopping extends Error {
  constructor() {
    super('the process is stopping');
  }
}

function actorOf(row: JobRow): Actor {
  return {
    tenantId: row.tenant_id,
    keyId: row.actor_key_id,
    scopes: new Set(row.actor_scopes as Scope[]),
    agentIds: row.actor_agent_ids === null ? null : new Set(row.actor_agent_ids),
  };
}

/** A job's claim: the row as claimed and the token that proves this runner still holds it. */
interface Claim {
  row: JobRow;
  token: string;
}

type Outcome = { state: 'succeeded'; result: unknown; counts: JobCounts } | { state: 'failed'; error: Problem };

/**
 * Marks the job finished and records its `job_finished` event in one transaction, if `token` still
 * holds it (null: the job was failed on a takeover, unclaimed). Its kept body is deleted with it.
 */
async function finish(core: Core, row: JobRow, token: string | null, outcome: Outcome, progress?: JobCounts) {
  const at = core.clock();
  return core.db.transaction().execute(async (trx) => {
    let update = trx
      .updateTable('jobs')
      .set({
        state: outcome.state,
        result: outcome.state === 'succeeded' ? JSON.stringify(outcome.result) : null,
        error: outcome.state === 'failed' ? JSON.stringify(outcome.error) : null,
        ...(progress ? { progress: JSON.stringify(progress) } : {}),
        finished_at: at,
        lease_until: null,
        claim_token: null,
      })
      .where('tenant_id', '=', row.tenant_id)
      .where('id', '=', row.id);
    update = token === null ? update.where('claim_token', 'is', null) : update.where('claim_token', '=', token);
    const done = await update.returning('attempts').executeTakeFirst();
    if (!done) return false;
    await trx.deleteFrom('job_inputs').where('tenant_id', '=', row.tenant_id).where('job_id', '=', row.id).execute();
    const changes: AuditChanges = {
      job_id: row.id,
      kind: row.kind,
      state: outcome.state,
      agent_ids: row.agent_ids,
      attempts: done.attempts,
      ...(outcome.state === 'succeeded' ? outcome.counts : { error_code: outcome.error.code }),
    };
    await recordEvent(trx, actorOf(row), at, {
      action: 'job_finished',
      agentId: row.agent_ids?.length === 1 ? row.agent_ids[0] : null,
      changes,
    });
    return true;
  });
}

const unfinished = (now: Date) => sql<boolean>`(state = 'queued' OR (state = 'running' AND lease_until < ${now}))`;

/**
 * Claims the oldest job that is queued or whose runner's lease ran out, or answers null. Candidates
 * are read without locks, then each is locked by its key with SKIP LOCKED: a statement that stays on
 * one tenant's shard on Citus, where a lock across shards is not possible.
 */
export async function claimJob(core: Core, running: ReadonlySet<string> = new Set()): Promise<Claim | null> {
  const { leaseMs, maxAttempts } = core.config.jobs;
  const candidates = await core.db
    .selectFrom('jobs')
    .select(['tenant_id', 'id'])
    .where(unfinished(core.clock()))
    // A job of a kind this version does not know is left to a process that does (a rolling upgrade).
    .where('kind', 'in', JOB_KIND_NAMES)
    .orderBy('created_at')
    .limit(CANDIDATES)
    .execute();
  for (const candidate of candidates) {
    // Never its own: a job whose lease this process let run out (its event loop held up) is still
    // running here, and taking it over would run it twice at once.
    if (running.has(candidate.id)) continue;
    const now = core.clock();
    const taken = await core.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('jobs')
        .selectAll()
        .where('tenant_id', '=', candidate.tenant_id)
        .where('id', '=', candidate.id)
        .where(unfinished(now))
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!row) return null;
      const token = newId();
      await trx
        .updateTable('jobs')
        .set({
          state: 'running',
          attempts: row.attempts + 1,
          claim_token: token,
          lease_until: new Date(now.getTime() + leaseMs),
          started_at: row.started_at ?? now,
        })
        .where('tenant_id', '=', row.tenant_id)
        .where('id', '=', row.id)
        .execute();
      return { row: { ...row, attempts: row.attempts + 1 }, token, takenOver: row.state === 'running' };
    });
    if (!taken) continue;
    // Taken over from a process that died: run again only what can resume, and not forever.
    const kind = jobKind(taken.row.kind);
    const why = !resumable(kind, taken.row)
      ? INTERRUPTED_UNRESUMABLE
      : taken.row.attempts > maxAttempts
        ? interruptedTooOften(taken.row.attempts - 1)
        : undefined;
    if (taken.takenOver && why !== undefined) {
      core.log.warn({ job_id: taken.row.id, kind: taken.row.kind }, 'job interrupted by a lost process: failed');
      await finish(core, taken.row, taken.token, {
        state: 'failed',
        error: toProblem(new AppError('job_interrupted', why)),
      });
      continue;
    }
    if (taken.takenOver) {
      core.log.warn({ job_id: taken.row.id, kind: taken.row.kind }, 'job interrupted by a lost process: resumed');
    }
    return { row: taken.row, token: taken.token };
  }
  return null;
}

/** Whether the job can run again from its start; an input the kind cannot read cannot. */
function resumable(kind: ReturnType<typeof jobKind>, row: JobRow): boolean {
  try {
    return kind?.resumable(row.input) === true;
  } catch {
    return false;
  }
}

/** Hands a job stopped by its runner's shutdown back to the queue, its attempt not counted. */
async function release(core: Core, claim: Claim): Promise<void> {
  await core.db
    .updateTable('jobs')
    .set({ state: 'queued', attempts: Math.max(0, claim.row.attempts - 1), lease_until: null, claim_token: null })
    .where('tenant_id', '=', claim.row.tenant_id)
    .where('id', '=', claim.row.id)
    .where('claim_token', '=', claim.token)
    .execute();
}

/** Whether the key that submitted the job may still act: a job of a revoked key does not run. */
async function keyStillValid(core: Core, row: JobRow): Promise<boolean> {
  if (row.actor_key_id === null) return true;
  const key = await core.db
    .selectFrom('api_keys')
    .select('revoked_at')
    .where('tenant_id', '=', row.tenant_id)
    .where('id', '=', row.actor_key_id)
    .executeTakeFirst();
  return key !== undefined && key.revoked_at === null;
}

/** Runs one claimed job to its end, renewing its lease and writing its progress meanwhile. */
export async function runJob(core: Core, claim: Claim, signal: AbortSignal): Promise<void> {
  const { row, token } = claim;
  const { leaseMs } = core.config.jobs;
  const kind = jobKind(row.kind);
  let progress: JobCounts | undefined;
  let written: JobCounts | undefined;
  let lost = false;
  const lose = new AbortController();
  // Progress every second at most; the lease well before it runs out.
  const every = Math.min(1000, Math.floor(leaseMs / 3));
  let lastBeat = Date.now();
  const heartbeat = async () => {
    lastBeat = Date.now();
    const counts = progress;
    const renewed = await core.db
      .updateTable('jobs')
      .set({
        lease_until: new Date(core.clock().getTime() + leaseMs),
        ...(counts !== written && counts ? { progress: JSON.stringify(counts) } : {}),
      })
      .where('tenant_id', '=', row.tenant_id)
      .where('id', '=', row.id)
      .where('claim_token', '=', token)
      .executeTakeFirst();
    written = counts;
    if (renewed.numUpdatedRows === 0n && !lost) {
      // Another runner took the job over (this process stalled past its lease): stop where it can.
      lost = true;
      lose.abort(new Error('the job was taken over by another process'));
    }
  };
  const timer = setInterval(() => {
    heartbeat().catch((error: unknown) => core.log.warn({ err: error, job_id: row.id }, 'job heartbeat failed'));
  }, every);
  timer.unref();
  let outcome: Outcome;
  try {
    if (!kind) throw new Error(`unknown job kind ${row.kind}`);
    if (!(await keyStillValid(core, row))) {
      throw new AppError('unauthorized', 'the key that submitted this job was revoked before the job ran');
    }
    const result: unknown = await kind.run({
      core,
      actor: actorOf(row),
      jobId: row.id,
      input: row.input,
      body: () => readBody(core.db, row.tenant_id, row.id),
      bodyBytes: row.input_bytes,
      progress: async (counts) => {
        progress = counts;
        // Renewed here too: a job whose queries never leave the event loop (the embedded engine)
        // keeps the timer from firing.
        if (Date.now() - lastBeat >= every) await heartbeat();
        await new Promise((resolve) => setImmediate(resolve));
      },
      signal: AbortSignal.any([signal, lose.signal]),
    });
    outcome = { state: 'succeeded', result, counts: kind.counts(result) };
  } catch (error) {
    clearInterval(timer);
    if (lost) return;
    if (signal.aborted && signal.reason instanceof RunnerStopping) {
      await release(core, claim);
      return;
    }
    if (error instanceof AppError) outcome = { state: 'failed', error: toProblem(error) };
    else if (outageError(error)) {
      // The database went away under the job: the lease runs out and the job is taken over.
      core.log.warn({ err: error, job_id: row.id, kind: row.kind }, 'job stopped: database unavailable');
      return;
    } else {
      core.log.error({ err: error, job_id: row.id, kind: row.kind }, 'job failed');
      outcome = {
        state: 'failed',
        error: toProblem(new AppError('internal', 'an internal error occurred; it has been logged')),
      };
    }
  }
  clearInterval(timer);
  if (lost) return;
  const finished = await finish(core, row, token, outcome, progress);
  if (!finished) core.log.warn({ job_id: row.id }, 'job finished after another process took it over: result dropped');
}

/** Deletes the jobs that finished longer than JOB_RETENTION_HOURS ago; answers how many. */
export async function deleteExpiredJobs(core: Core): Promise<number> {
  const before = new Date(core.clock().getTime() - core.config.jobs.retentionMs);
  const deleted = await core.db.deleteFrom('jobs').where('finished_at', '<', before).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

export interface JobRunner {
  /** Stops claiming, lets running jobs end for up to `graceMs`, then stops them at a safe point. */
  stop(graceMs?: number): Promise<void>;
}

/** Runs up to JOB_CONCURRENCY jobs at once in this process, until stopped. */
export function startJobRunner(core: Core): JobRunner {
  const { concurrency, pollMs } = core.config.jobs;
  const stopping = new AbortController();
  const active = new Set<Promise<void>>();
  const runningIds = new Set<string>();
  let looking = false;
  let again = false;
  let lastRetention = 0;
  let timer: NodeJS.Timeout | undefined;
  /** Set at the start of stop: no more claims, while the running jobs get their grace. */
  let closed = false;

  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => void look(), pollMs);
    timer.unref();
  };

  async function look(): Promise<void> {
    if (closed) return;
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      do {
        again = false;
        if (Date.now() - lastRetention >= RETENTION_EVERY_MS) {
          lastRetention = Date.now();
          const deleted = await deleteExpiredJobs(core);
          if (deleted > 0) core.log.info({ jobs: deleted }, 'finished jobs past their retention deleted');
        }
        while (active.size < concurrency && !closed) {
          const claim = await claimJob(core, runningIds);
          if (!claim) break;
          runningIds.add(claim.row.id);
          const running = runJob(core, claim, stopping.signal)
            .catch((error: unknown) => core.log.error({ err: error, job_id: claim.row.id }, 'job runner failed'))
            .finally(() => {
              active.delete(running);
              runningIds.delete(claim.row.id);
              void look();
            });
          active.add(running);
        }
      } while (again && !closed);
    } catch (error) {
      core.log.warn({ err: error }, 'looking for jobs failed');
    } finally {
      looking = false;
      schedule();
    }
  }

  const unsubscribe = onJobSubmitted(() => void look());
  if (concurrency > 0) void look();

  return {
    stop: async (graceMs = STOP_GRACE_MS) => {
      closed = true;
      unsubscribe();
      clearTimeout(timer);
      const settled = () => Promise.allSettled([...active]);
      const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
      await Promise.race([settled(), wait(graceMs)]);
      stopping.abort(new RunnerStopping());
      await Promise.race([settled(), wait(2_000)]);
    },
  };
}
