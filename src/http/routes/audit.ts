import { listEvents } from '../../domain/records/audit.js';
import { AuditQuery } from '../../schemas/inputs.js';
import { AuditEventObject, listOf } from '../../schemas/objects.js';
import { route } from '../route.js';

export const auditRoutes = [
  route({
    method: 'get',
    path: '/v1/audit',
    operationId: 'listAuditEvents',
    summary:
      "The tenant's audit trail, oldest first; events hold ids and counts, never content. A key bound to agents sees no event of another agent's private memory or of a key it cannot list",
    tag: 'audit',
    access: 'admin',
    query: AuditQuery,
    responses: { 200: { description: 'A page of events', schema: listOf('events', AuditEventObject) } },
    handle: async ({ core, actor, query }) => {
      const page = await listEvents(core.db, actor, {
        anchorId: query.anchor_id,
        memoryId: query.memory_id,
        action: query.action,
        since: query.since ? new Date(query.since) : undefined,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: { events: page.items, next_cursor: page.nextCursor } };
    },
  }),
];
