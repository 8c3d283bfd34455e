-- Memory filters (docs/api.md, "Filters"): equality on a metadata key is JSON containment
-- (metadata @> '{"topic": "billing"}'), which this index serves, so that a filter that lets few
-- memories of a large scope through finds them without reading the scope. jsonb_path_ops: smaller
-- and faster than the default operator class, and containment is the only operator filters index.
CREATE INDEX memories_metadata_idx ON memories USING gin (metadata jsonb_path_ops);
