import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { type Actor, type Core } from '../core.js';
import { newId } from '../text.js';
import { SCOPES } from '../../vocabulary.js';

/**
 * The tenant of `agent-memory mcp`: whoever can start the process on this database owns its data,
 * so stdio needs no key. Its id is recorded in service_settings, so every later start (and every
 * process started at the same moment) finds the same tenant.
 */
const SETTING_KEY = 'local_tenant';
const PREFERRED_ORG_NAME = 'local';

async function recordedTenant(db: Db): Promise<string | undefined> {
  // Joined to tenants, so a setting that outlived its tenant counts as no setting.
  const row = await db
    .selectFrom('service_settings as s')
    .innerJoin('tenants as t', (j) => j.on(sql<boolean>`t.id::text = s.value->>'tenant_id'`))
    .select('t.id')
    .where('s.key', '=', SETTING_KEY)
    .executeTakeFirst();
  return row?.id;
}

/** Finds the local tenant, creating it on first use; idempotent and safe for concurrent starts. */
export async function ensureLocalTenant(core: Core): Promise<string> {
  const known = await recordedTenant(core.db);
  if (known) return known;
  return core.db.transaction().execute(async (trx) => {
    // Concurrent first starts take turns here; the second finds what the first recorded.
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`agent-memory:${SETTING_KEY}`}, 0))`.execute(trx);
    const again = await recordedTenant(trx);
    if (again) return again;
    const tenantId = newId();
    // Org names are unique; someone may already have set up a tenant called "local" by hand.
    const taken = await trx
      .selectFrom('tenants')
      .select('id')
      .where(sql<string>`lower(org_name)`, '=', PREFERRED_ORG_NAME)
      .executeTakeFirst();
    await trx
      .insertInto('tenants')
      .values({
        id: tenantId,
        org_name: taken ? `${PREFERRED_ORG_NAME}-${tenantId}` : PREFERRED_ORG_NAME,
        created_at: core.clock(),
      })
      .execute();
    const value = JSON.stringify({ tenant_id: tenantId });
    await trx
      .insertInto('service_settings')
      .values({ key: SETTING_KEY, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
    core.log.info({ tenant_id: tenantId }, 'created the local tenant');
    return tenantId;
  });
}

/** The local tenant acting with every scope and no key (audit events show key_id null). */
export async function localActor(core: Core): Promise<Actor> {
  return { tenantId: await ensureLocalTenant(core), keyId: null, scopes: new Set(SCOPES) };
}
