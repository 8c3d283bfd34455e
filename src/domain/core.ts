import type { Logger } from 'pino';
import type { ContradictionDetector } from '../beliefs/contradiction-detector.js';
import type { Config } from '../config.js';
import { answers, type Db } from '../db/connect.js';
import type { Embedder } from '../embedding/embedder.js';
import type { ConversationExtractor } from '../extraction/extractor.js';
import type { LlmBreaker } from '../llm/breaker.js';
import type { Scope } from '../vocabulary.js';
import type { ChangeFeed } from './records/changes.js';
import type { DomainMetrics } from './records/metrics.js';
import type { ReadReplicas } from '../db/read-replicas.js';

export type Clock = () => Date;

/** Everything the domain needs, wired once in src/start-core.ts and passed down. */
export interface Core {
  readonly db: Db;
  readonly embedder: Embedder;
  readonly contradictions: ContradictionDetector;
  /** Reads facts out of conversations: Claude when configured, else (and on any failure) the heuristic. */
  readonly extractor: ConversationExtractor;
  readonly clock: Clock;
  /** The circuit breaker in front of the model, for /metrics; unset without a model. */
  readonly llm?: LlmBreaker | undefined;
  readonly config: Config;
  readonly log: Logger;
  /** Where the core reports its work for /metrics; absent, nothing is reported (src/measured.ts). */
  readonly metrics?: DomainMetrics | undefined;
  /** With DATABASE_READ_URL: which database recall reads (src/db/read-replicas.ts); absent, the primary. */
  readonly reads?: ReadReplicas | undefined;
  /** On Postgres, the tenant exports' own small pool (src/db/export-pool.ts); absent, exports read `db`. */
  readonly exportDb?: Db | undefined;
  /** Committed changes by tenant, as the database announces them (src/domain/records/changes.ts); absent, none are heard. */
  readonly changes?: ChangeFeed | undefined;
}

/** Who is acting: the tenant and key behind a request, resolved by authentication. */
export interface Actor {
  readonly tenantId: string;
  /** null for actions taken outside any key (setup from the command line). */
  readonly keyId: string | null;
  readonly scopes: ReadonlySet<Scope>;
  /**
   * The agents a key bound to agents may act as (src/domain/tenancy/agent-binding.ts). Absent or null: every
   * agent of the tenant, as for keys without a list, setup, the sweeper and stdio.
   */
  readonly agentIds?: ReadonlySet<string> | null;
}

/** Whether the core's (primary) database answers a trivial query now: /readyz. */
export function databaseAnswers(core: Core): Promise<boolean> {
  return answers(core.db);
}
