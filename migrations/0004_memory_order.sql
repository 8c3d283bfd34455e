-- The order in which memories were stored. Recall reads a memory's neighbours in its session (the
-- one stored just before and just after) as its context; created_at cannot order them, since two
-- stores can share a clock tick (and a test clock that stands still gives them all one time).
ALTER TABLE memories ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX memories_session_seq_idx ON memories (tenant_id, session_id, seq) WHERE session_id IS NOT NULL;
-- Keep a memory's row whole: past 2 kB (a 512-d vector alone is) Postgres compresses the other
-- columns or moves the vector out of line, and recall, which reads the vectors and tsvectors of a
-- whole subject, then pays a decompression or an extra page read per memory. Rows up to the page
-- size now stay inline and uncompressed; larger ones (3072-d vectors) are still toasted.
ALTER TABLE memories SET (toast_tuple_target = 8160);
