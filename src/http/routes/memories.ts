import { z } from 'zod';
import { correctMemory } from '../../domain/store/correct.js';
import { changeLife } from '../../domain/lifecycle/life.js';
import type { Actor, Core } from '../../domain/core.js';
import { deleteMemory, getMemory, getMemoryHistory } from '../../domain/records/memories.js';
import { measuredRecall, measuredStore } from '../../measured.js';
import { storedMemory } from '../../domain/store/store.js';
import { checkedFilter } from '../../filter/language.js';
import {
  CorrectMemoryBody,
  IdParams,
  RecallBody,
  RecallQuery,
  StoreBatchBody,
  StoreMemoryBody,
} from '../../schemas/inputs.js';
import {
  AGENT_REFUSED,
  AuditEventObject,
  CorrectedMemoryObject,
  EMBEDDING_UNAVAILABLE,
  MemoryObject,
  ProblemObject,
  RecallResponse,
  StoreBatchResponse,
  StoredMemoryObject,
} from '../../schemas/objects.js';
import { route } from '../route.js';
import { actAs } from '../../domain/tenancy/agent-binding.js';
import type { BatchJobInput } from '../../jobs/batch-job.js';
import { submitJob } from '../../jobs/jobs.js';
import { AsyncQuery } from '../../schemas/jobs.js';
import { lifeOf, storeBatchItems, storeInputOf } from '../../jobs/batch-items.js';
import { accepted, JOB_ACCEPTED } from './jobs.js';
import { BATCH_MAX_ITEMS } from '../../schemas/inputs.js';

/** An item's agent, when it names one as a string (a bad item fails alone when the job runs). */
const agentOfItem = (item: unknown): string | undefined =>
  typeof item === 'object' && item !== null && typeof (item as { agent_id?: unknown }).agent_id === 'string'
    ? (item as { agent_id: string }).agent_id
    : undefined;

const RECALL_RESPONSES = {
  200: { description: 'Ranked by score, highest first', schema: RecallResponse },
  403: AGENT_REFUSED,
  404: { description: 'Unknown anchor_id or session_id', schema: ProblemObject },
  409: { description: 'anchor and session name different subjects', schema: ProblemObject },
  503: EMBEDDING_UNAVAILABLE,
};

/** One recall for either door of the route: the query string's fields, or the body's with a filter. */
async function recallWith(
  core: Core,
  actor: Actor,
  input: z.infer<typeof RecallQuery> & { filter?: Record<string, unknown> | undefined },
) {
  const results = await measuredRecall(core, actor, {
    agentId: input.agent_id,
    query: input.query,
    anchor: { anchorId: input.anchor_id, anchorExternalId: input.anchor_external_id },
    sessionId: input.session_id,
    limit: input.limit,
    includeSuperseded: input.include_superseded,
    asOf: input.as_of === undefined ? undefined : new Date(input.as_of),
    filter: checkedFilter(input.filter),
  });
  return { results };
}

export const memoryRoutes = [
  route({
    method: 'post',
    path: '/v1/memories',
    operationId: 'storeMemory',
    summary: 'Store a memory; its binding follows from anchor and session (docs/api.md §4)',
    tag: 'memories',
    access: 'write',
    body: StoreMemoryBody,
    responses: {
      201: { description: 'Created', schema: StoredMemoryObject },
      200: { description: 'An existing memory was reinforced', schema: StoredMemoryObject },
      403: AGENT_REFUSED,
      404: { description: 'Unknown anchor_id or session_id', schema: ProblemObject },
      409: { description: 'Session ended, or anchor and session disagree', schema: ProblemObject },
      413: { description: 'Content over the limit', schema: ProblemObject },
      503: EMBEDDING_UNAVAILABLE,
    },
    handle: async ({ core, actor, body }) => {
      const result = await measuredStore(core, actor, storeInputOf(body));
      return { status: result.outcome === 'created' ? 201 : 200, body: storedMemory(result) };
    },
  }),
  route({
    method: 'post',
    path: '/v1/memories/batch',
    operationId: 'storeMemories',
    summary: `Store up to ${BATCH_MAX_ITEMS} memories at once: one result per item, in order (docs/api.md §4); with ?async=true, as a job`,
    tag: 'memories',
    access: 'write',
    query: z.strictObject(AsyncQuery),
    body: StoreBatchBody,
    // Every item's content at the limit (UTF-8 takes at most 3 bytes a character), and the rest.
    bodyLimitBytes: (config) => BATCH_MAX_ITEMS * 3 * config.contentLimitChars + config.bodyLimitBytes,
    responses: {
      200: {
        description: "Each item's outcome and memory, or its problem; the items that failed stored nothing",
        schema: StoreBatchResponse,
      },
      202: JOB_ACCEPTED,
      403: {
        description: 'insufficient_scope, or with ?async=true an item of an agent the key may not act as',
        schema: ProblemObject,
      },
      413: { description: 'The body is over the limit of docs/api.md §4', schema: ProblemObject },
      503: EMBEDDING_UNAVAILABLE,
    },
    handle: async ({ core, actor, query, body, res }) => {
      if (query.async === true) {
        // Refused now rather than as a failed job: the key may not act as some item's agent at all.
        const agentIds = [...new Set(body.items.map(agentOfItem).filter((a): a is string => a !== undefined))];
        for (const agentId of agentIds) actAs(actor, agentId);
        const job = await submitJob<BatchJobInput>(core, actor, {
          kind: 'batch',
          input: { items: body.items },
          agentIds,
        });
        return accepted(res, job);
      }
      // The body passed whatever its items hold (StoreBatchBody): each is checked on its own.
      return { status: 200, body: await storeBatchItems(core, actor, body.items) };
    },
  }),
  route({
    method: 'get',
    path: '/v1/memories/recall',
    operationId: 'recallMemories',
    summary: "Hybrid recall over the agent's private memories, the tenant's canon, and the named subject and session",
    tag: 'memories',
    access: 'read',
    query: RecallQuery,
    responses: RECALL_RESPONSES,
    handle: async ({ core, actor, query }) => ({ status: 200, body: await recallWith(core, actor, query) }),
  }),
  route({
    method: 'post',
    path: '/v1/memories/recall',
    operationId: 'recallMemoriesPost',
    summary: 'Recall as a JSON body: the fields of GET /v1/memories/recall and a filter (docs/api.md, "Filters")',
    tag: 'memories',
    access: 'read',
    body: RecallBody,
    responses: RECALL_RESPONSES,
    handle: async ({ core, actor, body }) => ({ status: 200, body: await recallWith(core, actor, body) }),
  }),
  route({
    method: 'get',
    path: '/v1/memories/{id}',
    operationId: 'getMemory',
    summary: 'Get a memory',
    tag: 'memories',
    access: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The memory', schema: MemoryObject },
      404: { description: "No such memory, or another agent's private memory to a bound key", schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({
      status: 200,
      body: await getMemory(core, actor, params.id),
    }),
  }),
  route({
    method: 'patch',
    path: '/v1/memories/{id}',
    operationId: 'correctMemory',
    summary:
      'Correct a memory (a new memory holding the corrected content supersedes it), or pin, unpin or set its expiry in place',
    tag: 'memories',
    access: 'write',
    params: IdParams,
    body: CorrectMemoryBody,
    responses: {
      200: {
        description:
          'With content: the memory that now holds the fact, with the id it corrects. Without: the memory, changed',
        schema: CorrectedMemoryObject.partial({ corrects: true }),
      },
      403: AGENT_REFUSED,
      404: { description: "No such memory, or another agent's private memory to a bound key", schema: ProblemObject },
      409: {
        description:
          'A canon entry (corrected through /v1/canon; it cannot expire), a superseded memory, or the same content as the memory holds',
        schema: ProblemObject,
      },
      413: { description: 'Content over the limit', schema: ProblemObject },
      503: EMBEDDING_UNAVAILABLE,
    },
    handle: async ({ core, actor, params, body }) => {
      if (body.content === undefined) {
        const memory = await changeLife(core, actor, { id: params.id, agentId: body.agent_id, ...lifeOf(body) });
        return { status: 200, body: memory };
      }
      const { memory, corrects } = await correctMemory(core, actor, {
        id: params.id,
        content: body.content,
        agentId: body.agent_id,
        metadata: body.metadata,
        life: lifeOf(body),
      });
      return { status: 200, body: { ...memory, corrects } };
    },
  }),
  route({
    method: 'get',
    path: '/v1/memories/{id}/history',
    operationId: 'getMemoryHistory',
    summary: "A memory's audit events, oldest first",
    tag: 'memories',
    access: 'read',
    params: IdParams,
    responses: {
      200: { description: 'Events', schema: z.object({ events: z.array(AuditEventObject) }) },
      404: { description: "No such memory, or another agent's private memory to a bound key", schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => ({
      status: 200,
      body: { events: await getMemoryHistory(core, actor, params.id) },
    }),
  }),
  route({
    method: 'delete',
    path: '/v1/memories/{id}',
    operationId: 'deleteMemory',
    summary: 'Delete a memory for good (canon has its own route)',
    tag: 'memories',
    access: 'write',
    params: IdParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: "No such memory, or another agent's private memory to a bound key", schema: ProblemObject },
      409: { description: 'A canon entry', schema: ProblemObject },
    },
    handle: async ({ core, actor, params }) => {
      await deleteMemory(core, actor, params.id);
      return { status: 204 };
    },
  }),
];
