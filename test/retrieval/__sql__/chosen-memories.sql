-- chosen-memories: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.
select "m"."id", "m"."agent_id", "m"."content", "m"."binding", "m"."anchor_id", "m"."session_id", "m"."status", "m"."confidence", "m"."decay_rate", "m"."reinforcement_count", "m"."superseded_by", "m"."metadata", "m"."created_at", "m"."updated_at", "m"."last_reinforced_at", "m"."occurred_at", "m"."superseded_at", "m"."expires_at", "m"."pinned", "e"."external_id" as "anchor_external_id"
  from "memories" as "m"
  left join "entities" as "e" on "e"."tenant_id" = "m"."tenant_id" and "e"."id" = "m"."anchor_id"
  where "m"."tenant_id" = $1 and "m"."id" = ANY($2::uuid[])

-- parameters
-- $1 = "00000000-0000-4000-8000-000000000001"
-- $2 = ["00000000-0000-4000-8000-000000000006","00000000-0000-4000-8000-000000000004"]
