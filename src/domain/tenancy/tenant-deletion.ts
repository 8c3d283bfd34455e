import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { forgetCachedKeys } from './keys.js';

/** Rows deleted per transaction: each batch holds its locks (and its statistics triggers' work) briefly. */
export const TENANT_DELETE_BATCH = 1000;

/** The tables a tenant's bulk lives in, emptied in batches before the tenant's row goes. */
const BULK_TABLES = ['memories', 'audit_events'] as const;

/**
 * Deletes a tenant and everything it holds. Deleting its `tenants` row alone would do it by
 * cascade, in one transaction that holds the row lock of a table every tenant's creation writes and
 * fires the statistics triggers (migration 0016) once per cascading statement; on Citus `tenants`
 * is a reference table, whose writes are serialized across the cluster, so every tenant's setup
 * waited minutes behind the deletion of a large one. The tenant's memories and audit events are
 * deleted first instead, in batches of their own transactions (each a one-shard statement on
 * Citus), and the cascade is left only the few rows that remain. Returns whether the tenant existed.
 * A store that runs meanwhile is deleted by the cascade. Other processes refuse its keys once their
 * cache entry expires (5 s, src/domain/tenancy/keys.ts).
 */
export async function deleteTenant(db: Db, tenantId: string, batch = TENANT_DELETE_BATCH): Promise<boolean> {
  for (const table of BULK_TABLES) {
    for (;;) {
      const { numAffectedRows } = await db.transaction().execute((trx) =>
        sql`DELETE FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} AND id IN (
            SELECT id FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} LIMIT ${batch})`.execute(trx),
      );
      if (Number(numAffectedRows ?? 0) < batch) break;
    }
  }
  const deleted = await db.deleteFrom('tenants').where('id', '=', tenantId).executeTakeFirst();
  // After the commit, as a revocation does: its keys are refused here at once.
  forgetCachedKeys(db);
  return Number(deleted.numDeletedRows) > 0;
}
