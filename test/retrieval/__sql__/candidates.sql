-- candidates: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.

    WITH nearest AS MATERIALIZED (SELECT DISTINCT x.id FROM unnest($1::uuid[]) AS x(id)),
    units AS MATERIALIZED (SELECT ARRAY(SELECT memory_stats_unit(u.b, u.a, u.an, u.s)
    FROM unnest($2::text[], $3::text[], $4::uuid[], $5::uuid[]) AS u(b, a, an, s)) AS keys),
    terms AS MATERIALIZED (
      SELECT (row_number() OVER ())::int AS k, t.q, t.alternatives, regexp_replace(t.term, '(''(?:[^'']|'''')*'')', '\1:A', 'g')::tsquery AS own,
        ARRAY(
    SELECT replace(x.l[1], '''''', '''') FROM regexp_matches(t.term, '''((?:[^'']|'''')*)''', 'g') AS x(l)
  ) AS lexemes
      FROM (
    SELECT DISTINCT coalesce(a.term, x.term) AS term, coalesce(a.term, x.term)::tsquery AS q,
      a.term IS NOT NULL AS alternatives
    FROM regexp_split_to_table(plainto_tsquery('english', $6)::text, ' & ') AS x(term)
    LEFT JOIN LATERAL (
      SELECT replace(g.q, ' & ', ' | ') AS term
      FROM (SELECT plainto_tsquery('english', f.forms)::text AS q FROM unnest($7::text[]) AS f(forms)) AS g
      WHERE strpos(' ' || replace(g.q, ' & ', ' ') || ' ', ' ' || x.term || ' ') > 0
      LIMIT 1
    ) AS a ON true
    WHERE x.term <> ''
  ) AS t
    ),
    -- Each term's document frequency in the scope.
    tdf AS MATERIALIZED (
      SELECT terms.k, terms.q, coalesce((
        SELECT CASE WHEN terms.alternatives THEN sum(d.df) ELSE min(d.df) END FROM (
          SELECT coalesce((
            SELECT sum(s.df) FROM unnest((SELECT u.keys FROM units AS u)::text[]) AS uk(unit)
            CROSS JOIN LATERAL (
              SELECT x.df FROM memory_term_stats AS x
              WHERE x.tenant_id = $8 AND x.unit = uk.unit AND x.lexeme = l.lexeme LIMIT 1
            ) AS s), 0) AS df
          FROM unnest(terms.lexemes) AS l(lexeme)) AS d), 0)::float8 AS df FROM terms
    ),
    -- The idf of term k is idf[k].
    weights AS MATERIALIZED (
      SELECT coalesce(array_agg(ln(1 + ($9::float8 - tdf.df + 0.5) / (tdf.df + 0.5))::float8 ORDER BY tdf.k), '{}') AS idf FROM tdf
    ),
    -- Terms rarest first while their document frequencies fit the budget.
    rare AS MATERIALIZED (
      SELECT x.k, x.q, x.running FROM (
        SELECT tdf.k, tdf.q, sum(tdf.df) OVER (ORDER BY tdf.df, tdf.k) AS running FROM tdf WHERE tdf.df > 0
      ) AS x WHERE x.running <= $10::int
    ),
    -- Then pairs of the other terms, both in one memory, with what is left: in a large scope every
    -- term of a query may be too common to fetch alone, while the memories holding two of them,
    -- the best by BM25, are few. Their number is estimated as if the terms were independent.
    pairs AS MATERIALIZED (
      SELECT x.q FROM (
        SELECT a.q && b.q AS q,
          sum(a.df * b.df / $11::float8) OVER (ORDER BY a.df * b.df, a.k, b.k) AS running
        FROM tdf AS a JOIN tdf AS b ON a.k < b.k
        WHERE a.df > 0 AND b.df > 0 AND a.k NOT IN (SELECT k FROM rare) AND b.k NOT IN (SELECT k FROM rare)
      ) AS x WHERE x.running <= $12::int - coalesce((SELECT max(running) FROM rare), 0)
    ),
    picked AS MATERIALIZED (
      SELECT string_agg(c.q::text, ' | ')::tsquery AS q FROM (SELECT q FROM rare UNION ALL SELECT q FROM pairs) AS c
    ),
    matched AS MATERIALIZED ((select "m"."id", "m"."session_id", "m"."seq", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $13 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $14) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $15) or ("m"."binding" = 'session' and ("m"."session_id" = $16 or "m"."id" = ANY($17::uuid[]))))) and m.search @@ (SELECT picked.q FROM picked)
  limit $18::int)),
    session_lexical AS MATERIALIZED (
      SELECT x.session_id, sum(w.idf[x.k])::float8 AS lexical
      FROM (
        SELECT DISTINCT s.session_id, t.k FROM "matched" AS s, terms AS t
        WHERE s.session_id IS NOT NULL AND s.search @@ t.own
      ) AS x, weights AS w
      GROUP BY x.session_id
    ),
    -- A fetched memory's BM25 comes
  from the row in hand, its predecessor's
  from one lookup.
    matched_scored AS MATERIALIZED (
      SELECT x.id, x.session_id, x.seq, (coalesce((SELECT sum(w.idf[t.k] * CASE WHEN "x"."search" @@ t.own THEN 1 ELSE 0.5 END) FROM terms AS t, weights AS w WHERE "x"."search" @@ t.q), 0) * (2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * length("x"."search") / $19::float8))))::float8 AS lexical,
        coalesce((SELECT (coalesce((SELECT sum(w.idf[t.k] * CASE WHEN "pv"."search" @@ t.own THEN 1 ELSE 0.5 END) FROM terms AS t, weights AS w WHERE "pv"."search" @@ t.q), 0) * (2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * length("pv"."search") / $20::float8))))::float8 FROM ((select "m"."id", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $21 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $22) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $23) or ("m"."binding" = 'session' and ("m"."session_id" = $24 or "m"."id" = ANY($25::uuid[]))))) and m.session_id = "x"."session_id" and m.seq < "x"."seq"
  order by "m"."seq" desc
  limit $26)) AS pv), 0)::float8 AS previous_lexical
      FROM matched AS x
    ),
    -- With the memory stored after each, whose predecessor is the fetched one, its BM25 known.
    pool_scored AS MATERIALIZED (
      SELECT x.id, x.lexical, x.previous_lexical FROM matched_scored AS x
      UNION ALL
      SELECT nx.id, (coalesce((SELECT sum(w.idf[t.k] * CASE WHEN "nx"."search" @@ t.own THEN 1 ELSE 0.5 END) FROM terms AS t, weights AS w WHERE "nx"."search" @@ t.q), 0) * (2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * length("nx"."search") / $27::float8))))::float8 AS lexical, x.lexical AS previous_lexical
      FROM matched_scored AS x CROSS JOIN LATERAL ((select "m"."id", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $28 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $29) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $30) or ("m"."binding" = 'session' and ("m"."session_id" = $31 or "m"."id" = ANY($32::uuid[]))))) and m.session_id = "x"."session_id" and m.seq > "x"."seq"
  order by "m"."seq" asc
  limit $33)) AS nx
      WHERE nx.id NOT IN (SELECT id FROM matched)
    ),
    lexical_best AS MATERIALIZED (
      SELECT o.id FROM pool_scored AS o
      WHERE o.lexical + 0.5 * o.previous_lexical > 0
      ORDER BY o.lexical + 0.5 * o.previous_lexical DESC, o.id
      LIMIT $34::int
    ),
    first_candidates AS MATERIALIZED (
      SELECT id FROM lexical_best UNION SELECT id FROM nearest
    ),
    first_context AS MATERIALIZED (
      SELECT r.id, (SELECT pv.id FROM ((select "m"."id", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $35 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $36) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $37) or ("m"."binding" = 'session' and ("m"."session_id" = $38 or "m"."id" = ANY($39::uuid[]))))) and m.session_id = "r"."session_id" and m.seq < "r"."seq"
  order by "m"."seq" desc
  limit $40)) AS pv) AS prev_id,
        (SELECT nx.id FROM ((select "m"."id", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $41 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $42) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $43) or ("m"."binding" = 'session' and ("m"."session_id" = $44 or "m"."id" = ANY($45::uuid[]))))) and m.session_id = "r"."session_id" and m.seq > "r"."seq"
  order by "m"."seq" asc
  limit $46)) AS nx) AS next_id
      FROM first_candidates AS c CROSS JOIN LATERAL (SELECT m.id, m.session_id, m.seq, m.search FROM memories AS m WHERE m.tenant_id = $47 AND m.id = "c"."id") AS r
    ),
    -- The session neighbours of the vector candidates are candidates too.
    candidates AS MATERIALIZED (
      SELECT id FROM first_candidates
      UNION SELECT f.prev_id FROM first_context AS f WHERE f.prev_id IS NOT NULL AND f.id IN (SELECT id FROM nearest)
      UNION SELECT f.next_id FROM first_context AS f WHERE f.next_id IS NOT NULL AND f.id IN (SELECT id FROM nearest)
    ),
    -- The previous memory is looked up once, for its id and its BM25 alike.
    context AS MATERIALIZED (
      SELECT r.id, (coalesce((SELECT sum(w.idf[t.k] * CASE WHEN "r"."search" @@ t.own THEN 1 ELSE 0.5 END) FROM terms AS t, weights AS w WHERE "r"."search" @@ t.q), 0) * (2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * length("r"."search") / $48::float8))))::float8 AS lexical,
        coalesce((coalesce((SELECT sum(w.idf[t.k] * CASE WHEN "pv"."search" @@ t.own THEN 1 ELSE 0.5 END) FROM terms AS t, weights AS w WHERE "pv"."search" @@ t.q), 0) * (2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * length("pv"."search") / $49::float8))))::float8, 0)::float8 AS previous_lexical,
        coalesce((SELECT sl.lexical FROM session_lexical AS sl WHERE sl.session_id = r.session_id), 0)::float8
          AS session_lexical,
        pv.id AS prev_id,
        (SELECT nx.id FROM ((select "m"."id", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $50 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $51) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $52) or ("m"."binding" = 'session' and ("m"."session_id" = $53 or "m"."id" = ANY($54::uuid[]))))) and m.session_id = "r"."session_id" and m.seq > "r"."seq"
  order by "m"."seq" asc
  limit $55)) AS nx) AS next_id
      FROM candidates AS c CROSS JOIN LATERAL (SELECT m.id, m.session_id, m.seq, m.search FROM memories AS m WHERE m.tenant_id = $56 AND m.id = "c"."id") AS r
      LEFT JOIN LATERAL ((select "m"."id", "m"."search"
  from "memories" as "m"
  where ("m"."tenant_id" = $57 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $58) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $59) or ("m"."binding" = 'session' and ("m"."session_id" = $60 or "m"."id" = ANY($61::uuid[]))))) and m.session_id = "r"."session_id" and m.seq < "r"."seq"
  order by "m"."seq" desc
  limit $62)) AS pv ON true
    ),
    needed AS MATERIALIZED (
      SELECT c.id, true AS candidate, c.lexical, c.previous_lexical, c.session_lexical, c.prev_id, c.next_id
      FROM context AS c
      UNION ALL
      SELECT x.id, false, 0::float8, 0::float8, 0::float8, NULL::uuid, NULL::uuid FROM (
        SELECT prev_id AS id FROM context WHERE prev_id IS NOT NULL
        UNION SELECT next_id FROM context WHERE next_id IS NOT NULL
      ) AS x WHERE x.id NOT IN (SELECT id FROM candidates)
    ),
    query_vector AS MATERIALIZED (
      SELECT $63::vector(3) AS v
    )
    SELECT n.id, n.candidate, n.lexical, n.previous_lexical, n.session_lexical, n.prev_id, n.next_id, r.*
    FROM needed AS n
    CROSS JOIN LATERAL (
      SELECT ((1 - 0.5) * (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)) + 0.5 * coalesce((("m"."window_embedding"::vector(3)) <=> (SELECT v FROM query_vector)), (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector))))::float8 AS distance,
        m.binding AS "binding", m.session_id AS "session_id", m.confidence AS "confidence", CASE WHEN m.pinned THEN 0 ELSE m.decay_rate END AS "decay_rate", (extract(epoch FROM m.last_reinforced_at) * 1000)::float8 AS "last_reinforced_ms", (extract(epoch FROM CASE WHEN m.last_reinforced_at > m.created_at
      THEN greatest(m.occurred_at, m.last_reinforced_at) ELSE m.occurred_at END) * 1000)::float8 AS "recent_ms", m.metadata->>'speaker' AS "metadata_speaker", left(m.content, 1000) AS "head", length(m.search)::int AS "lexemes"
      FROM memories AS m
      WHERE m.tenant_id = $64 AND m.id = n.id
      -- One row per id anyway; the LIMIT keeps this a lookup per row, which a plan made without
      -- the values (src/db/prepared.ts) would otherwise turn into a join over the tenant's rows.
      LIMIT 1
    ) AS r

-- parameters
-- $1 = ["00000000-0000-4000-8000-000000000006","00000000-0000-4000-8000-000000000007"]
-- $2 = ["private","anchored","session","session"]
-- $3 = ["agent-1","","",""]
-- $4 = [null,"00000000-0000-4000-8000-000000000002",null,null]
-- $5 = [null,null,"00000000-0000-4000-8000-000000000003","00000000-0000-4000-8000-000000000005"]
-- $6 = "Where did Caroline move from, four years ago?"
-- $7 = []
-- $8 = "00000000-0000-4000-8000-000000000001"
-- $9 = 250000
-- $10 = 1000
-- $11 = 250000
-- $12 = 1000
-- $13 = "00000000-0000-4000-8000-000000000001"
-- $14 = "agent-1"
-- $15 = "00000000-0000-4000-8000-000000000002"
-- $16 = "00000000-0000-4000-8000-000000000003"
-- $17 = ["00000000-0000-4000-8000-000000000004"]
-- $18 = 1000
-- $19 = 10
-- $20 = 10
-- $21 = "00000000-0000-4000-8000-000000000001"
-- $22 = "agent-1"
-- $23 = "00000000-0000-4000-8000-000000000002"
-- $24 = "00000000-0000-4000-8000-000000000003"
-- $25 = ["00000000-0000-4000-8000-000000000004"]
-- $26 = 1
-- $27 = 10
-- $28 = "00000000-0000-4000-8000-000000000001"
-- $29 = "agent-1"
-- $30 = "00000000-0000-4000-8000-000000000002"
-- $31 = "00000000-0000-4000-8000-000000000003"
-- $32 = ["00000000-0000-4000-8000-000000000004"]
-- $33 = 1
-- $34 = 50
-- $35 = "00000000-0000-4000-8000-000000000001"
-- $36 = "agent-1"
-- $37 = "00000000-0000-4000-8000-000000000002"
-- $38 = "00000000-0000-4000-8000-000000000003"
-- $39 = ["00000000-0000-4000-8000-000000000004"]
-- $40 = 1
-- $41 = "00000000-0000-4000-8000-000000000001"
-- $42 = "agent-1"
-- $43 = "00000000-0000-4000-8000-000000000002"
-- $44 = "00000000-0000-4000-8000-000000000003"
-- $45 = ["00000000-0000-4000-8000-000000000004"]
-- $46 = 1
-- $47 = "00000000-0000-4000-8000-000000000001"
-- $48 = 10
-- $49 = 10
-- $50 = "00000000-0000-4000-8000-000000000001"
-- $51 = "agent-1"
-- $52 = "00000000-0000-4000-8000-000000000002"
-- $53 = "00000000-0000-4000-8000-000000000003"
-- $54 = ["00000000-0000-4000-8000-000000000004"]
-- $55 = 1
-- $56 = "00000000-0000-4000-8000-000000000001"
-- $57 = "00000000-0000-4000-8000-000000000001"
-- $58 = "agent-1"
-- $59 = "00000000-0000-4000-8000-000000000002"
-- $60 = "00000000-0000-4000-8000-000000000003"
-- $61 = ["00000000-0000-4000-8000-000000000004"]
-- $62 = 1
-- $63 = "[0.5,0.25,0.125]"
-- $64 = "00000000-0000-4000-8000-000000000001"
