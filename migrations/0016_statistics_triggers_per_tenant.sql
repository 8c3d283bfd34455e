-- The statistics triggers of 0006 and the window trigger of 0008, rewritten so that they work on a
-- Citus cluster as well as on one Postgres (docs/scale-out.md#citus); what they keep is unchanged.
--
-- On Citus a trigger of `memories` fires on the worker holding the shard, and each statement of its
-- body is planned there as a query on the distributed tables. The old bodies failed there twice:
-- `INSERT … SELECT … FROM new_rows` was planned as a distributed INSERT … SELECT whose SELECT ran
-- where the transition table does not exist ("could not find named tuplestore"), and the update
-- trigger's `UPDATE … FROM (SELECT OLD.*)` could not be routed to one shard ("cannot execute a
-- distributed query from a query on a shard"). Now each body first reads the transition table (or
-- OLD and NEW) into local values, in a query that names no distributed table, grouped by tenant
-- and unit; then writes each group with its tenant as a value, which Citus routes to the one
-- colocated shard. One Postgres runs the same statements; a store still writes each counter table
-- once, and a bulk statement once per tenant and unit it touches.
--
-- The function bodies put each semicolon at the start of a line (see 0006).

-- Counters are added to in key order (tenant, unit, lexeme), so that two writers touching the same
-- ones cannot deadlock.
CREATE OR REPLACE FUNCTION memory_stats_insert() RETURNS trigger LANGUAGE plpgsql AS '
DECLARE
  g record
; BEGIN
  FOR g IN
    SELECT n.tenant_id, memory_stats_unit(n.binding, n.agent_id, n.anchor_id, n.session_id) AS unit,
      count(*) AS docs, sum(length(n.search)) AS len
    FROM new_rows AS n WHERE n.status = ''active'' GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    INSERT INTO memory_unit_stats AS s (tenant_id, unit, docs, total_len)
      VALUES (g.tenant_id, g.unit, g.docs, g.len)
      ON CONFLICT (tenant_id, unit) DO UPDATE
      SET docs = s.docs + excluded.docs, total_len = s.total_len + excluded.total_len
  ; END LOOP
  ; FOR g IN
    SELECT t.tenant_id, t.unit, array_agg(t.lexeme ORDER BY t.lexeme) AS lexemes, array_agg(t.df ORDER BY t.lexeme) AS dfs
    FROM (
      SELECT n.tenant_id, memory_stats_unit(n.binding, n.agent_id, n.anchor_id, n.session_id) AS unit, l.lexeme, count(*) AS df
      FROM new_rows AS n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search)) AS l(lexeme)
      WHERE n.status = ''active'' GROUP BY 1, 2, 3
    ) AS t
    GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    INSERT INTO memory_term_stats AS s (tenant_id, unit, lexeme, df)
      SELECT g.tenant_id, g.unit, d.lexeme, d.df FROM unnest(g.lexemes, g.dfs) AS d(lexeme, df) ORDER BY d.lexeme
      ON CONFLICT (tenant_id, unit, lexeme) DO UPDATE SET df = s.df + excluded.df
  ; END LOOP
  ; RETURN NULL
; END';

CREATE OR REPLACE FUNCTION memory_stats_delete() RETURNS trigger LANGUAGE plpgsql AS '
DECLARE
  g record
; BEGIN
  FOR g IN
    SELECT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit,
      count(*) AS docs, sum(length(o.search)) AS len
    FROM old_rows AS o WHERE o.status = ''active'' GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    UPDATE memory_unit_stats AS s SET docs = s.docs - g.docs, total_len = s.total_len - g.len
      WHERE s.tenant_id = g.tenant_id AND s.unit = g.unit
  ; END LOOP
  ; FOR g IN
    SELECT t.tenant_id, t.unit, array_agg(t.lexeme ORDER BY t.lexeme) AS lexemes, array_agg(t.df ORDER BY t.lexeme) AS dfs
    FROM (
      SELECT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit, l.lexeme, count(*) AS df
      FROM old_rows AS o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) AS l(lexeme)
      WHERE o.status = ''active'' GROUP BY 1, 2, 3
    ) AS t
    GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    UPDATE memory_term_stats AS s SET df = s.df - d.df
      FROM unnest(g.lexemes, g.dfs) AS d(lexeme, df)
      WHERE s.tenant_id = g.tenant_id AND s.unit = g.unit AND s.lexeme = d.lexeme
  ; DELETE FROM memory_term_stats AS s
      WHERE s.tenant_id = g.tenant_id AND s.unit = g.unit AND s.lexeme = ANY (g.lexemes) AND s.df <= 0
  ; END LOOP
  ; FOR g IN
    SELECT DISTINCT o.tenant_id, memory_stats_unit(o.binding, o.agent_id, o.anchor_id, o.session_id) AS unit
    FROM old_rows AS o WHERE o.status = ''active'' ORDER BY 1, 2
  LOOP
    DELETE FROM memory_unit_stats AS s WHERE s.tenant_id = g.tenant_id AND s.unit = g.unit AND s.docs <= 0
  ; END LOOP
  ; RETURN NULL
; END';

-- A memory is one document of its unit, and tsvector_to_array lists each of its lexemes once.
CREATE OR REPLACE FUNCTION memory_stats_update() RETURNS trigger LANGUAGE plpgsql AS '
DECLARE
  v_unit text
  ; v_lexemes text[]
; BEGIN
  IF OLD.status = ''active'' THEN
    v_unit := memory_stats_unit(OLD.binding, OLD.agent_id, OLD.anchor_id, OLD.session_id)
    ; v_lexemes := tsvector_to_array(OLD.search)
    ; UPDATE memory_unit_stats AS s SET docs = s.docs - 1, total_len = s.total_len - length(OLD.search)
      WHERE s.tenant_id = OLD.tenant_id AND s.unit = v_unit
    ; UPDATE memory_term_stats AS s SET df = s.df - 1
      WHERE s.tenant_id = OLD.tenant_id AND s.unit = v_unit AND s.lexeme = ANY (v_lexemes)
    ; DELETE FROM memory_term_stats AS s
      WHERE s.tenant_id = OLD.tenant_id AND s.unit = v_unit AND s.lexeme = ANY (v_lexemes) AND s.df <= 0
    ; DELETE FROM memory_unit_stats AS s WHERE s.tenant_id = OLD.tenant_id AND s.unit = v_unit AND s.docs <= 0
  ; END IF
  ; IF NEW.status = ''active'' THEN
    v_unit := memory_stats_unit(NEW.binding, NEW.agent_id, NEW.anchor_id, NEW.session_id)
    ; v_lexemes := tsvector_to_array(NEW.search)
    ; INSERT INTO memory_unit_stats AS s (tenant_id, unit, docs, total_len)
      VALUES (NEW.tenant_id, v_unit, 1, length(NEW.search))
      ON CONFLICT (tenant_id, unit) DO UPDATE
      SET docs = s.docs + excluded.docs, total_len = s.total_len + excluded.total_len
    ; INSERT INTO memory_term_stats AS s (tenant_id, unit, lexeme, df)
      SELECT NEW.tenant_id, v_unit, l.lexeme, 1 FROM unnest(v_lexemes) AS l(lexeme) ORDER BY l.lexeme
      ON CONFLICT (tenant_id, unit, lexeme) DO UPDATE SET df = s.df + excluded.df
  ; END IF
  ; RETURN NULL
; END';

-- 0008's window trigger: the memories that followed the deleted ones, per tenant and session.
CREATE OR REPLACE FUNCTION memory_windows_forget() RETURNS trigger LANGUAGE plpgsql AS '
DECLARE
  g record
; BEGIN
  FOR g IN
    SELECT o.tenant_id, o.session_id, array_agg(o.seq) AS seqs
    FROM old_rows AS o WHERE o.session_id IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    UPDATE memories AS m SET window_embedding = NULL
    WHERE m.tenant_id = g.tenant_id AND m.session_id = g.session_id AND m.window_embedding IS NOT NULL
      AND m.seq = ANY (ARRAY(
        SELECT (
          SELECT min(x.seq) FROM memories AS x
          WHERE x.tenant_id = g.tenant_id AND x.session_id = g.session_id AND x.seq > d.seq
        ) FROM unnest(g.seqs) AS d(seq)
      ))
  ; END LOOP
  ; RETURN NULL
; END';
