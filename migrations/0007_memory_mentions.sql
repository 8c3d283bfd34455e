-- The later sessions of a subject that stored a session memory again (a reinforcement from another
-- session than the one it was formed in). The memory keeps the session it was formed in as its
-- provenance, and outlives that session's expiry while one of these sessions has not expired.
CREATE TABLE memory_mentions (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  memory_id   uuid NOT NULL,
  session_id  uuid NOT NULL,
  PRIMARY KEY (tenant_id, memory_id, session_id),
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE
);
-- The cascade from a deleted session looks rows up by this.
CREATE INDEX memory_mentions_session_idx ON memory_mentions (tenant_id, session_id);
