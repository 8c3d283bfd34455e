import type { ColumnType, Generated } from 'kysely';
import type { Binding } from '../vocabulary.js';

/** Kysely's view of migrations/*.sql; keep the two in step. */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp with a database default: optional on insert. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<Record<string, unknown>, string, string>;

export interface TenantsTable {
  id: string;
  org_name: string;
  created_at: DefaultedTimestamp;
}

export interface ApiKeysTable {
  tenant_id: string;
  id: string;
  name: string;
  key_prefix: string;
  key_hash: Buffer;
  scopes: string[];
  created_at: DefaultedTimestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** Migration 0005: the agents the key may act as; null for every agent of the tenant. */
  agent_ids: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
}

/**
 * Migration 0009: which tenant a key belongs to, by the key's hash, so that authentication asks one
 * tenant's rows for the key (one shard on Citus, where this is a reference table).
 */
export interface ApiKeyTenantsTable {
  key_hash: Buffer;
  tenant_id: string;
}

export interface EntitiesTable {
  tenant_id: string;
  id: string;
  kind: Generated<string>;
  external_id: string;
  name: string | null;
  attributes: Json;
  created_at: DefaultedTimestamp;
}

export interface SessionsTable {
  tenant_id: string;
  id: string;
  agent_id: string;
  anchor_id: string | null;
  status: Generated<'active' | 'ended'>;
  metadata: Json;
  started_at: Timestamp;
  ended_at: Timestamp | null;
  expires_at: Timestamp | null;
}

export interface MemoriesTable {
  tenant_id: string;
  id: string;
  agent_id: string;
  content: string;
  content_key: string;
  /** The kinds its nouns are of (migration 0010, src/text/concepts.ts); null until computed. */
  concepts: string | null;
  binding: Binding;
  anchor_id: string | null;
  session_id: string | null;
  status: Generated<'active' | 'superseded'>;
  confidence: number;
  decay_rate: number;
  reinforcement_count: Generated<number>;
  superseded_by: string | null;
  metadata: Json;
  /** pgvector text form, '[0.1,0.2,…]'; written through sql helpers in src/db/vector.ts. */
  embedding: string;
  window_embedding: string | null;
  embedder: string;
  search: ColumnType<string, never, never>;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_reinforced_at: Timestamp;
  /**
   * Migration 0011: when it happened or was said. The service always sets it (created_at's value
   * unless the caller knows better); a raw insert that leaves it out gets the time of the insert.
   */
  occurred_at: DefaultedTimestamp;
  /** Migration 0011: when it was superseded; null while active. */
  superseded_at: Timestamp | null;
  /** Migration 0011: when it expires; null for never. */
  expires_at: Timestamp | null;
  /** Migration 0011: a pinned memory does not decay, expire or get superseded silently. */
  pinned: Generated<boolean>;
  /** Store order (migration 0004): orders a session's memories for recall's neighbour context. */
  seq: ColumnType<number, never, never>;
}

export interface AuditEventsTable {
  tenant_id: string;
  id: string;
  /** bigint, read as a number: src/db/connect.ts parses int8 so, and PGlite does already. */
  seq: ColumnType<number, never, never>;
  at: Timestamp;
  /** One of the AUDIT_ACTIONS (src/vocabulary.ts); the column is plain text. */
  action: string;
  memory_id: string | null;
  anchor_id: string | null;
  session_id: string | null;
  actor_key_id: string | null;
  actor_agent_id: string | null;
  changes: Json;
}

/** Migration 0003: messages already ingested, by id; never content. */
export interface IngestedMessagesTable {
  tenant_id: string;
  agent_id: string;
  conversation_id: string;
  message_id: string;
  anchor_id: string | null;
  session_id: string | null;
  ingested_at: ColumnType<Date, Date, never>;
}

/** Migration 0007: later sessions of a subject that stored a session memory again. */
export interface MemoryMentionsTable {
  tenant_id: string;
  memory_id: string;
  session_id: string;
}

export interface ServiceSettingsTable {
  key: string;
  value: Json;
}

/** Per scope unit (migration 0006): how many active memories, and their summed length. Kept by triggers. */
export interface MemoryUnitStatsTable {
  tenant_id: string;
  unit: string;
  docs: ColumnType<number, never, never>;
  total_len: ColumnType<number, never, never>;
}

/** Per scope unit and lexeme (migration 0006): how many active memories hold it. Kept by triggers. */
export interface MemoryTermStatsTable {
  tenant_id: string;
  unit: string;
  lexeme: string;
  df: ColumnType<number, never, never>;
}

/** Migration 0014: background work a request handed over with ?async=true (src/jobs). */
export interface JobsTable {
  tenant_id: string;
  id: string;
  /** One of the registered job kinds (src/jobs/kinds.ts); the column is plain text. */
  kind: string;
  state: ColumnType<JobState, JobState | undefined, JobState>;
  /** The agents the job acts for; null for any agent of the tenant. */
  agent_ids: string[] | null;
  actor_key_id: string | null;
  actor_scopes: string[];
  actor_agent_ids: string[] | null;
  input: Json;
  input_bytes: ColumnType<number, number | undefined, number>;
  progress: ColumnType<Record<string, unknown>, string | undefined, string>;
  result: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  error: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  attempts: ColumnType<number, number | undefined, number>;
  claim_token: string | null;
  lease_until: Timestamp | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed';

/** Migration 0014: a job's raw input (an import's body), in chunks read back in seq order. */
export interface JobInputsTable {
  tenant_id: string;
  job_id: string;
  seq: number;
  data: Buffer;
}

/** Migration 0015: a tenant's webhook endpoints (src/domain/webhooks). */
export interface WebhookEndpointsTable {
  tenant_id: string;
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: Generated<boolean>;
  /** Standard Webhooks `whsec_…`: signs deliveries, never returned after creation. */
  secret: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  disabled_reason: string | null;
  disabled_at: Timestamp | null;
  failing_since: Timestamp | null;
  last_success_at: Timestamp | null;
}

/** Migration 0015: the outbox, one row per event and endpoint; id is the event's id. */
export interface WebhookDeliveriesTable {
  tenant_id: string;
  endpoint_id: string;
  id: string;
  event_type: string;
  payload: Json;
  status: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  created_at: Timestamp;
  next_attempt_at: Timestamp;
  last_attempt_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  api_key_tenants: ApiKeyTenantsTable;
  entities: EntitiesTable;
  sessions: SessionsTable;
  memories: MemoriesTable;
  audit_events: AuditEventsTable;
  ingested_messages: IngestedMessagesTable;
  memory_mentions: MemoryMentionsTable;
  service_settings: ServiceSettingsTable;
  memory_unit_stats: MemoryUnitStatsTable;
  memory_term_stats: MemoryTermStatsTable;
  jobs: JobsTable;
  job_inputs: JobInputsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

/** The coarse SQL type of a column, as test/db/schema.test.ts reads it from information_schema. */
export type ColumnKind =
  'text' | 'uuid' | 'timestamptz' | 'jsonb' | 'number' | 'boolean' | 'bytea' | 'array' | 'vector' | 'tsvector';
interface ColumnSpec {
  kind: ColumnKind;
  nullable: boolean;
}
const col = (kind: ColumnKind, nullable = false): ColumnSpec => ({ kind, nullable });

/**
 * The tables at run time, for the test that compares them with the migrated database. Nothing
 * derives from it; `satisfies` makes it name exactly the columns of the interfaces above, no fewer, no more.
 */
export const TABLES = {
  tenants: { id: col('uuid'), org_name: col('text'), created_at: col('timestamptz') },
  api_keys: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    name: col('text'),
    key_prefix: col('text'),
    key_hash: col('bytea'),
    scopes: col('array'),
    created_at: col('timestamptz'),
    last_used_at: col('timestamptz', true),
    revoked_at: col('timestamptz', true),
    agent_ids: col('array', true),
  },
  api_key_tenants: { key_hash: col('bytea'), tenant_id: col('uuid') },
  entities: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    kind: col('text'),
    external_id: col('text'),
    name: col('text', true),
    attributes: col('jsonb'),
    created_at: col('timestamptz'),
  },
  sessions: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    agent_id: col('text'),
    anchor_id: col('uuid', true),
    status: col('text'),
    metadata: col('jsonb'),
    started_at: col('timestamptz'),
    ended_at: col('timestamptz', true),
    expires_at: col('timestamptz', true),
  },
  memories: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    agent_id: col('text'),
    content: col('text'),
    content_key: col('text'),
    concepts: col('text', true),
    binding: col('text'),
    anchor_id: col('uuid', true),
    session_id: col('uuid', true),
    status: col('text'),
    confidence: col('number'),
    decay_rate: col('number'),
    reinforcement_count: col('number'),
    superseded_by: col('uuid', true),
    metadata: col('jsonb'),
    embedding: col('vector'),
    window_embedding: col('vector', true),
    embedder: col('text'),
    // A generated column: Postgres reports it nullable, as the expression could yield null.
    search: col('tsvector', true),
    created_at: col('timestamptz'),
    updated_at: col('timestamptz'),
    last_reinforced_at: col('timestamptz'),
    occurred_at: col('timestamptz'),
    superseded_at: col('timestamptz', true),
    expires_at: col('timestamptz', true),
    pinned: col('boolean'),
    seq: col('number'),
  },
  audit_events: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    seq: col('number'),
    at: col('timestamptz'),
    action: col('text'),
    memory_id: col('uuid', true),
    anchor_id: col('uuid', true),
    session_id: col('uuid', true),
    actor_key_id: col('uuid', true),
    actor_agent_id: col('text', true),
    changes: col('jsonb'),
  },
  ingested_messages: {
    tenant_id: col('uuid'),
    agent_id: col('text'),
    conversation_id: col('text'),
    message_id: col('text'),
    anchor_id: col('uuid', true),
    session_id: col('uuid', true),
    ingested_at: col('timestamptz'),
  },
  memory_mentions: { tenant_id: col('uuid'), memory_id: col('uuid'), session_id: col('uuid') },
  service_settings: { key: col('text'), value: col('jsonb') },
  memory_unit_stats: { tenant_id: col('uuid'), unit: col('text'), docs: col('number'), total_len: col('number') },
  memory_term_stats: { tenant_id: col('uuid'), unit: col('text'), lexeme: col('text'), df: col('number') },
  jobs: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    kind: col('text'),
    state: col('text'),
    agent_ids: col('array', true),
    actor_key_id: col('uuid', true),
    actor_scopes: col('array'),
    actor_agent_ids: col('array', true),
    input: col('jsonb'),
    input_bytes: col('number'),
    progress: col('jsonb'),
    result: col('jsonb', true),
    error: col('jsonb', true),
    attempts: col('number'),
    claim_token: col('uuid', true),
    lease_until: col('timestamptz', true),
    created_at: col('timestamptz'),
    started_at: col('timestamptz', true),
    finished_at: col('timestamptz', true),
  },
  job_inputs: { tenant_id: col('uuid'), job_id: col('uuid'), seq: col('number'), data: col('bytea') },
  webhook_endpoints: {
    tenant_id: col('uuid'),
    id: col('uuid'),
    url: col('text'),
    events: col('array'),
    description: col('text', true),
    enabled: col('boolean'),
    secret: col('text'),
    created_at: col('timestamptz'),
    updated_at: col('timestamptz'),
    disabled_reason: col('text', true),
    disabled_at: col('timestamptz', true),
    failing_since: col('timestamptz', true),
    last_success_at: col('timestamptz', true),
  },
  webhook_deliveries: {
    tenant_id: col('uuid'),
    endpoint_id: col('uuid'),
    id: col('uuid'),
    event_type: col('text'),
    payload: col('jsonb'),
    status: col('text'),
    attempts: col('number'),
    created_at: col('timestamptz'),
    next_attempt_at: col('timestamptz'),
    last_attempt_at: col('timestamptz', true),
    last_status_code: col('number', true),
    last_error: col('text', true),
    delivered_at: col('timestamptz', true),
  },
} satisfies { [T in keyof Database]: Record<keyof Database[T], ColumnSpec> };
