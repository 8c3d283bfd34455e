-- nearest-exact-filtered: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.
with "query_vector" as (select $1::vector(3) as "v"), "scoped" as materialized (select "m"."id", ((1 - 0.5) * (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)) + 0.5 * coalesce((("m"."window_embedding"::vector(3)) <=> (SELECT v FROM query_vector)), (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)))) as "distance"
  from "memories" as "m"
  where ("m"."tenant_id" = $2 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $3) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $4) or ("m"."binding" = 'session' and ("m"."session_id" = $5 or "m"."id" = ANY($6::uuid[])))) and ((("m"."metadata" @> $7::jsonb) OR ("m"."metadata" @> $8::jsonb)) AND ((CASE WHEN jsonb_typeof(("m"."metadata" -> $9::text)) = 'number' THEN ("m"."metadata" -> $10::text)::numeric >= $11::numeric ELSE false END) OR (CASE WHEN jsonb_typeof(("m"."metadata" -> $12::text)) = 'string' THEN (("m"."metadata" -> $13::text) #>> '{}') COLLATE "C" < $14::text COLLATE "C" ELSE false END)) AND (NOT ("m"."binding" = $15::text)) AND (NOT ("m"."metadata" -> $16::text IS NOT NULL)) AND ("m"."occurred_at" >= $17::timestamptz) AND (NOT ("m"."pinned" = $18::boolean))))
  limit $19) select "scoped"."id", "scoped"."distance", (SELECT count(*) FROM scoped)::int as "passed"
  from "scoped"
  order by "scoped"."distance", "scoped"."id"
  limit $20

-- parameters
-- $1 = "[0.5,0.25,0.125]"
-- $2 = "00000000-0000-4000-8000-000000000001"
-- $3 = "agent-1"
-- $4 = "00000000-0000-4000-8000-000000000002"
-- $5 = "00000000-0000-4000-8000-000000000003"
-- $6 = ["00000000-0000-4000-8000-000000000004"]
-- $7 = "{\"topic\":\"billing\"}"
-- $8 = "{\"topic\":\"refunds\"}"
-- $9 = "priority"
-- $10 = "priority"
-- $11 = 2
-- $12 = "note"
-- $13 = "note"
-- $14 = "2025-01-01"
-- $15 = "canon"
-- $16 = "resolved"
-- $17 = "2025-01-01T00:00:00.000Z"
-- $18 = true
-- $19 = 20001
-- $20 = 50
