-- Two changes that let the schema be distributed by tenant (Citus, `agent-memory migrate --citus`)
-- and change nothing else on a single Postgres.
--
-- 1. Authentication finds a key by its hash before it knows the tenant. On a cluster distributed by
-- tenant_id that lookup would ask every shard on every request; this small table maps a key's hash
-- to its tenant, and on Citus it is a reference table (a copy on every node), so that the lookup
-- reads it locally and then asks only the tenant's shard for the key itself. Keys made before it
-- are copied in here, so they keep working.
CREATE TABLE api_key_tenants (
  key_hash   bytea PRIMARY KEY,
  tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE
);
INSERT INTO api_key_tenants (key_hash, tenant_id) SELECT key_hash, tenant_id FROM api_keys;

-- 2. Identity columns cannot be re-sharded by Citus (and cannot be added to a distributed table).
-- The two orderings they gave (a memory's place in its session, an audit cursor) come from plain
-- sequences instead, which continue from the identity's own next number: one call, where reading
-- max(seq) would scan the table under this migration's lock. Inserts never name these columns, so
-- the defaults fill them as the identities did.
CREATE SEQUENCE memories_seq_next AS bigint OWNED BY memories.seq;
SELECT setval('memories_seq_next', nextval(pg_get_serial_sequence('memories', 'seq')), false);
ALTER TABLE memories ALTER COLUMN seq DROP IDENTITY;
ALTER TABLE memories ALTER COLUMN seq SET DEFAULT nextval('memories_seq_next');
ALTER SEQUENCE memories_seq_next RENAME TO memories_seq_seq;

CREATE SEQUENCE audit_events_seq_next AS bigint OWNED BY audit_events.seq;
SELECT setval('audit_events_seq_next', nextval(pg_get_serial_sequence('audit_events', 'seq')), false);
ALTER TABLE audit_events ALTER COLUMN seq DROP IDENTITY;
ALTER TABLE audit_events ALTER COLUMN seq SET DEFAULT nextval('audit_events_seq_next');
ALTER SEQUENCE audit_events_seq_next RENAME TO audit_events_seq_seq;
