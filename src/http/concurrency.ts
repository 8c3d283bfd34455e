import type { ConcurrencyConfig } from '../config.js';
import { RateLimitedError } from '../access/rate-limit.js';
import { UnavailableError } from '../errors.js';
import { BUSY_RETRY_SECONDS } from './spool.js';

/**
 * How many requests of one kind (imports, exports) run at once, per tenant and in all. Over the
 * tenant's share is the tenant's own doing (429); over the server's is everyone's (503). Both are
 * answered at once, before the request holds anything, with the seconds to wait.
 */
export class ConcurrencyGate {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(
    private readonly what: string,
    private readonly limits: ConcurrencyConfig,
    private readonly settings: { perTenant: string; inAll: string },
  ) {}

  /** Takes a turn for the tenant; answers the function that gives it back (once). */
  enter(tenantId: string): () => void {
    const mine = this.byTenant.get(tenantId) ?? 0;
    if (mine >= this.limits.perTenant) {
      throw new RateLimitedError(
        BUSY_RETRY_SECONDS,
        `this tenant already runs ${mine} ${this.what} (${this.settings.perTenant}); retry when one has ended`,
      );
    }
    if (this.total >= this.limits.inAll) {
      throw new UnavailableError(
        `the server already runs ${this.total} ${this.what} (${this.settings.inAll}); retry later`,
        BUSY_RETRY_SECONDS,
      );
    }
    this.total++;
    this.byTenant.set(tenantId, mine + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.total--;
      const now = (this.byTenant.get(tenantId) ?? 1) - 1;
      if (now === 0) this.byTenant.delete(tenantId);
      else this.byTenant.set(tenantId, now);
    };
  }
}
