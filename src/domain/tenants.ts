import { AppError, isUniqueViolation } from '../errors.js';
import { recordEvent } from './audit.js';
import { SCOPES, type Core } from './core.js';
import { insertKey } from './keys.js';
import { newId } from './text.js';

export interface CreatedTenant {
  tenantId: string;
  apiKey: string;
  keyId: string;
}

/** Creates a tenant with its first key, which holds every scope. */
export async function createTenant(core: Core, orgName: string): Promise<CreatedTenant> {
  try {
    return await core.db.transaction().execute(async (trx) => {
      const tenantId = newId();
      await trx.insertInto('tenants').values({ id: tenantId, org_name: orgName, created_at: core.clock() }).execute();
      const { view, apiKey } = await insertKey(trx, tenantId, core.clock(), 'setup', SCOPES);
      await recordEvent(trx, { tenantId, keyId: view.id, scopes: new Set(SCOPES) }, core.clock(), {
        action: 'key_created',
        changes: { key_id: view.id, scopes: view.scopes },
      });
      return { tenantId, apiKey, keyId: view.id };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('conflict', `org_name "${orgName}" is taken`);
    throw error;
  }
}
