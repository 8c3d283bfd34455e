import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Embedder } from '../embedding/embedder.js';

export type Clock = () => Date;

/** Everything the domain needs, wired once in src/main.ts and passed down. */
export interface Core {
  readonly db: Db;
  readonly embedder: Embedder;
  readonly clock: Clock;
  readonly config: Config;
  readonly log: Logger;
}

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is acting: the tenant and key behind a request, resolved by authentication. */
export interface Actor {
  readonly tenantId: string;
  /** null for actions taken outside any key (setup from the command line). */
  readonly keyId: string | null;
  readonly scopes: ReadonlySet<Scope>;
}
