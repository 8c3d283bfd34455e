import type { ColumnType, Generated } from 'kysely';

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
  binding: 'private' | 'anchored' | 'session' | 'canon';
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
  embedder: string;
  search: ColumnType<string, never, never>;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_reinforced_at: Timestamp;
  /** Store order (migration 0004): orders a session's memories for recall's neighbour context. */
  seq: ColumnType<number, never, never>;
}

export interface AuditEventsTable {
  tenant_id: string;
  id: string;
  seq: ColumnType<string, never, never>;
  at: Timestamp;
  action: string;
  memory_id: string | null;
  anchor_id: string | null;
  session_id: string | null;
  actor_key_id: string | null;
  actor_agent_id: string | null;
  changes: Json;
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

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  entities: EntitiesTable;
  sessions: SessionsTable;
  memories: MemoriesTable;
  audit_events: AuditEventsTable;
  service_settings: ServiceSettingsTable;
  memory_unit_stats: MemoryUnitStatsTable;
  memory_term_stats: MemoryTermStatsTable;
}
