import type { Db } from '../../db/connect.js';

/**
 * Marks memory `id` superseded by memory `by` as of `now`: the one write of supersession, whether a
 * store contradicted it or merged a session copy into its profile twin (store.ts), or a person
 * corrected it (correct.ts). The caller holds the memory's partition and records in the audit trail
 * why it was superseded; the row stays, so that recall with include_superseded and as_of still finds
 * it.
 */
export async function markSuperseded(trx: Db, tenantId: string, id: string, by: string, now: Date): Promise<void> {
  await trx
    .updateTable('memories')
    .set({ status: 'superseded', superseded_by: by, updated_at: now, superseded_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}
