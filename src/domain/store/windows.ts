import type { Db } from '../../db/connect.js';
import { isUuid } from '../text.js';

/**
 * Window vectors (migration 0008): a session memory is embedded a second time together with the
 * memory stored just before it in its session, because a turn of a conversation often means
 * little without the one it answers. Recall blends the two distances (FUSION.windowSemanticShare).
 */

/** The text a window vector embeds: the memory before, then this one. */
export function windowText(previous: string, content: string): string {
  return `${previous}\n${content}`;
}

/** The memory stored last in a session, whatever its status: the next one's window is built from it. */
export async function lastInSession(
  db: Db,
  tenantId: string,
  sessionId: string,
): Promise<{ id: string; content: string } | undefined> {
  // An id that is no uuid names no session; the store path says so in its own words.
  if (!isUuid(sessionId)) return undefined;
  return db
    .selectFrom('memories')
    .select(['id', 'content'])
    .where('tenant_id', '=', tenantId)
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}
