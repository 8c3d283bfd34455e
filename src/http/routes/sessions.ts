import { z } from 'zod';
import { decodeOffsetCursor, encodeOffsetCursor } from '../../domain/records/pagination.js';
import { sessionWithMemories } from '../../domain/subjects/session-memories.js';
import { createSession, endSession, getSession } from '../../domain/subjects/sessions.js';
import { checkedFilter } from '../../filter/language.js';
import { CreateSessionBody, IdParams, MemoryPageQuery } from '../../schemas/inputs.js';
import { AGENT_REFUSED, MemoryObject, ProblemObject, SessionObject } from '../../schemas/objects.js';
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
    method: 'get',
    path: '/v1/sessions/{id}/memories',
    operationId: 'listSessionMemories',
    summary:
      'The memories stored in a session, oldest first: its short-term memories and the anchored ones that name it',
    tag: 'sessions',
    access: 'read',
    params: IdParams,
    query: MemoryPageQuery,
    responses: {
      200: {
        description: 'The session and a page of its memories',
        schema: z.object({
          session: SessionObject,
          memories: z.array(MemoryObject),
          next_cursor: z.string().nullable(),
        }),
      },
      404: { description: 'No such session', schema: ProblemObject },
    },
    handle: async ({ core, actor, params, query }) => {
      // An offset, as the anchor profile's: memories of an active session keep arriving at the end.
      const offset = decodeOffsetCursor(query.cursor);
      const found = await sessionWithMemories(core, actor.tenantId, params.id, {
        limit: query.limit,
        offset,
        changedSince: query.changed_since === undefined ? undefined : new Date(query.changed_since),
        filter: checkedFilter(query.filter),
      });
      return {
        status: 200,
        body: {
          session: found.session,
          memories: found.memories,
          next_cursor: found.more ? encodeOffsetCursor(offset + query.limit) : null,
        },
      };
    },
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
