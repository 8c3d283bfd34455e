-- nearest-exact: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.
with "query_vector" as (select $1::vector(3) as "v"), "scoped" as materialized (select "m"."id", ((1 - 0.5) * (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)) + 0.5 * coalesce((("m"."window_embedding"::vector(3)) <=> (SELECT v FROM query_vector)), (("m"."embedding"::vector(3)) <=> (SELECT v FROM query_vector)))) as "distance"
  from "memories" as "m"
  where ("m"."tenant_id" = $2 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $3) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $4) or ("m"."binding" = 'session' and ("m"."session_id" = $5 or "m"."id" = ANY($6::uuid[])))))) select "scoped"."id", "scoped"."distance"
  from "scoped"
  order by "scoped"."distance", "scoped"."id"
  limit $7

-- parameters
-- $1 = "[0.5,0.25,0.125]"
-- $2 = "00000000-0000-4000-8000-000000000001"
-- $3 = "agent-1"
-- $4 = "00000000-0000-4000-8000-000000000002"
-- $5 = "00000000-0000-4000-8000-000000000003"
-- $6 = ["00000000-0000-4000-8000-000000000004"]
-- $7 = 50
