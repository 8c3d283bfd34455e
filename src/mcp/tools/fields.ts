import { agentId, anchorExternalId, uuid } from '../../schemas/fields.js';

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
