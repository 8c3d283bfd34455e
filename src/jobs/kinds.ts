import { batchJob } from './batch-job.js';
import { importJob } from './import-job.js';
import { ingestJob } from './ingest-job.js';
import type { JobKind } from './kind.js';
import type { JobKindName } from '../vocabulary.js';

/**
 * Every kind of job, by the name its rows carry. A new kind is its name in JOB_KIND_NAMES (kind.ts), one entry here (its input, its run
 * answering the synchronous body, whether it can resume) and an `?async=true` branch in its route
 * calling submitJob.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const JOB_KINDS: Record<JobKindName, JobKind<any, any>> = {
  ingest: ingestJob,
  import: importJob,
  batch: batchJob,
};

// The runner handles every kind alike: the kinds' own types end at their inputs and results.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function jobKind(name: string): JobKind<any, any> | undefined {
  return Object.hasOwn(JOB_KINDS, name) ? JOB_KINDS[name as JobKindName] : undefined;
}
