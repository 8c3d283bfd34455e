-- BM25 statistics kept up to date as memories change, so that recall reads them per query term
-- instead of recomputing them over every memory of the caller's scope. A recall's scope is a union
-- of a few units (an agent's private memories, a subject's anchored memories, one session's
-- memories, the tenant's canon); its statistics are the sums over those units.
--
-- Only active memories count: they are what recall sees unless include_superseded is asked for,
-- and then the statistics of the active ones are a close enough approximation for BM25.
--
-- Triggers keep them, so that every path that writes memories (the store path, canon, purge, the
-- sweeper, reembed, a bulk insert, a tenant's cascade) keeps them right without code of its own;
-- inserts and deletes are counted per statement, so a bulk insert pays once. The
-- function bodies put each semicolon at the start of a line: the migration runner splits files at
-- semicolons that end a line and forbids dollar quoting.

-- The unit a memory belongs to; its binding decides which column names it.
CREATE FUNCTION memory_stats_unit(binding text, agent_id text, anchor_id uuid, session_id uuid)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS '
  SELECT CASE binding
    WHEN ''private'' THEN ''private:'' || agent_id
    WHEN ''anchored'' THEN ''anchored:'' || anchor_id::text
    WHEN ''session'' THEN ''session:'' || session_id::text
    ELSE ''canon'' END';

-- Per unit: how many active memories, and the sum of their lengths (distinct lexemes).
CREATE TABLE memory_unit_stats (
  tenant_id  uuid NOT NULL,
  unit       text NOT NULL,
  docs       bigint NOT NULL,
  total_len  bigint NOT NULL,
  PRIMARY KEY (tenant_id, unit)
);

-- Per unit and lexeme: how many active memories hold it. Rows reaching 0 are deleted.
CREATE TABLE memory_term_stats (
  tenant_id  uuid NOT NULL,
  unit       text NOT NULL,
  lexeme     text NOT NULL,
  df         bigint NOT NULL,
  PRIMARY KEY (tenant_id, unit, lexeme)
);

-- Counters are added to in key order, so that two writers touching the same ones cannot deadlock.
CREATE FUNCTION memory_stats_insert() RETURNS trigger LANGUAGE plpgsql AS '
BEGIN
  INSERT INTO memory_unit_stats AS s (tenant_id, unit, docs, total_len)
    SELECT n.tenant_id, memory_stats_unit(n.binding, n.agent_id, n.anchor_id, n.session_id), count(*), sum(length(n.search))
    FROM new_rows AS n WHERE n.status = ''active'' GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, unit) DO UPDATE
    SET docs = s.docs + excluded.docs, total_len = s.total_len + excluded.total_len
  ; INSERT INTO memory_term_stats AS s (tenant_id, unit, lexeme, df)
    SELECT n.tenant_id, memory_stats_unit(n.binding, n.agent_id, n.anchor_id, n.session_id), l.lexeme, count(*)
    FROM new_rows AS n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search)) AS l(lexeme)
    WHERE n.status = ''active'' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, unit, lexeme) DO UPDATE SET df = s.df + excluded.df
  ; RETURN NULL
; END';

CREATE FUNCTION memory_stats_delete() RETURNS trigger LANGUAGE plpgsql AS '
BEGIN
  UPDATE memory_unit_stats AS s SET docs = s.docs - d.docs, total_len = s.total_len - d.len
    FROM (SELECT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, count(*) AS docs, sum(length(o.search)) AS len
      FROM old_rows AS o WHERE o.status = ''active'' GROUP BY 1, 2) AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit
  ; UPDATE memory_term_stats AS s SET df = s.df - d.df
    FROM (SELECT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, l.lexeme, count(*) AS df
      FROM old_rows AS o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) AS l(lexeme)
      WHERE o.status = ''active'' GROUP BY 1, 2, 3) AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit AND s.lexeme = d.lexeme
  ; DELETE FROM memory_term_stats AS s
    USING (SELECT DISTINCT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, l.lexeme
      FROM old_rows AS o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) AS l(lexeme)
      WHERE o.status = ''active'') AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit AND s.lexeme = d.lexeme AND s.df <= 0
  ; DELETE FROM memory_unit_stats AS s
    USING (SELECT DISTINCT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit FROM old_rows AS o WHERE o.status = ''active'') AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit AND s.docs <= 0
  ; RETURN NULL
; END';

-- Updates are per row: a trigger with a column list cannot have transition tables, and without one
-- every reinforcement would pay for the statistics.
CREATE FUNCTION memory_stats_update() RETURNS trigger LANGUAGE plpgsql AS '
BEGIN
  UPDATE memory_unit_stats AS s SET docs = s.docs - d.docs, total_len = s.total_len - d.len
    FROM (SELECT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, count(*) AS docs, sum(length(o.search)) AS len
      FROM (SELECT OLD.*) AS o WHERE o.status = ''active'' GROUP BY 1, 2) AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit
  ; UPDATE memory_term_stats AS s SET df = s.df - d.df
    FROM (SELECT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, l.lexeme, count(*) AS df
      FROM (SELECT OLD.*) AS o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) AS l(lexeme)
      WHERE o.status = ''active'' GROUP BY 1, 2, 3) AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit AND s.lexeme = d.lexeme
  ; DELETE FROM memory_term_stats AS s
    USING (SELECT DISTINCT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, l.lexeme
      FROM (SELECT OLD.*) AS o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) AS l(lexeme)
      WHERE o.status = ''active'') AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit AND s.lexeme = d.lexeme AND s.df <= 0
  ; DELETE FROM memory_unit_stats AS s
    USING (SELECT DISTINCT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit FROM (SELECT OLD.*) AS o WHERE o.status = ''active'') AS d
    WHERE s.tenant_id = d.tenant_id AND s.unit = d.unit AND s.docs <= 0
  ; INSERT INTO memory_unit_stats AS s (tenant_id, unit, docs, total_len)
    SELECT n.tenant_id, memory_stats_unit(n.binding, n.agent_id, n.anchor_id, n.session_id), count(*), sum(length(n.search))
    FROM (SELECT NEW.*) AS n WHERE n.status = ''active'' GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, unit) DO UPDATE
    SET docs = s.docs + excluded.docs, total_len = s.total_len + excluded.total_len
  ; INSERT INTO memory_term_stats AS s (tenant_id, unit, lexeme, df)
    SELECT n.tenant_id, memory_stats_unit(n.binding, n.agent_id, n.anchor_id, n.session_id), l.lexeme, count(*)
    FROM (SELECT NEW.*) AS n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search)) AS l(lexeme)
    WHERE n.status = ''active'' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, unit, lexeme) DO UPDATE SET df = s.df + excluded.df
  ; RETURN NULL
; END';

CREATE TRIGGER memories_stats_insert AFTER INSERT ON memories
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_stats_insert();

CREATE TRIGGER memories_stats_delete AFTER DELETE ON memories
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_stats_delete();

-- Only updates that move a memory between units, in or out of the active ones, or change its
-- lexemes: reinforcement and re-embedding leave the statistics alone and pay nothing.
CREATE TRIGGER memories_stats_update
AFTER UPDATE OF status, binding, agent_id, anchor_id, session_id, content, tenant_id ON memories
FOR EACH ROW WHEN (
  OLD.status IS DISTINCT FROM NEW.status OR OLD.binding IS DISTINCT FROM NEW.binding
  OR OLD.agent_id IS DISTINCT FROM NEW.agent_id OR OLD.anchor_id IS DISTINCT FROM NEW.anchor_id
  OR OLD.session_id IS DISTINCT FROM NEW.session_id OR OLD.content IS DISTINCT FROM NEW.content
  OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
) EXECUTE FUNCTION memory_stats_update();

INSERT INTO memory_unit_stats (tenant_id, unit, docs, total_len)
SELECT m.tenant_id, memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id), count(*), sum(length(m.search))
FROM memories AS m WHERE m.status = 'active'
GROUP BY 1, 2;

INSERT INTO memory_term_stats (tenant_id, unit, lexeme, df)
SELECT m.tenant_id, memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id), l.lexeme, count(*)
FROM memories AS m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search)) AS l(lexeme)
WHERE m.status = 'active'
GROUP BY 1, 2, 3;
