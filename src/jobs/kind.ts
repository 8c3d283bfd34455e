import type { Actor, Core } from '../domain/core.js';

/** Counts a job reports while it runs and in its `job_finished` event: numbers only, never content. */
export type JobCounts = Record<string, number>;

/** What a job kind's run is handed. */
export interface JobRun<I> {
  core: Core;
  /** The submitting request's actor: its tenant, key, scopes and agents. */
  actor: Actor;
  jobId: string;
  input: I;
  /** The raw body kept with the job (an import's), in order, read from the database as consumed. */
  body: () => AsyncIterable<Buffer>;
  /** The job's size in bytes of its raw body (0 without one). */
  bodyBytes: number;
  /**
   * Reports progress; the runner writes the latest counts with its next heartbeat. Awaited, it also
   * lets the process serve requests: on the embedded engine a query resolves without returning to
   * the event loop, so a job that never awaited anything else would hold the process until its end.
   */
  progress: (counts: JobCounts) => Promise<void>;
  /** Aborted when the process stops: a kind that can, stops at a safe point by throwing signal.reason. */
  signal: AbortSignal;
}

/**
 * One kind of job (src/jobs/kinds.ts lists them). `run` answers exactly the body the synchronous
 * call answers, so that a succeeded job carries the same result.
 */
export interface JobKind<I, R> {
  /**
   * Whether running the job again from its start, after the process running it died, ends as one
   * uninterrupted run does. A job that is not is failed with `job_interrupted` instead.
   */
  resumable(input: I): boolean;
  run(job: JobRun<I>): Promise<R>;
  /** The result's counts, for the audit event that records the end of the job. */
  counts(result: R): JobCounts;
}
