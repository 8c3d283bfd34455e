import { deleteCanon, getCanon, listCanon, writeCanon } from '../../domain/records/canon.js';
import { checkedFilter } from '../../filter/language.js';
import { FilteredPageQuery, IdParams, WriteCanonBody } from '../../schemas/inputs.js';
import { AGENT_REFUSED, CanonObject, EMBEDDING_UNAVAILABLE, listOf, ProblemObject } from '../../schemas/objects.js';
import { route } from '../route.js';

export const canonRoutes = [
  route({
    method: 'post',
    path: '/v1/canon',
    operationId: 'writeCanon',
    summary: 'Write tenant-wide canon (idempotent on content after trimming and collapsing whitespace)',
    tag: 'canon',
    access: 'admin',
    body: WriteCanonBody,
    responses: {
      201: { description: 'Written', schema: CanonObject },
      200: { description: 'The same content existed and is returned', schema: CanonObject },
      403: AGENT_REFUSED,
      413: { description: 'Content over the limit', schema: ProblemObject },
      503: EMBEDDING_UNAVAILABLE,
    },
    handle: async ({ core, actor, body }) => {
      const { entry, created } = await writeCanon(core, actor, {
        agentId: body.agent_id,
        content: body.content,
        metadata: body.metadata,
      });
      return { status: created ? 201 : 200, body: entry };
    },
  }),
  route({
    method: 'get',
    path: '/v1/canon',
    operationId: 'listCanon',
    summary: "The tenant's canon, oldest first",
    tag: 'canon',
    access: 'any',
    query: FilteredPageQuery,
    responses: { 200: { description: 'A page of canon', schema: listOf('canon', CanonObject) } },
    handle: async ({ core, actor, query }) => {
      const page = await listCanon(core.db, actor.tenantId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: checkedFilter(query.filter),
      });
      return { status: 200, body: { canon: page.items, next_cursor: page.nextCursor } };
    },
  }),
  route({
    method: 'get',
    path: '/v1/canon/{id}',
    operationId: 'getCanon',
    summary: 'Get a canon entry',
    tag: 'canon',
    access: 'any',
    params: IdParams,
    responses: {
      200: { description: 'The entry', schema: CanonObject },
      404: { description: 'No such entry', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({
      status: 200,
      body: await getCanon(core.db, actor.tenantId, params.id),
    }),
  }),
  route({
    method: 'delete',
    path: '/v1/canon/{id}',
    operationId: 'deleteCanon',
    summary: 'Delete a canon entry',
    tag: 'canon',
    access: 'admin',
    params: IdParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'No such entry', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => {
      await deleteCanon(core, actor, params.id);
      return { status: 204 };
    },
  }),
];
