-- The first schema. tenant_id leads every primary, unique and foreign key so the schema can be
-- distributed by tenant without change; every query filters by it.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
  id          uuid PRIMARY KEY,
  org_name    text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tenants_org_name_key ON tenants (lower(org_name));

CREATE TABLE api_keys (
  tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  name          text NOT NULL,
  key_prefix    text NOT NULL,
  -- SHA-256 of the whole key: keys carry 238 bits of entropy, so a fast hash is enough.
  key_hash      bytea NOT NULL,
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  PRIMARY KEY (tenant_id, id)
);
-- Authentication looks a key up before it knows the tenant; a plain index keeps the tenant-first
-- key rule, and a SHA-256 collision between two random keys does not happen.
CREATE INDEX api_keys_hash_idx ON api_keys (key_hash);

-- Anchors (subjects) are entities; later, extracted people, places and products join this graph.
CREATE TABLE entities (
  tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  kind         text NOT NULL DEFAULT 'subject',
  external_id  text NOT NULL,
  name         text,
  attributes   jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, kind, external_id)
);
CREATE INDEX entities_list_idx ON entities (tenant_id, kind, created_at, id);

CREATE TABLE sessions (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          uuid NOT NULL,
  agent_id    text NOT NULL,
  anchor_id   uuid,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
  metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
  started_at  timestamptz NOT NULL,
  ended_at    timestamptz,
  expires_at  timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, anchor_id) REFERENCES entities (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX sessions_anchor_idx ON sessions (tenant_id, anchor_id);
CREATE INDEX sessions_expiry_idx ON sessions (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE memories (
  tenant_id            uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id                   uuid NOT NULL,
  agent_id             text NOT NULL,
  content              text NOT NULL,
  -- Content trimmed with whitespace collapsed: the identity used for canon and exact duplicates.
  content_key          text NOT NULL,
  binding              text NOT NULL CHECK (binding IN ('private', 'anchored', 'session', 'canon')),
  anchor_id            uuid,
  session_id           uuid,
  status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded')),
  confidence           double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  decay_rate           double precision NOT NULL CHECK (decay_rate >= 0),
  reinforcement_count  integer NOT NULL DEFAULT 0,
  superseded_by        uuid,
  metadata             jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Untyped so the dimension follows the configured embedder; the HNSW index is an expression index
  -- on embedding::vector(N), created at start for the active embedder.
  embedding            vector NOT NULL,
  embedder             text NOT NULL,
  search               tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  last_reinforced_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, anchor_id) REFERENCES entities (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE,
  CHECK (binding <> 'anchored' OR anchor_id IS NOT NULL),
  CHECK (binding <> 'session' OR session_id IS NOT NULL),
  CHECK (binding NOT IN ('private', 'canon') OR (anchor_id IS NULL AND session_id IS NULL))
);
-- Small scopes (one subject, one session, one agent) use these so the planner can choose an exact
-- scan over the HNSW index; canon is looked up by its normalized content.
CREATE INDEX memories_anchor_idx ON memories (tenant_id, anchor_id) WHERE anchor_id IS NOT NULL;
CREATE INDEX memories_session_idx ON memories (tenant_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_agent_private_idx ON memories (tenant_id, agent_id) WHERE binding = 'private';
CREATE INDEX memories_canon_idx ON memories (tenant_id, created_at, id) WHERE binding = 'canon';
CREATE UNIQUE INDEX memories_canon_content_key ON memories (tenant_id, content_key) WHERE binding = 'canon';
CREATE INDEX memories_search_idx ON memories USING gin (search);

-- Audit events never hold memory content: ids, counts, bindings and confidences only.
CREATE TABLE audit_events (
  tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id              uuid NOT NULL,
  -- A total order for cursors, independent of clock resolution.
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  at              timestamptz NOT NULL,
  action          text NOT NULL,
  memory_id       uuid,
  anchor_id       uuid,
  session_id      uuid,
  actor_key_id    uuid,
  actor_agent_id  text,
  changes         jsonb NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_events_seq_idx ON audit_events (tenant_id, seq);
CREATE INDEX audit_events_memory_idx ON audit_events (tenant_id, memory_id, seq) WHERE memory_id IS NOT NULL;
CREATE INDEX audit_events_anchor_idx ON audit_events (tenant_id, anchor_id, seq) WHERE anchor_id IS NOT NULL;

-- Facts about the deployment as a whole, such as the embedder its vectors were made with.
CREATE TABLE service_settings (
  key    text PRIMARY KEY,
  value  jsonb NOT NULL
);
