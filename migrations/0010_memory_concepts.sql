-- The kinds a memory's nouns are of (src/text/concepts.ts, from WordNet): "playing my violin" holds
-- "bowed stringed instrument, stringed instrument, musical instrument", so that "What instruments
-- does she play?" finds it. Written at store time; NULL for memories stored before this migration
-- until `agent-memory reembed` fills them (recall works without them, as before).
ALTER TABLE memories ADD COLUMN concepts text;

-- Concepts make a row larger (a LoCoMo turn's full-text vector grows from 14 to 31 lexemes), and a
-- reinforcement updates its memory in place only if the page has room for the new version (a HOT
-- update); otherwise every index takes a new entry, the HNSW index's costing milliseconds. On the
-- 1M-memory benchmark, 73% of reinforcements were HOT before concepts and 30% with them. Pages are
-- filled to 85% from now on, and the rewrite below applies it to the rows already there.
ALTER TABLE memories SET (fillfactor = 85);

-- The full-text vector holds the memory's own words at weight A and its kinds at weight D: recall
-- counts a query term that a memory holds only as a kind at a share of its idf
-- (src/retrieval/fusion.ts, conceptShare). A generated column's expression cannot be altered in
-- PostgreSQL 15, so the column is made again, with its index. For memories without concepts the new
-- vector holds the same lexemes as the old one, so the statistics of 0006 stay right.
ALTER TABLE memories DROP COLUMN search;
ALTER TABLE memories ADD COLUMN search tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', coalesce(concepts, '')), 'D')
) STORED;
CREATE INDEX memories_search_idx ON memories USING gin (search);

-- Filling a memory's concepts changes its lexemes: the statistics follow, as for a change of content.
DROP TRIGGER memories_stats_update ON memories;
CREATE TRIGGER memories_stats_update
AFTER UPDATE OF status, binding, agent_id, anchor_id, session_id, content, concepts, tenant_id ON memories
FOR EACH ROW WHEN (
  OLD.status IS DISTINCT FROM NEW.status OR OLD.binding IS DISTINCT FROM NEW.binding
  OR OLD.agent_id IS DISTINCT FROM NEW.agent_id OR OLD.anchor_id IS DISTINCT FROM NEW.anchor_id
  OR OLD.session_id IS DISTINCT FROM NEW.session_id OR OLD.content IS DISTINCT FROM NEW.content
  OR OLD.concepts IS DISTINCT FROM NEW.concepts OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
) EXECUTE FUNCTION memory_stats_update();
