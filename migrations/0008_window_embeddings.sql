-- A session memory's window vector: its text embedded together with the memory stored just before
-- it in its session ("<previous>\n<this>"), written at store time by the same embedder as
-- `embedding`. A reply ("Yes, for four years now") means little alone and much after the turn it
-- answers; recall blends the two distances (src/retrieval/fusion.ts, windowSemanticShare).
--
-- NULL outside a session, for the first memory of one, for a correction, for an import, and after the
-- memory before it is deleted: recall then uses `embedding` alone. `agent-memory reembed` fills what
-- is missing from the memory now before it.
ALTER TABLE memories ADD COLUMN window_embedding vector;

-- A window holds what the memory before it said, so deleting that memory (a delete, a purge, the
-- sweeper, a tenant's cascade) clears the window of the memory after it: nothing of an erased text
-- stays behind in a vector. Per statement, so a purge of many memories pays once; the next memory is
-- found by memories_session_seq_idx. Updates of a window do not touch the statistics (0006).
-- The function body puts each semicolon at the start of a line (see 0006).
CREATE FUNCTION memory_windows_forget() RETURNS trigger LANGUAGE plpgsql AS '
BEGIN
  UPDATE memories AS m SET window_embedding = NULL
  FROM (
    SELECT o.tenant_id, o.session_id, (
      SELECT min(x.seq) FROM memories AS x
      WHERE x.tenant_id = o.tenant_id AND x.session_id = o.session_id AND x.seq > o.seq
    ) AS next_seq
    FROM old_rows AS o WHERE o.session_id IS NOT NULL
  ) AS d
  WHERE m.tenant_id = d.tenant_id AND m.session_id = d.session_id AND m.seq = d.next_seq
    AND m.window_embedding IS NOT NULL
  ; RETURN NULL
; END';

CREATE TRIGGER memories_windows_forget AFTER DELETE ON memories
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_windows_forget();
