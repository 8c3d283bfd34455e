-- Memory you can aim (issue: time, expiry and pinning). Four columns, read by recall and the lists:
--
-- occurred_at: when the remembered thing happened or was said, apart from when it was stored
-- (created_at). Ingest sets it from the messages' timestamps and import keeps it; recency and the
-- time cue read it. Rows stored before this migration happened when they were stored.
--
-- superseded_at: when a superseded memory stopped being current, so that a recall "as of" a moment
-- can tell what was still current then. Supersession sets updated_at in the same statement, so for
-- the rows already superseded that is the moment.
--
-- expires_at: a caller-set end of life. Recall and the lists hide an expired memory at once; the
-- sweeper deletes it later. NULL for none.
--
-- pinned: a pinned memory does not decay, is not ended with its session or by its expiry, and is
-- never superseded silently.
ALTER TABLE memories ADD COLUMN occurred_at timestamptz;
ALTER TABLE memories ADD COLUMN superseded_at timestamptz;
ALTER TABLE memories ADD COLUMN expires_at timestamptz;
ALTER TABLE memories ADD COLUMN pinned boolean NOT NULL DEFAULT false;
UPDATE memories SET occurred_at = created_at,
  superseded_at = CASE WHEN status = 'superseded' THEN updated_at END;
ALTER TABLE memories ALTER COLUMN occurred_at SET NOT NULL;
ALTER TABLE memories ALTER COLUMN occurred_at SET DEFAULT now();
-- The sweeper finds the expired memories by this index; it holds only the memories that expire.
CREATE INDEX memories_expires_idx ON memories (expires_at) WHERE expires_at IS NOT NULL;
