import { createTenant } from '../../domain/tenancy/tenants.js';
import { SetupBody } from '../../schemas/inputs.js';
import { ProblemObject, SetupResponse } from '../../schemas/objects.js';
import { route } from '../route.js';

export const setupRoutes = [
  route({
    method: 'post',
    path: '/v1/setup',
    operationId: 'createTenant',
    summary: 'Create a tenant and its first key (all scopes); needs the X-Setup-Token header',
    tag: 'tenancy',
    access: 'setup',
    body: SetupBody,
    responses: {
      201: { description: 'Tenant created', schema: SetupResponse },
      401: { description: 'Missing or wrong setup token', schema: ProblemObject },
      403: { description: 'No setup token configured', schema: ProblemObject },
      409: { description: 'org_name taken', schema: ProblemObject },
    },
    handle: async ({ core, body }) => {
      const tenant = await createTenant(core, body.org_name);
      return {
        status: 201,
        body: {
          tenant_id: tenant.tenantId,
          api_key: tenant.apiKey,
          message: 'Store this key now: it is shown only once. It holds the read, write and admin scopes.',
        },
      };
    },
  }),
];
