import { z } from 'zod';
import { getAnchor, listAnchors, upsertAnchor } from '../../domain/subjects/anchors.js';
import { anchorProfile } from '../../domain/records/memories.js';
import { purgeAnchor } from '../../domain/subjects/purge.js';
import { listAnchorSessions } from '../../domain/subjects/sessions.js';
import { AppError } from '../../errors.js';
import { checkedFilter } from '../../filter/language.js';
import {
  AnchorProfileQuery,
  CreateAnchorBody,
  IdParams,
  ListAnchorsQuery,
  PageQuery,
  PurgeQuery,
} from '../../schemas/inputs.js';
import { AnchorObject, listOf, MemoryObject, ProblemObject, SessionObject } from '../../schemas/objects.js';
import { route } from '../route.js';

export const anchorRoutes = [
  route({
    method: 'post',
    path: '/v1/anchors',
    operationId: 'createAnchor',
    summary: 'Create a subject, or return the one with this external id',
    tag: 'anchors',
    access: 'write',
    body: CreateAnchorBody,
    responses: {
      201: { description: 'Created', schema: AnchorObject },
      200: { description: 'Already existed, returned unchanged', schema: AnchorObject },
    },
    handle: async ({ core, actor, body }) => {
      const { id, created } = await upsertAnchor(core.db, actor.tenantId, core.clock(), {
        externalId: body.anchor_external_id,
        name: body.name,
        metadata: body.metadata,
      });
      return { status: created ? 201 : 200, body: await getAnchor(core.db, actor.tenantId, id) };
    },
  }),
  route({
    method: 'get',
    path: '/v1/anchors',
    operationId: 'listAnchors',
    summary: 'List subjects, oldest first, optionally by external id',
    tag: 'anchors',
    access: 'read',
    query: ListAnchorsQuery,
    responses: { 200: { description: 'A page of anchors', schema: listOf('anchors', AnchorObject) } },
    handle: async ({ core, actor, query }) => {
      const page = await listAnchors(core.db, actor.tenantId, {
        externalId: query.anchor_external_id,
        externalIdPrefix: query.anchor_external_id_prefix,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: { anchors: page.items, next_cursor: page.nextCursor } };
    },
  }),
  route({
    method: 'get',
    path: '/v1/anchors/{id}',
    operationId: 'getAnchor',
    summary: 'Get a subject',
    tag: 'anchors',
    access: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The anchor', schema: AnchorObject },
      404: { description: 'No such anchor', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({
      status: 200,
      body: await getAnchor(core.db, actor.tenantId, params.id),
    }),
  }),
  route({
    method: 'get',
    path: '/v1/anchors/{id}/memories',
    operationId: 'getAnchorProfile',
    summary:
      "The subject's durable profile: active anchored memories, highest effective confidence first (or those superseded, with status=superseded); with changed_since, what changed since",
    tag: 'anchors',
    access: 'read',
    params: IdParams,
    query: AnchorProfileQuery,
    responses: {
      200: {
        description: 'A page of the profile',
        schema: z.object({ anchor: AnchorObject, memories: z.array(MemoryObject), next_cursor: z.string().nullable() }),
      },
      404: { description: 'No such anchor', schema: ProblemObject },
    },
    handle: async ({ core, actor, params, query }) => {
      const anchor = await getAnchor(core.db, actor.tenantId, params.id);
      const page = await anchorProfile(core, actor.tenantId, anchor.id, {
        limit: query.limit,
        cursor: query.cursor,
        status: query.status,
        changedSince: query.changed_since === undefined ? undefined : new Date(query.changed_since),
        filter: checkedFilter(query.filter),
      });
      return {
        status: 200,
        body: {
          anchor,
          memories: page.memories,
          next_cursor: page.nextCursor,
        },
      };
    },
  }),
  route({
    method: 'get',
    path: '/v1/anchors/{id}/sessions',
    operationId: 'listAnchorSessions',
    summary: "The subject's sessions, latest first: active, ended, and ended ones whose memories expire later",
    tag: 'anchors',
    access: 'read',
    params: IdParams,
    query: PageQuery,
    responses: {
      200: { description: 'A page of sessions', schema: listOf('sessions', SessionObject) },
      404: { description: 'No such anchor', schema: ProblemObject },
    },
    handle: async ({ core, actor, params, query }) => {
      const anchor = await getAnchor(core.db, actor.tenantId, params.id);
      const page = await listAnchorSessions(core.db, actor.tenantId, anchor.id, {
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: { sessions: page.items, next_cursor: page.nextCursor } };
    },
  }),
  route({
    method: 'delete',
    path: '/v1/anchors/{id}',
    operationId: 'purgeAnchor',
    summary:
      'Erase a subject for good (purge=true): the anchor, its memories of every binding, its sessions and the audit events naming them',
    tag: 'anchors',
    access: 'admin',
    params: IdParams,
    query: PurgeQuery,
    responses: {
      200: {
        description: 'Erased; one anchor_purged event with counts remains',
        schema: z.object({
          purged: z.literal(true),
          anchor_id: z.string(),
          deleted: z.object({ memories: z.number().int(), sessions: z.number().int() }),
        }),
      },
      400: { description: 'purge=true missing', schema: ProblemObject },
      404: { description: 'No such anchor', schema: ProblemObject },
    },
    handle: async ({ core, actor, params, query }) => {
      if (query.purge !== true) {
        throw new AppError('invalid_request', 'deleting an anchor erases it for good: add ?purge=true to confirm', [
          { path: 'purge', message: 'must be true' },
        ]);
      }
      const result = await purgeAnchor(core, actor, params.id);
      return { status: 200, body: { purged: true, anchor_id: result.anchorId, deleted: result.deleted } };
    },
  }),
];
