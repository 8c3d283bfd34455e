import { createSession, endSession, getSession } from '../../domain/sessions.js';
import { CreateSessionBody, IdParams } from '../../schemas/inputs.js';
import { AGENT_REFUSED, ProblemObject, SessionObject } from '../../schemas/objects.js';
import { route } from '../route.js';

export const sessionRoutes = [
  route({
    method: 'post',
    path: '/v1/sessions',
    operationId: 'startSession',
    summary: "Start a session: one conversation's short-term memory, optionally about a subject",
    tag: 'sessions',
    access: 'write',
    body: CreateSessionBody,
    responses: {
      201: { description: 'Started', schema: SessionObject },
      403: AGENT_REFUSED,
      404: { description: 'Unknown anchor_id', schema: ProblemObject },
    },
    handle: async ({ core, actor, body }) => ({
      status: 201,
      body: await createSession(core, actor, {
        agentId: body.agent_id,
        anchor: { anchorId: body.anchor_id, anchorExternalId: body.anchor_external_id },
        metadata: body.metadata,
      }),
    }),
  }),
  route({
    method: 'get',
    path: '/v1/sessions/{id}',
    operationId: 'getSession',
    summary: 'Get a session',
    tag: 'sessions',
    access: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The session', schema: SessionObject },
      404: { description: 'No such session', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({
      status: 200,
      body: await getSession(core.db, actor.tenantId, params.id),
    }),
  }),
  route({
    method: 'post',
    path: '/v1/sessions/{id}/end',
    operationId: 'endSession',
    summary: 'End a session (idempotent); its unpromoted memories expire after the session TTL',
    tag: 'sessions',
    access: 'write',
    params: IdParams,
    responses: {
      200: { description: 'The ended session', schema: SessionObject },
      404: { description: 'No such session', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({ status: 200, body: await endSession(core, actor, params.id) }),
  }),
];
