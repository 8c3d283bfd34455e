import { z } from 'zod';
import { createKey, getKey, listKeys, revokeKey } from '../../domain/tenancy/keys.js';
import { CreateKeyBody, IdParams } from '../../schemas/inputs.js';
import { CreatedKeyObject, CurrentKeyObject, KeyObject, ProblemObject } from '../../schemas/objects.js';
import { route } from '../route.js';

export const keyRoutes = [
  route({
    method: 'get',
    path: '/v1/keys/current',
    operationId: 'getCurrentKey',
    summary: 'The key making the request: its scopes and agents, so that a client shows only what it may do',
    tag: 'keys',
    access: 'any',
    responses: { 200: { description: 'The calling key', schema: CurrentKeyObject } },
    handle: async ({ core, actor }) => ({
      status: 200,
      body: { ...(await getKey(core.db, actor.tenantId, actor.keyId ?? '')), tenant_id: actor.tenantId },
    }),
  }),
  route({
    method: 'post',
    path: '/v1/keys',
    operationId: 'createKey',
    summary: 'Create an API key; the key itself appears only in this response',
    tag: 'keys',
    access: 'admin',
    body: CreateKeyBody,
    responses: {
      201: { description: 'Key created', schema: CreatedKeyObject },
      403: {
        description:
          'The key lacks the admin scope, or is bound to agents and the new key would act as an agent outside them (or as any agent)',
        schema: ProblemObject,
      },
    },
    handle: async ({ core, actor, body }) => {
      const { view, apiKey } = await createKey(core, actor, body.name, body.scopes, body.agent_ids);
      return {
        status: 201,
        body: {
          id: view.id,
          name: view.name,
          key_prefix: view.key_prefix,
          api_key: apiKey,
          scopes: view.scopes,
          agent_ids: view.agent_ids,
          created_at: view.created_at,
        },
      };
    },
  }),
  route({
    method: 'get',
    path: '/v1/keys',
    operationId: 'listKeys',
    summary:
      "List the tenant's keys (prefixes only), revoked ones included; a key bound to agents lists only keys bound to some of its agents",
    tag: 'keys',
    access: 'admin',
    responses: { 200: { description: 'Keys', schema: z.object({ keys: z.array(KeyObject) }) } },
    handle: async ({ core, actor }) => ({ status: 200, body: { keys: await listKeys(core.db, actor) } }),
  }),
  route({
    method: 'delete',
    path: '/v1/keys/{id}',
    operationId: 'revokeKey',
    summary:
      'Revoke a key; it stops working at once. A key bound to agents revokes only keys bound to some of its agents',
    tag: 'keys',
    access: 'admin',
    params: IdParams,
    responses: {
      204: { description: 'Revoked' },
      404: {
        description: 'No such key, or (for a key bound to agents) a key bound beyond its agents or not bound',
        schema: ProblemObject,
      },
      409: {
        description: "The tenant's last admin key, or its last admin key not bound to agents",
        schema: ProblemObject,
      },
    },
    handle: async ({ core, actor, params }) => {
      await revokeKey(core, actor, params.id);
      return { status: 204 };
    },
  }),
];
