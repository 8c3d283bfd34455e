-- nearest-hnsw: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.
select "m"."id", (("m"."embedding"::vector(3)) <=> $1::vector(3)) as "distance"
  from "memories" as "m"
  where ("m"."tenant_id" = $2 and "m"."status" = 'active' and (("m"."binding" = 'private' and "m"."agent_id" = $3) or ("m"."binding" = 'anchored' and "m"."anchor_id" = $4) or ("m"."binding" = 'session' and ("m"."session_id" = $5 or "m"."id" = ANY($6::uuid[])))))
  order by "distance"
  limit $7

-- parameters
-- $1 = "[0.5,0.25,0.125]"
-- $2 = "00000000-0000-4000-8000-000000000001"
-- $3 = "agent-1"
-- $4 = "00000000-0000-4000-8000-000000000002"
-- $5 = "00000000-0000-4000-8000-000000000003"
-- $6 = ["00000000-0000-4000-8000-000000000004"]
-- $7 = 50
