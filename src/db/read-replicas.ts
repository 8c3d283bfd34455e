import type { ReadTarget } from '../vocabulary.js';
import { answers, type Db } from './connect.js';

/**
 * Who reads or writes, as far as routing goes: the domain's Actor is one. The key when there is one,
 * else the tenant (a keyless actor: stdio, the command line).
 */
export interface Caller {
  readonly tenantId: string;
  readonly keyId: string | null;
}

/** Bounds the per-key memory of recent writes; the oldest are forgotten first. */
const WRITERS_MAX = 100_000;

/**
 * Recall's choice of database when DATABASE_READ_URL names read replicas (docs/scale-out.md).
 * Recall reads a replica, round robin, except for a key that wrote within `afterWriteMs`: its recalls
 * read the primary, so that a client sees what it just stored whatever the replicas' lag. The
 * window is kept per process: behind a load balancer that spreads one key's requests over several
 * processes, a recall on another process than the write may miss it for the replica's lag.
 */
export class ReadReplicas {
  private next = 0;
  /** Key (or tenant, for a keyless actor) → when its last write began, in this clock. */
  private readonly writers = new Map<string, number>();
  private readonly counts: Record<ReadTarget, number> = { replica: 0, primary: 0, fallback: 0 };

  constructor(
    readonly primary: Db,
    readonly replicas: readonly Db[],
    private readonly afterWriteMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A write by this actor begins: its reads go to the primary until the window after it ends. */
  wrote(actor: Caller): void {
    const who = writer(actor);
    this.writers.delete(who);
    if (this.writers.size >= WRITERS_MAX) this.writers.delete(this.writers.keys().next().value as string);
    // Map order is insertion order: re-inserting keeps the most recent writer last.
    this.writers.set(who, this.now());
  }

  /** The database this actor's recall reads, and which kind it is. */
  forRead(actor: Caller): { db: Db; target: 'replica' | 'primary' } {
    if (this.replicas.length === 0 || this.wroteRecently(actor)) return { db: this.primary, target: 'primary' };
    const db = this.replicas[this.next % this.replicas.length] as Db;
    this.next = (this.next + 1) % this.replicas.length;
    return { db, target: 'replica' };
  }

  /** Counts one read, for /metrics. */
  count(target: ReadTarget): void {
    this.counts[target]++;
  }

  /** Reads so far by target. */
  totals(): Readonly<Record<ReadTarget, number>> {
    return { ...this.counts };
  }

  /** How many replicas answer a trivial query now (for /readyz). */
  async answering(): Promise<number> {
    const answering = await Promise.all(this.replicas.map((db) => answers(db)));
    return answering.filter(Boolean).length;
  }

  private wroteRecently(actor: Caller): boolean {
    const at = this.writers.get(writer(actor));
    if (at === undefined) return false;
    if (this.now() - at < this.afterWriteMs) return true;
    this.writers.delete(writer(actor));
    return false;
  }
}

// A keyless actor (stdio, the CLI) writes as its tenant.
const writer = (actor: Caller): string => actor.keyId ?? `tenant:${actor.tenantId}`;
