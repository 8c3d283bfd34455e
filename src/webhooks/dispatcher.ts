import type { Core } from '../domain/core.js';
import { sendWebhook, type Attempt } from './send.js';

/** Beyond an attempt's own timeout, how long a claimed delivery stays another process's. */
const LEASE_MARGIN_MS = 5_000;
/** How often finished deliveries past their retention are removed. */
const RETENTION_EVERY_MS = 10 * 60 * 1000;
/** How long a stopping process waits for its attempts under way. */
const STOP_WAIT_MS = 2_000;
/** ±10 %: retries of many deliveries that failed together (an outage) spread out as they resume. */
const JITTER = 0.1;

interface Claimed {
  tenant_id: string;
  endpoint_id: string;
  id: string;
  payload: Record<string, unknown>;
  attempts: number;
  url: string;
  secret: string;
}

/** The wait after the nth failed attempt (1-based), jittered; undefined once the schedule is spent. */
export function retryDelayMs(
  schedule: readonly number[],
  failedAttempts: number,
  random = Math.random,
): number | undefined {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + (random() * 2 - 1) * JITTER));
}

/**
 * Delivers the outbox (docs/webhooks.md). Any number of processes may run one over the same
 * database: a delivery is claimed in a short transaction (FOR UPDATE SKIP LOCKED) that moves its
 * next attempt a lease ahead, then sent outside any transaction, then its outcome recorded. A process
 * that dies mid-attempt leaves the lease to run out, and another (or it, restarted) sends again:
 * at least once, with the same webhook-id. Woken by the commits' NOTIFY, and by a timer for retries
 * that come due and notifications a lost listening connection missed.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = true;
  private readonly inFlight = new Set<Promise<void>>();
  private lastRetention = 0;

  /**
   * `tenantId`: deliver only that tenant's deliveries (a test among others on one database, which
   * must neither send nor wait on theirs); absent, every tenant's, as `serve` does.
   */
  constructor(
    private readonly core: Core,
    private readonly options: { tenantId?: string } = {},
  ) {}

  private get settings() {
    return this.core.config.webhooks;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** A commit queued deliveries (or a delivery finished): look for due ones now. */
  wake(): void {
    if (this.stopped) return;
    this.again = true;
    if (!this.running) void this.pump();
  }

  /**
   * Stops claiming, and waits a little for the attempts under way: one not recorded by then is sent
   * again after its lease, by whichever process runs next (at least once).
   */
  async stop(waitMs = STOP_WAIT_MS): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.all([...this.inFlight]), waited]);
    clearTimeout(timer);
  }

  private async pump(): Promise<void> {
    this.running = true;
    clearTimeout(this.timer);
    let delay = this.settings.pollMs;
    try {
      while (this.again && !this.stopped) {
        this.again = false;
        await this.retain();
        const room = this.settings.concurrency - this.inFlight.size;
        if (room <= 0) break;
        const claimed = await this.claim(room);
        for (const delivery of claimed) this.track(this.attempt(delivery));
        if (claimed.length === room) this.again = true;
      }
      delay = await this.untilNextDue();
    } catch (error) {
      this.core.log.warn({ err: error }, 'webhook dispatch failed; it is tried again shortly');
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    // Full: each attempt that ends wakes it. Woken while finishing (a commit, an attempt done): go
    // again rather than wait for the timer.
    if (this.inFlight.size >= this.settings.concurrency) return;
    if (this.again) {
      void this.pump();
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => this.core.log.warn({ err: error }, 'recording a webhook attempt failed'))
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wake();
      });
    this.inFlight.add(tracked);
  }

  /** Claims and sends every due delivery, and waits for them: for tests and the command line. */
  async drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claimed = await this.claim(this.settings.concurrency);
      if (claimed.length === 0) return sent;
      await Promise.all(claimed.map((d) => this.attempt(d)));
      sent += claimed.length;
    }
  }

  /** The sooner of the poll interval and the next pending delivery's time. */
  private async untilNextDue(): Promise<number> {
    // A disabled endpoint's deliveries wait for it to be enabled, not for their time.
    let query = this.core.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', (j) =>
        j.onRef('e.tenant_id', '=', 'd.tenant_id').onRef('e.id', '=', 'd.endpoint_id'),
      )
      .select((eb) => eb.fn.min('d.next_attempt_at').as('at'))
      .where('d.status', '=', 'pending')
      .where('e.enabled', '=', true);
    if (this.options.tenantId) query = query.where('d.tenant_id', '=', this.options.tenantId);
    const next = await query.executeTakeFirst();
    const at = next?.at ? new Date(next.at).getTime() : Infinity;
    return Math.max(10, Math.min(this.settings.pollMs, at - this.core.clock().getTime()));
  }

  /**
   * Up to `limit` due deliveries of enabled endpoints, each leased to this process. Tenant by
   * tenant, so that on Citus every locking statement is one tenant's, on one node.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = this.core.clock();
    const only = this.options.tenantId;
    const tenants = only
      ? [{ tenant_id: only }]
      : await this.core.db
          .selectFrom('webhook_deliveries as d')
          .innerJoin('webhook_endpoints as e', (j) =>
            j.onRef('e.tenant_id', '=', 'd.tenant_id').onRef('e.id', '=', 'd.endpoint_id'),
          )
          .select('d.tenant_id')
          .distinct()
          .where('d.status', '=', 'pending')
          .where('d.next_attempt_at', '<=', now)
          .where('e.enabled', '=', true)
          .limit(limit)
          .execute();
    const claimed: Claimed[] = [];
    for (const { tenant_id } of tenants) {
      if (claimed.length >= limit) break;
      claimed.push(...(await this.claimTenant(tenant_id, limit - claimed.length, now)));
    }
    return claimed;
  }

  private claimTenant(tenantId: string, limit: number, now: Date): Promise<Claimed[]> {
    const leaseUntil = new Date(now.getTime() + this.settings.timeoutMs + LEASE_MARGIN_MS);
    return this.core.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as e', (j) =>
          j.onRef('e.tenant_id', '=', 'd.tenant_id').onRef('e.id', '=', 'd.endpoint_id'),
        )
        .select(['d.tenant_id', 'd.endpoint_id', 'd.id', 'd.payload', 'd.attempts', 'e.url', 'e.secret'])
        .where('d.tenant_id', '=', tenantId)
        .where('d.status', '=', 'pending')
        .where('d.next_attempt_at', '<=', now)
        .where('e.enabled', '=', true)
        .orderBy('d.next_attempt_at')
        .limit(limit)
        .forUpdate('d')
        .skipLocked()
        .execute();
      for (const row of rows) {
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({ attempts: eb('attempts', '+', 1), last_attempt_at: now, next_attempt_at: leaseUntil }))
          .where('tenant_id', '=', tenantId)
          .where('endpoint_id', '=', row.endpoint_id)
          .where('id', '=', row.id)
          .execute();
      }
      return rows.map((r) => ({ ...r, attempts: r.attempts + 1 }));
    });
  }

  private async attempt(delivery: Claimed): Promise<void> {
    const result = await sendWebhook(
      { url: delivery.url, secret: delivery.secret, id: delivery.id, body: JSON.stringify(delivery.payload) },
      { allowPrivate: this.settings.allowPrivate, timeoutMs: this.settings.timeoutMs, now: this.core.clock() },
    );
    await this.record(delivery, result);
  }

  /** The attempt's outcome; after the last failed attempt, the delivery fails, and so may its endpoint. */
  private async record(delivery: Claimed, result: Attempt): Promise<void> {
    const now = this.core.clock();
    const { tenant_id: tenantId, endpoint_id: endpointId, id } = delivery;
    await this.core.db.transaction().execute(async (trx) => {
      const row = (q: ReturnType<typeof trx.updateTable<'webhook_deliveries'>>) =>
        q.where('tenant_id', '=', tenantId).where('endpoint_id', '=', endpointId).where('id', '=', id);
      const endpoint = (q: ReturnType<typeof trx.updateTable<'webhook_endpoints'>>) =>
        q.where('tenant_id', '=', tenantId).where('id', '=', endpointId);
      if (result.ok) {
        await row(trx.updateTable('webhook_deliveries'))
          .set({ status: 'delivered', delivered_at: now, last_status_code: result.statusCode, last_error: null })
          .execute();
        await endpoint(trx.updateTable('webhook_endpoints'))
          .set({ last_success_at: now, failing_since: null })
          .execute();
        return;
      }
      const delay = retryDelayMs(this.settings.retryScheduleMs, delivery.attempts);
      await row(trx.updateTable('webhook_deliveries'))
        .set({
          last_status_code: result.statusCode,
          last_error: result.error,
          ...(delay === undefined
            ? { status: 'failed' as const }
            : { next_attempt_at: new Date(now.getTime() + delay) }),
        })
        .execute();
      const failing = await endpoint(trx.updateTable('webhook_endpoints'))
        .set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', eb.val(now)) }))
        .returning(['failing_since', 'enabled'])
        .executeTakeFirst();
      if (delay !== undefined || !failing?.enabled || !failing.failing_since) return;
      // The delivery has spent its schedule, and the endpoint has not answered one delivery well
      // for at least as long: it is down, not choosy about one event. Disabled, and it says why.
      // The schedule's length as its jittered waits may have made it: at their shortest, so that an
      // endpoint whose every wait came out short is still judged by the delivery that spent them.
      const span = this.settings.retryScheduleMs.reduce((a, b) => a + b, 0) * (1 - JITTER);
      const since = new Date(failing.failing_since);
      if (now.getTime() - since.getTime() < span) return;
      await endpoint(trx.updateTable('webhook_endpoints'))
        .set({
          enabled: false,
          disabled_at: now,
          disabled_reason:
            `disabled by the service: every delivery has failed since ${since.toISOString()}, and event ${id} ` +
            `failed all ${delivery.attempts} attempts (last: ${result.error ?? 'no answer'}). ` +
            'Fix the receiver, then enable the endpoint again: its pending deliveries resume.',
        })
        .execute();
      this.core.log.warn({ tenantId, endpointId, since }, 'a webhook endpoint failing for too long was disabled');
    });
  }

  /** Removes finished deliveries older than the retention, every ten minutes at most. */
  private async retain(): Promise<void> {
    const now = this.core.clock().getTime();
    if (now - this.lastRetention < RETENTION_EVERY_MS) return;
    this.lastRetention = now;
    await this.core.db
      .deleteFrom('webhook_deliveries')
      .where('status', '<>', 'pending')
      .where('created_at', '<', new Date(now - this.settings.retentionMs))
      .execute();
  }
}
