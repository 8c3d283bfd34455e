import type { Response } from 'express';
import type { Job } from '../../jobs/jobs.js';
import { getJob, listJobs } from '../../jobs/jobs.js';
import { IdParams } from '../../schemas/inputs.js';
import { JobObject, JobsQuery } from '../../schemas/jobs.js';
import { listOf, ProblemObject } from '../../schemas/objects.js';
import { route, type Reply } from '../route.js';

/** The 202 of a request sent with ?async=true: the queued job, and where to follow it. */
export function accepted(res: Response, job: Job): Reply {
  res.setHeader('Location', `/v1/jobs/${job.id}`);
  return { status: 202, body: job };
}

/** The response of a route that takes ?async=true, for its table of responses. */
export const JOB_ACCEPTED = {
  description: 'With ?async=true: the job, queued; follow it at GET /v1/jobs/{id} (the Location header)',
  schema: JobObject,
};

export const jobRoutes = [
  route({
    method: 'get',
    path: '/v1/jobs',
    operationId: 'listJobs',
    summary:
      "The tenant's jobs (requests sent with ?async=true), newest first. A key bound to agents sees only the jobs of its agents",
    tag: 'jobs',
    access: 'read',
    query: JobsQuery,
    responses: { 200: { description: 'A page of jobs', schema: listOf('jobs', JobObject) } },
    handle: async ({ core, actor, query }) => {
      const page = await listJobs(core.db, actor, query);
      return { status: 200, body: { jobs: page.items, next_cursor: page.nextCursor } };
    },
  }),
  route({
    method: 'get',
    path: '/v1/jobs/{id}',
    operationId: 'getJob',
    summary:
      'A job: queued, running (with progress counts), succeeded (with the body the synchronous call answers) or failed (with a problem)',
    tag: 'jobs',
    access: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The job', schema: JobObject },
      404: {
        description: "No such job in the tenant (or past its retention), or one of another agent's for a bound key",
        schema: ProblemObject,
      },
    },
    handle: async ({ core, actor, params }) => ({ status: 200, body: await getJob(core.db, actor, params.id) }),
  }),
];
