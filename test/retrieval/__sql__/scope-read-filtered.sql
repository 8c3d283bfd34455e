-- scope-read-filtered: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.

    WITH subject AS MATERIALIZED (SELECT NULL::uuid AS id),
    query_vector AS MATERIALIZED (SELECT $1::vector(3) AS v),
    terms AS MATERIALIZED (
      SELECT (row_number() OVER ())::int AS k, t.q, t.alternatives, regexp_replace(t.term, '(''(?:[^'']|'''')*'')', '\1:A', 'g')::tsquery AS own,
        ARRAY(
    SELECT replace(x.l[1], '''''', '''') FROM regexp_matches(t.term, '''((?:[^'']|'''')*)''', 'g') AS x(l)
  ) AS lexemes
      FROM (
    SELECT DISTINCT coalesce(a.term, x.term) AS term, coalesce(a.term, x.term)::tsquery AS q,
      a.term IS NOT NULL AS alternatives
    FROM regexp_split_to_table(plainto_tsquery('english', $2)::text, ' & ') AS x(term)
    LEFT JOIN LATERAL (
      SELECT replace(g.q, ' & ', ' | ') AS term
      FROM (SELECT plainto_tsquery('english', f.forms)::text AS q FROM unnest($3::text[]) AS f(forms)) AS g
      WHERE strpos(' ' || replace(g.q, ' & ', ' ') || ' ', ' ' || x.term || ' ') > 0
      LIMIT 1
    ) AS a ON true
    WHERE x.term <> ''
  ) AS t
    ),
    units AS MATERIALIZED (
      SELECT u.part, memory_stats_unit(u.b, u.a, coalesce(u.an, (SELECT id FROM subject)), u.s) AS key
      FROM unnest($4::int[], $5::text[], $6::text[], $7::uuid[], $8::uuid[])
        AS u(part, b, a, an, s)
    ),
    part_stats AS MATERIALIZED (
      SELECT u.part, array_agg(u.key) AS keys,
        coalesce(sum(x.docs), 0)::float8 AS docs, coalesce(sum(x.total_len), 0)::float8 AS total_len
      FROM units AS u LEFT JOIN LATERAL (
        SELECT x.docs, x.total_len FROM memory_unit_stats AS x WHERE x.tenant_id = $9 AND x.unit = u.key LIMIT 1
      ) AS x ON true
      GROUP BY u.part
    ),
    parts AS MATERIALIZED (
      SELECT p.part, p.docs, p.total_len, coalesce((
        SELECT array_agg(coalesce((
        SELECT CASE WHEN terms.alternatives THEN sum(d.df) ELSE min(d.df) END FROM (
          SELECT coalesce((
            SELECT sum(s.df) FROM unnest(p.keys::text[]) AS uk(unit)
            CROSS JOIN LATERAL (
              SELECT x.df FROM memory_term_stats AS x
              WHERE x.tenant_id = $10 AND x.unit = uk.unit AND x.lexeme = l.lexeme LIMIT 1
            ) AS s), 0) AS df
          FROM unnest(terms.lexemes) AS l(lexeme)) AS d), 0)::float8 ORDER BY terms.k) FROM terms
      ), '{}')::float8[] AS df
      FROM part_stats AS p
    )
    SELECT st.part, CASE WHEN r.id IS NULL THEN (SELECT id FROM subject) END AS "subject_id", CASE WHEN r.id IS NULL THEN "st"."docs" END AS "docs", CASE WHEN r.id IS NULL THEN "st"."total_len" END AS "total_len", CASE WHEN r.id IS NULL THEN "st"."df" END AS "df", r.*
    FROM parts AS st
    CROSS JOIN LATERAL (
      (select "m"."id", "m"."seq", ((1 - 0.5) * (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)) + 0.5 * coalesce((("m"."window_embedding"::vector(3)) <=> (SELECT v FROM query_vector)), (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)))) as "distance", nullif(ARRAY(
    SELECT CASE WHEN m.search @@ t.own THEN t.k ELSE -t.k END FROM terms AS t WHERE m.search @@ t.q ORDER BY t.k
  ), '{}') as "hits", m.binding as "binding", m.session_id as "session_id", m.confidence as "confidence", CASE WHEN m.pinned THEN 0 ELSE m.decay_rate END as "decay_rate", (extract(epoch FROM m.last_reinforced_at) * 1000)::float8 as "last_reinforced_ms", (extract(epoch FROM CASE WHEN m.last_reinforced_at > m.created_at
      THEN greatest(m.occurred_at, m.last_reinforced_at) ELSE m.occurred_at END) * 1000)::float8 as "recent_ms", m.metadata->>'speaker' as "metadata_speaker", left(m.content, 1000) as "head", length(m.search)::int as "lexemes"
  from "memories" as "m"
  where ("m"."tenant_id" = $11 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $12) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $13) or ("m"."binding" = 'session' and ("m"."session_id" = $14 or "m"."id" = ANY($15::uuid[])))) and ((("m"."metadata" @> $16::jsonb) OR ("m"."metadata" @> $17::jsonb)) AND ((CASE WHEN jsonb_typeof(("m"."metadata" -> $18::text)) = 'number' THEN ("m"."metadata" -> $19::text)::numeric >= $20::numeric ELSE false END) OR (CASE WHEN jsonb_typeof(("m"."metadata" -> $21::text)) = 'string' THEN (("m"."metadata" -> $22::text) #>> '{}') COLLATE "C" < $23::text COLLATE "C" ELSE false END)) AND (NOT ("m"."binding" = $24::text)) AND (NOT ("m"."metadata" -> $25::text IS NOT NULL)) AND ("m"."occurred_at" >= $26::timestamptz) AND (NOT ("m"."pinned" = $27::boolean)))) and st.part = 0 AND st.docs <= $28::float8 AND st.docs > 0) UNION ALL (select "m"."id", "m"."seq", ((1 - 0.5) * (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)) + 0.5 * coalesce((("m"."window_embedding"::vector(3)) <=> (SELECT v FROM query_vector)), (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)))) as "distance", nullif(ARRAY(
    SELECT CASE WHEN m.search @@ t.own THEN t.k ELSE -t.k END FROM terms AS t WHERE m.search @@ t.q ORDER BY t.k
  ), '{}') as "hits", m.binding as "binding", m.session_id as "session_id", m.confidence as "confidence", CASE WHEN m.pinned THEN 0 ELSE m.decay_rate END as "decay_rate", (extract(epoch FROM m.last_reinforced_at) * 1000)::float8 as "last_reinforced_ms", (extract(epoch FROM CASE WHEN m.last_reinforced_at > m.created_at
      THEN greatest(m.occurred_at, m.last_reinforced_at) ELSE m.occurred_at END) * 1000)::float8 as "recent_ms", m.metadata->>'speaker' as "metadata_speaker", left(m.content, 1000) as "head", length(m.search)::int as "lexemes"
  from "memories" as "m"
  where ("m"."tenant_id" = $29 and "m"."status" = 'active' and "m"."binding" = 'canon' and ((("m"."metadata" @> $30::jsonb) OR ("m"."metadata" @> $31::jsonb)) AND ((CASE WHEN jsonb_typeof(("m"."metadata" -> $32::text)) = 'number' THEN ("m"."metadata" -> $33::text)::numeric >= $34::numeric ELSE false END) OR (CASE WHEN jsonb_typeof(("m"."metadata" -> $35::text)) = 'string' THEN (("m"."metadata" -> $36::text) #>> '{}') COLLATE "C" < $37::text COLLATE "C" ELSE false END)) AND (NOT ("m"."binding" = $38::text)) AND (NOT ("m"."metadata" -> $39::text IS NOT NULL)) AND ("m"."occurred_at" >= $40::timestamptz) AND (NOT ("m"."pinned" = $41::boolean)))) and st.part = 1 AND st.docs <= $42::float8 AND st.docs > 0)
      -- Last, so that its nulls take the types of the reads' columns.
      UNION ALL SELECT NULL AS "id", NULL AS "seq", NULL AS "distance", NULL AS "hits", NULL AS "binding", NULL AS "session_id", NULL AS "confidence", NULL AS "decay_rate", NULL AS "last_reinforced_ms", NULL AS "recent_ms", NULL AS "metadata_speaker", NULL AS "head", NULL AS "lexemes"
    ) AS r

-- parameters
-- $1 = "[0.5,0.25,0.125]"
-- $2 = "Where did Caroline move from, four years ago?"
-- $3 = []
-- $4 = [0,0,0,0,1]
-- $5 = ["private","anchored","session","session","canon"]
-- $6 = ["agent-1","","","",""]
-- $7 = [null,"00000000-0000-4000-8000-000000000002",null,null,null]
-- $8 = [null,null,"00000000-0000-4000-8000-000000000003","00000000-0000-4000-8000-000000000005",null]
-- $9 = "00000000-0000-4000-8000-000000000001"
-- $10 = "00000000-0000-4000-8000-000000000001"
-- $11 = "00000000-0000-4000-8000-000000000001"
-- $12 = "agent-1"
-- $13 = "00000000-0000-4000-8000-000000000002"
-- $14 = "00000000-0000-4000-8000-000000000003"
-- $15 = ["00000000-0000-4000-8000-000000000004"]
-- $16 = "{\"topic\":\"billing\"}"
-- $17 = "{\"topic\":\"refunds\"}"
-- $18 = "priority"
-- $19 = "priority"
-- $20 = 2
-- $21 = "note"
-- $22 = "note"
-- $23 = "2025-01-01"
-- $24 = "canon"
-- $25 = "resolved"
-- $26 = "2025-01-01T00:00:00.000Z"
-- $27 = true
-- $28 = 2000
-- $29 = "00000000-0000-4000-8000-000000000001"
-- $30 = "{\"topic\":\"billing\"}"
-- $31 = "{\"topic\":\"refunds\"}"
-- $32 = "priority"
-- $33 = "priority"
-- $34 = 2
-- $35 = "note"
-- $36 = "note"
-- $37 = "2025-01-01"
-- $38 = "canon"
-- $39 = "resolved"
-- $40 = "2025-01-01T00:00:00.000Z"
-- $41 = true
-- $42 = 2000
