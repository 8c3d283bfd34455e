import type { Db } from '../../db/connect.js';
import { AppError, notFound } from '../../errors.js';
import { lockAnchor, resolveAnchor, type AnchorRef } from '../subjects/anchors.js';
import type { Partition } from './partition.js';
import { resolveSession, type SessionScope } from '../subjects/sessions.js';

/** Where a store puts a memory, or whose memories a recall sees: a partition without its owner. */
export type Placement = Pick<Partition, 'binding' | 'anchorId' | 'sessionId'>;

export interface Resolved {
  placement: Placement;
  /** The named session as found, for what a recall needs beyond the placement (its expiry). */
  session: SessionScope | undefined;
}

const anchorNamed = (ref: AnchorRef): boolean => ref.anchorId !== undefined || ref.anchorExternalId !== undefined;

/**
 * docs/api.md §4: an anchor makes the memory `anchored` (a session named too is kept as provenance);
 * a session alone makes it `session`, owned by the session's anchor; neither makes it `private`.
 */
function placementOf(ref: AnchorRef, anchorId: string | null, session: SessionScope | undefined): Placement {
  if (anchorNamed(ref)) return { binding: 'anchored', anchorId, sessionId: session?.sessionId ?? null };
  if (session) return { binding: 'session', anchorId: session.anchorId, sessionId: session.sessionId };
  return { binding: 'private', anchorId: null, sessionId: null };
}

function assertSameSubject(ref: AnchorRef, anchorId: string | null, session: SessionScope | undefined): void {
  // An external id that names no anchor yet (null) is still a subject other than the session's.
  if (anchorNamed(ref) && session?.anchorId && session.anchorId !== anchorId) {
    throw new AppError('conflict', 'the session belongs to another anchor than the one named');
  }
}

/**
 * Resolves without writing or locking: for recall, for refusing an ingest up front, and for judging
 * before a store. An unknown external id places on no anchor (anchorId null): recall matches nothing
 * there, and the store that follows creates it. `mustBeActive` refuses an ended session, as a store does.
 */
export async function resolvePlacement(
  db: Db,
  tenantId: string,
  ref: AnchorRef,
  sessionId: string | undefined,
  options: { mustBeActive: boolean },
): Promise<Resolved> {
  const session =
    sessionId !== undefined ? await resolveSession(db, tenantId, sessionId, ref.anchorId, options) : undefined;
  const anchorId = anchorNamed(ref) ? ((await resolveAnchor(db, tenantId, ref)) ?? null) : null;
  assertSameSubject(ref, anchorId, session);
  return { placement: placementOf(ref, anchorId, session), session };
}

/** A store's placement, with its subject's external id where placing it read or was given that. */
export interface StorePlacement extends Placement {
  anchorExternalId?: string | null | undefined;
}

/**
 * The store's placement, inside its transaction: creates an anchor that an external id names for
 * the first time, and takes the subject's and the session's locks in the order of partition.ts.
 * A refused store rolls back whatever it created on the way.
 */
export async function placeForStore(
  trx: Db,
  tenantId: string,
  now: Date,
  ref: AnchorRef,
  sessionId: string | undefined,
): Promise<StorePlacement> {
  // A session's subject never changes, so it is read unlocked first: the subject must be locked
  // before the session.
  const peeked =
    sessionId !== undefined
      ? await resolveSession(trx, tenantId, sessionId, ref.anchorId, { mustBeActive: false })
      : undefined;
  let anchorId = peeked?.anchorId ?? null;
  if (anchorNamed(ref)) {
    const named = (await resolveAnchor(trx, tenantId, ref, { createAt: now })) ?? null;
    assertSameSubject(ref, named, peeked);
    anchorId = named;
  } else if (anchorId && !(await lockAnchor(trx, tenantId, anchorId))) {
    // The session's subject was purged, and the session with it.
    throw notFound('session');
  }
  // A writing store holds the session shared, so that an end cannot slip in before the commit.
  const session =
    sessionId !== undefined
      ? await resolveSession(trx, tenantId, sessionId, anchorId, { mustBeActive: true })
      : undefined;
  const anchorExternalId = anchorNamed(ref) ? ref.anchorExternalId : session?.anchorExternalId;
  return { ...placementOf(ref, anchorId, session), anchorExternalId };
}
