-- Keys bound to agents: a key with agent_ids may act only as those agents, and never sees another
-- agent's private memories. NULL is an unbound key (every agent of the tenant), as every key was
-- before; an empty list would be a key that can act as no one, so it is refused.
ALTER TABLE api_keys ADD COLUMN agent_ids text[];
ALTER TABLE api_keys ADD CONSTRAINT api_keys_agent_ids_not_empty CHECK (agent_ids IS NULL OR cardinality(agent_ids) > 0);
