import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { anyOf } from '../../db/arrays.js';
import { MEMORY_WITH_ANCHOR_COLUMNS, memoriesWithAnchor } from '../../domain/records/memories.js';

/** The memories a recall returns, chosen by fusion: their whole rows, to answer with. */
export interface ChosenMemoriesInput {
  db: Db;
  tenantId: string;
  ids: readonly string[];
}

/** Prepared (the ids go in one array parameter): every recall that returns something sends it. */
export function chosenMemoriesQuery(q: ChosenMemoriesInput) {
  return memoriesWithAnchor(q.db)
    .select(MEMORY_WITH_ANCHOR_COLUMNS)
    .where('m.tenant_id', '=', q.tenantId)
    .where(anyOf(sql.ref('m.id'), q.ids));
}
