-- Messages already ingested (POST /v1/agents/{id}/conversations/ingest with conversation_id and
-- message ids), so that a re-send skips them. Ids only, never content. A row carries the subject
-- and session its facts went to, so that purging the subject (or losing the session) erases it too:
-- the caller's conversation and message ids may be built from personal data.
CREATE TABLE ingested_messages (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  agent_id         text NOT NULL,
  conversation_id  text NOT NULL,
  message_id       text NOT NULL,
  anchor_id        uuid,
  session_id       uuid,
  ingested_at      timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, agent_id, conversation_id, message_id),
  FOREIGN KEY (tenant_id, anchor_id) REFERENCES entities (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE
);
-- The cascades above look rows up by these.
CREATE INDEX ingested_messages_anchor_idx ON ingested_messages (tenant_id, anchor_id) WHERE anchor_id IS NOT NULL;
CREATE INDEX ingested_messages_session_idx ON ingested_messages (tenant_id, session_id) WHERE session_id IS NOT NULL;
