import { agentId, anchorExternalId, memoryFilter, uuid } from '../../schemas/fields.js';

/** Tool arguments: the REST field schemas, described for a model instead of a developer. */

export const subjectArg = anchorExternalId.describe(
  'Who or what this is about: a stable id you choose for a person, customer, project or case ' +
    '(e.g. "customer-42", "repo:acme/web"). Use the same id every time; ' +
    'memories of one subject are never recalled for another.',
);

export const sessionIdArg = uuid.describe('The id returned by start_session for the current conversation.');

export const agentIdArg = agentId.describe(
  'Who is acting. Leave it out unless told otherwise: it defaults to the configured agent, the agent ' +
    'the API key is bound to, or the client. Private memories are recalled only for the same agent id.',
);

export const filterArg = memoryFilter.describe(
  'Optional. Narrows the search to memories whose fields match, before ranking, so the best matches ' +
    'among them come back. Use it when the task names a category you stored in metadata, not for the ' +
    'words of the query. {"metadata.topic": "billing"} keeps memories whose metadata topic is "billing"; ' +
    'operators: {"metadata.priority": {"$gte": 2}}, {"metadata.topic": {"$in": ["billing", "refunds"]}}, ' +
    '{"metadata.resolved": {"$exists": false}}, $ne, $nin, $gt, $lt, $lte; combine with ' +
    '{"$and": [...]}, {"$or": [...]}, {"$not": {...}}. Built-in fields: agent_id, binding ' +
    '(private, anchored, session, canon), pinned (true/false), occurred_at and created_at (ISO-8601, ' +
    'e.g. {"occurred_at": {"$gte": "2025-01-01T00:00:00Z"}}). Values match by type: 2 never matches "2".',
);
