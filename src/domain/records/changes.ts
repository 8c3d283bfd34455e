import type { Logger } from 'pino';

/**
 * What a committed mutation touched, as ids only: never content. The core announces it through
 * Postgres NOTIFY inside the mutation's transaction (src/domain/records/audit.ts), so it is delivered once the
 * transaction commits and never for one that rolls back, to every process listening on the database.
 */
export interface Change {
  readonly tenantId: string;
  readonly anchorId: string | null;
  readonly sessionId: string | null;
  readonly canon: boolean;
}

export type ChangeListener = (change: Change) => void;

/** The NOTIFY channel the core announces its changes on. */
export const CHANGES_CHANNEL = 'agent_memory_changes';

export const encodeChange = (change: Change): string =>
  JSON.stringify({ t: change.tenantId, a: change.anchorId, s: change.sessionId, c: change.canon });

export function decodeChange(payload: string): Change | undefined {
  try {
    const raw = JSON.parse(payload) as { t?: unknown; a?: unknown; s?: unknown; c?: unknown };
    if (typeof raw.t !== 'string') return undefined;
    const id = (v: unknown) => (typeof v === 'string' ? v : null);
    return { tenantId: raw.t, anchorId: id(raw.a), sessionId: id(raw.s), canon: raw.c === true };
  } catch {
    return undefined;
  }
}

/**
 * The process's hub of committed changes, keyed by tenant: whoever subscribes hears only its own
 * tenant's. Fed by the database's notifications (src/db/connect.ts listen).
 */
export class ChangeFeed {
  private readonly byTenant = new Map<string, Set<ChangeListener>>();

  constructor(private readonly log?: Pick<Logger, 'warn'>) {}

  subscribe(tenantId: string, listener: ChangeListener): () => void {
    let listeners = this.byTenant.get(tenantId);
    if (!listeners) this.byTenant.set(tenantId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.byTenant.get(tenantId) === listeners) this.byTenant.delete(tenantId);
    };
  }

  /** The number of listeners, for tests and metrics. */
  get size(): number {
    let n = 0;
    for (const set of this.byTenant.values()) n += set.size;
    return n;
  }

  publish(change: Change): void {
    for (const listener of [...(this.byTenant.get(change.tenantId) ?? [])]) {
      try {
        listener(change);
      } catch (error) {
        this.log?.warn({ err: error }, 'change listener failed');
      }
    }
  }

  /** A NOTIFY payload from the database; one that is not ours is ignored. */
  receive(payload: string | undefined): void {
    const change = payload === undefined ? undefined : decodeChange(payload);
    if (change) this.publish(change);
  }
}
