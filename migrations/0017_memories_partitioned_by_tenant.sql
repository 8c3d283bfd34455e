-- migrate: not on citus
-- (The line above is read by the migration runner, src/db/migrate.ts: on Citus, which already
-- spreads `memories` over its shards by tenant, this migration is recorded without running.)
--
-- Memories partitioned by tenant (docs/architecture.md, "Partitions"; decision 0011): `memories`
-- becomes 16 hash partitions of tenant_id, memories_p00 … memories_p15. A tenant's rows all sit in
-- one partition, and every statement of the service names its tenant, so each one reads and writes
-- that partition only: a large scope's recall walks an HNSW graph and GIN posting lists a sixteenth
-- of the table's size instead of the whole table's. The statements themselves do not change.
--
-- What the table had stays as it was, under the same names (NOT NULL constraints are named too,
-- as PostgreSQL 18 names them, PGlite's engine; 15 accepts the names and ignores them): columns in the same order with their
-- defaults and the generated `search`, the checks, the primary key (tenant_id, id), which already
-- holds the partition key as a unique key on a partitioned table must, the foreign keys to and from
-- `memories`, every index (each partition gets its own copy), the HNSW index of each vector size
-- the deployment has, the statistics and window triggers, the `seq` sequence, and the storage
-- options, which a partitioned table keeps on its partitions.
--
-- The cheapest order for a large table: the new table is made bare and filled by one
-- INSERT … SELECT (no index entries and no triggers per row; the statistics of 0006 are already
-- right and the rows do not change), then the old table goes and the keys, indexes and triggers
-- are built over the filled partitions, each index one partition at a time. The rows are copied in
-- the runner's transaction, so the database needs about twice the table's disk until it commits.

-- Index builds (the HNSW graphs above all) are much faster when a partition's graph fits in memory.
SET LOCAL maintenance_work_mem = '512MB';

ALTER TABLE memories RENAME TO memories_unpartitioned;

CREATE TABLE memories (
  tenant_id            uuid CONSTRAINT memories_tenant_id_not_null NOT NULL,
  id                   uuid CONSTRAINT memories_id_not_null NOT NULL,
  agent_id             text CONSTRAINT memories_agent_id_not_null NOT NULL,
  content              text CONSTRAINT memories_content_not_null NOT NULL,
  content_key          text CONSTRAINT memories_content_key_not_null NOT NULL,
  binding              text CONSTRAINT memories_binding_not_null NOT NULL CONSTRAINT memories_binding_check CHECK (binding IN ('private', 'anchored', 'session', 'canon')),
  anchor_id            uuid,
  session_id           uuid,
  status               text CONSTRAINT memories_status_not_null NOT NULL DEFAULT 'active' CONSTRAINT memories_status_check CHECK (status IN ('active', 'superseded')),
  confidence           double precision CONSTRAINT memories_confidence_not_null NOT NULL CONSTRAINT memories_confidence_check CHECK (confidence >= 0 AND confidence <= 1),
  decay_rate           double precision CONSTRAINT memories_decay_rate_not_null NOT NULL CONSTRAINT memories_decay_rate_check CHECK (decay_rate >= 0),
  reinforcement_count  integer CONSTRAINT memories_reinforcement_count_not_null NOT NULL DEFAULT 0,
  superseded_by        uuid,
  metadata             jsonb CONSTRAINT memories_metadata_not_null NOT NULL DEFAULT '{}'::jsonb,
  embedding            vector CONSTRAINT memories_embedding_not_null NOT NULL,
  embedder             text CONSTRAINT memories_embedder_not_null NOT NULL,
  created_at           timestamptz CONSTRAINT memories_created_at_not_null NOT NULL,
  updated_at           timestamptz CONSTRAINT memories_updated_at_not_null NOT NULL,
  last_reinforced_at   timestamptz CONSTRAINT memories_last_reinforced_at_not_null NOT NULL,
  seq                  bigint CONSTRAINT memories_seq_not_null NOT NULL DEFAULT nextval('memories_seq_seq'),
  window_embedding     vector,
  concepts             text,
  search               tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', coalesce(concepts, '')), 'D')
  ) STORED,
  occurred_at          timestamptz CONSTRAINT memories_occurred_at_not_null NOT NULL DEFAULT now(),
  superseded_at        timestamptz,
  expires_at           timestamptz,
  pinned               boolean CONSTRAINT memories_pinned_not_null NOT NULL DEFAULT false,
  CONSTRAINT memories_check CHECK (binding <> 'anchored' OR anchor_id IS NOT NULL),
  CONSTRAINT memories_check1 CHECK (binding <> 'session' OR session_id IS NOT NULL),
  CONSTRAINT memories_check2 CHECK (binding NOT IN ('private', 'canon') OR (anchor_id IS NULL AND session_id IS NULL))
) PARTITION BY HASH (tenant_id);

CREATE TABLE memories_p00 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 0)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p01 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 1)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p02 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 2)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p03 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 3)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p04 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 4)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p05 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 5)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p06 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 6)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p07 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 7)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p08 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 8)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p09 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 9)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p10 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 10)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p11 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 11)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p12 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 12)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p13 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 13)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p14 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 14)
  WITH (fillfactor = 85, toast_tuple_target = 8160);
CREATE TABLE memories_p15 PARTITION OF memories FOR VALUES WITH (MODULUS 16, REMAINDER 15)
  WITH (fillfactor = 85, toast_tuple_target = 8160);

-- `search` is generated, so each row's is computed again here: PostgreSQL 15 cannot copy a
-- generated column's value nor make a filled column generated.
INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, anchor_id, session_id, status, confidence, decay_rate,
  reinforcement_count, superseded_by, metadata, embedding, embedder, created_at, updated_at, last_reinforced_at, seq,
  window_embedding, concepts, occurred_at, superseded_at, expires_at, pinned)
SELECT tenant_id, id, agent_id, content, content_key, binding, anchor_id, session_id, status, confidence, decay_rate,
  reinforcement_count, superseded_by, metadata, embedding, embedder, created_at, updated_at, last_reinforced_at, seq,
  window_embedding, concepts, occurred_at, superseded_at, expires_at, pinned
FROM memories_unpartitioned;

-- The HNSW indexes are made at start for the configured embedder (src/db/vector.ts), one per vector
-- size; their definitions are kept to be made again on the new table below.
CREATE TEMPORARY TABLE memories_vector_indexes ON COMMIT DROP AS
SELECT replace(indexdef, ' ON ' || quote_ident(schemaname) || '.memories_unpartitioned USING ', ' ON memories USING ') AS definition
FROM pg_indexes
WHERE tablename = 'memories_unpartitioned' AND schemaname = current_schema() AND indexname LIKE 'memories_embedding_hnsw_%';

-- The sequence is owned by the old table's column and would go with it.
ALTER SEQUENCE memories_seq_seq OWNED BY NONE;
ALTER TABLE memory_mentions DROP CONSTRAINT memory_mentions_tenant_id_memory_id_fkey;
DROP TABLE memories_unpartitioned;
ALTER SEQUENCE memories_seq_seq OWNED BY memories.seq;

ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE memories ADD CONSTRAINT memories_tenant_id_fkey
  FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON DELETE CASCADE;
ALTER TABLE memories ADD CONSTRAINT memories_tenant_id_anchor_id_fkey
  FOREIGN KEY (tenant_id, anchor_id) REFERENCES entities (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE memories ADD CONSTRAINT memories_tenant_id_session_id_fkey
  FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE memory_mentions ADD CONSTRAINT memory_mentions_tenant_id_memory_id_fkey
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE;

CREATE INDEX memories_anchor_idx ON memories (tenant_id, anchor_id) WHERE anchor_id IS NOT NULL;
CREATE INDEX memories_session_idx ON memories (tenant_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_agent_private_idx ON memories (tenant_id, agent_id) WHERE binding = 'private';
CREATE INDEX memories_canon_idx ON memories (tenant_id, created_at, id) WHERE binding = 'canon';
CREATE UNIQUE INDEX memories_canon_content_key ON memories (tenant_id, content_key) WHERE binding = 'canon';
CREATE INDEX memories_session_seq_idx ON memories (tenant_id, session_id, seq) WHERE session_id IS NOT NULL;
CREATE INDEX memories_search_idx ON memories USING gin (search);
CREATE INDEX memories_expires_idx ON memories (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_metadata_idx ON memories USING gin (metadata jsonb_path_ops);

-- A function for this transaction only, as a migration cannot hold a DO block (src/db/migrate.ts).
-- The body puts each semicolon at the start of a line (see 0006).
CREATE FUNCTION pg_temp.memories_make_vector_indexes() RETURNS void LANGUAGE plpgsql AS '
DECLARE
  d text
; BEGIN
  FOR d IN SELECT definition FROM memories_vector_indexes ORDER BY 1 LOOP
    EXECUTE d
  ; END LOOP
; END';
SELECT pg_temp.memories_make_vector_indexes();
DROP FUNCTION pg_temp.memories_make_vector_indexes();

-- The triggers of 0006, 0010 and 0008 with their bodies of 0016, now on the partitioned table.
-- Statement triggers with transition tables are allowed on a partitioned table (not on its
-- partitions) and see the rows of every partition a statement touched; the row trigger of updates
-- is cloned onto each partition. An update that moved a row to another partition (a change of
-- tenant_id, which the service never makes) would fire the insert and delete triggers instead.
CREATE TRIGGER memories_stats_insert AFTER INSERT ON memories
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_stats_insert();

CREATE TRIGGER memories_stats_delete AFTER DELETE ON memories
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_stats_delete();

CREATE TRIGGER memories_stats_update
AFTER UPDATE OF status, binding, agent_id, anchor_id, session_id, content, concepts, tenant_id ON memories
FOR EACH ROW WHEN (
  OLD.status IS DISTINCT FROM NEW.status OR OLD.binding IS DISTINCT FROM NEW.binding
  OR OLD.agent_id IS DISTINCT FROM NEW.agent_id OR OLD.anchor_id IS DISTINCT FROM NEW.anchor_id
  OR OLD.session_id IS DISTINCT FROM NEW.session_id OR OLD.content IS DISTINCT FROM NEW.content
  OR OLD.concepts IS DISTINCT FROM NEW.concepts OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
) EXECUTE FUNCTION memory_stats_update();

CREATE TRIGGER memories_windows_forget AFTER DELETE ON memories
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_windows_forget();

ANALYZE memories;
