import { sql } from 'kysely';
import { AppError, isUniqueViolation } from '../../errors.js';
import { recordEvent } from '../records/audit.js';
import { type Core } from '../core.js';
import { insertKey } from './keys.js';
import { isUuid, newId } from '../text.js';
import { SCOPES } from '../../vocabulary.js';

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

export interface TenantRef {
  tenantId: string;
  orgName: string;
}

/** A tenant by id or by org name (org names are unique without regard to case); null if none. */
export async function findTenant(core: Core, by: { id: string } | { orgName: string }): Promise<TenantRef | null> {
  let query = core.db.selectFrom('tenants').select(['id', 'org_name']);
  if ('id' in by) {
    if (!isUuid(by.id)) return null;
    query = query.where('id', '=', by.id);
  } else {
    query = query.where(sql<string>`lower(org_name)`, '=', by.orgName.toLowerCase());
  }
  const row = await query.executeTakeFirst();
  return row ? { tenantId: row.id, orgName: row.org_name } : null;
}
