import pg from 'pg';
import type { Logger } from 'pino';

/** How long a lost LISTEN connection waits before it is opened again. */
const RECONNECT_MS = 1_000;

export type Unlisten = () => Promise<void>;

/**
 * LISTEN on Postgres over a connection of its own, outside the pool (a pooled connection is handed
 * to other work between queries). A lost connection is opened again; what was notified meanwhile
 * is not heard, which a subscriber can only learn by reading again.
 */
export async function listenPostgres(
  url: string,
  channel: string,
  onPayload: (payload: string | undefined) => void,
  log: Pick<Logger, 'warn'> | undefined,
): Promise<Unlisten> {
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    let lost = false;
    const reopen = (error?: Error) => {
      if (lost || closed) return;
      lost = true;
      log?.warn({ err: error }, 'the change notification connection was lost; it is opened again');
      void next.end().catch(() => undefined);
      timer = setTimeout(() => void open().catch(() => reopen()), RECONNECT_MS);
      timer.unref();
    };
    next.on('error', reopen);
    next.on('end', () => reopen());
    next.on('notification', (message) => {
      if (message.channel === channel) onPayload(message.payload);
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      reopen(error as Error);
      throw error;
    }
  };

  await open();
  return async () => {
    closed = true;
    clearTimeout(timer);
    await client?.end().catch(() => undefined);
  };
}
