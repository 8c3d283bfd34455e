import { z } from 'zod';
import { IdParams } from '../../schemas/inputs.js';
import { listOf, ProblemObject } from '../../schemas/objects.js';
import {
  CreatedWebhookObject,
  CreateWebhookBody,
  DeliveriesQuery,
  UpdateWebhookBody,
  WebhookDeliveryObject,
  WebhookObject,
} from '../../schemas/webhooks.js';
import { listDeliveries } from '../../webhooks/deliveries.js';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  updateEndpoint,
} from '../../webhooks/endpoints.js';
import { route } from '../route.js';

const boundKey = {
  description: 'The key lacks the admin scope, or is bound to agents (webhooks report every agent)',
  schema: ProblemObject,
};
const noSuchEndpoint = { description: 'No such webhook endpoint', schema: ProblemObject };

export const webhookRoutes = [
  route({
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'createWebhook',
    summary:
      'Register a webhook endpoint; its signing secret (whsec_…) appears only in this response. Deliveries follow Standard Webhooks',
    tag: 'webhooks',
    access: 'admin',
    body: CreateWebhookBody,
    responses: {
      201: { description: 'Endpoint created', schema: CreatedWebhookObject },
      403: boundKey,
      409: { description: 'The tenant has as many endpoints as it may', schema: ProblemObject },
    },
    handle: async ({ core, actor, body }) => {
      const { view, secret } = await createEndpoint(core, actor, body);
      return { status: 201, body: { ...view, secret } };
    },
  }),
  route({
    method: 'get',
    path: '/v1/webhooks',
    operationId: 'listWebhooks',
    summary: "The tenant's webhook endpoints, oldest first, without their secrets",
    tag: 'webhooks',
    access: 'admin',
    responses: {
      200: { description: 'Endpoints', schema: z.object({ webhooks: z.array(WebhookObject) }) },
      403: boundKey,
    },
    handle: async ({ core, actor }) => ({ status: 200, body: { webhooks: await listEndpoints(core.db, actor) } }),
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/{id}',
    operationId: 'getWebhook',
    summary: 'One webhook endpoint: whether it is enabled, and why the service disabled it if it did',
    tag: 'webhooks',
    access: 'admin',
    params: IdParams,
    responses: { 200: { description: 'The endpoint', schema: WebhookObject }, 403: boundKey, 404: noSuchEndpoint },
    handle: async ({ core, actor, params }) => ({ status: 200, body: await getEndpoint(core.db, actor, params.id) }),
  }),
  route({
    method: 'patch',
    path: '/v1/webhooks/{id}',
    operationId: 'updateWebhook',
    summary:
      'Change an endpoint: url, events, description, enabled. Enabling a disabled endpoint resumes its pending deliveries at once',
    tag: 'webhooks',
    access: 'admin',
    params: IdParams,
    body: UpdateWebhookBody,
    responses: { 200: { description: 'The endpoint', schema: WebhookObject }, 403: boundKey, 404: noSuchEndpoint },
    handle: async ({ core, actor, params, body }) => ({
      status: 200,
      body: await updateEndpoint(core, actor, params.id, body),
    }),
  }),
  route({
    method: 'delete',
    path: '/v1/webhooks/{id}',
    operationId: 'deleteWebhook',
    summary: 'Delete an endpoint and its deliveries, pending ones included',
    tag: 'webhooks',
    access: 'admin',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 403: boundKey, 404: noSuchEndpoint },
    handle: async ({ core, actor, params }) => {
      await deleteEndpoint(core, actor, params.id);
      return { status: 204 };
    },
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary:
      "An endpoint's deliveries, newest first: status, attempts, the next attempt's time and the last error; never payloads",
    tag: 'webhooks',
    access: 'admin',
    params: IdParams,
    query: DeliveriesQuery,
    responses: {
      200: { description: 'A page of deliveries', schema: listOf('deliveries', WebhookDeliveryObject) },
      403: boundKey,
      404: noSuchEndpoint,
    },
    handle: async ({ core, actor, params, query }) => {
      const page = await listDeliveries(core.db, actor, params.id, query);
      return { status: 200, body: { deliveries: page.items, next_cursor: page.nextCursor } };
    },
  }),
];
