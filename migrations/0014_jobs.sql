-- Jobs (issue: bulk and events): work a request hands to the background with ?async=true, kept in
-- the database so that it survives a restart and any process of the service can run it.
--
-- A job is queued, then running (claimed by one process, which renews lease_until while it works:
-- a lease that runs out means the process died), then succeeded (result: the body the synchronous
-- call answers) or failed (error: a problem object). claim_token names the attempt that holds it,
-- so that a process whose lease was taken over cannot write over its successor. agent_ids are the
-- agents the job acts for (null: any agent of the tenant), which decides which bound keys see it.
-- The submitting key's id, scopes and agents are kept so that the job acts with the rights of the
-- request that made it. input holds the request's parameters (for an ingest, its messages); a raw
-- body (an import's) is kept in job_inputs, in chunks, read back in order.
CREATE TABLE jobs (
  tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id             uuid NOT NULL,
  kind           text NOT NULL,
  state          text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
  agent_ids      text[],
  actor_key_id   uuid,
  actor_scopes   text[] NOT NULL,
  actor_agent_ids text[],
  input          jsonb NOT NULL,
  input_bytes    bigint NOT NULL DEFAULT 0,
  progress       jsonb NOT NULL DEFAULT '{}',
  result         jsonb,
  error          jsonb,
  attempts       integer NOT NULL DEFAULT 0,
  claim_token    uuid,
  lease_until    timestamptz,
  created_at     timestamptz NOT NULL,
  started_at     timestamptz,
  finished_at    timestamptz,
  PRIMARY KEY (tenant_id, id)
);
-- What the runners look for: jobs not finished, oldest first.
CREATE INDEX jobs_pending_idx ON jobs (created_at) WHERE state IN ('queued', 'running');
-- What retention deletes: finished jobs, by when they finished.
CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL;
-- A tenant's list, newest first.
CREATE INDEX jobs_tenant_created_idx ON jobs (tenant_id, created_at DESC, id DESC);

CREATE TABLE job_inputs (
  tenant_id uuid NOT NULL,
  job_id    uuid NOT NULL,
  seq       integer NOT NULL,
  data      bytea NOT NULL,
  PRIMARY KEY (tenant_id, job_id, seq),
  FOREIGN KEY (tenant_id, job_id) REFERENCES jobs (tenant_id, id) ON DELETE CASCADE
);
