/**
 * Bulk writes (a batch's groups, an import's chunks, and the jobs that run them) give way to
 * recalls in flight in this process.
 *
 * Why: a batch of 500 keeps several connections busy with large statements and the event loop busy
 * between them; on a machine of few cores a recall arriving meanwhile waits for a core at every one
 * of its statements, and its p99 was 3 to 6 times its idle p99 (docs/benchmarks.md, Bulk stores).
 * A recall is short and someone waits for it; a bulk write is long and nobody minds it taking a
 * little longer. So recall counts itself in flight, and bulk work, before each of its statements
 * (its natural yield points: nothing is held but its own transaction's locks, which recall never
 * waits for), waits while any recall is in flight.
 *
 * Why bounded: under a steady stream of recalls, in-flight may never fall to zero; a bulk step
 * waits at most BULK_YIELD_MS (docs/configuration.md) and then goes ahead, so a batch slows under recall load but never
 * starves. Why only in this process: the counter is free and exact here, while a count shared
 * through the database would cost a statement per recall; processes sharing a database each give
 * way to their own recalls, which is where the event loop is shared too.
 *
 * A counter, not a lock: recalls never wait for each other or for the gate.
 */

import type { Config } from '../config.js';

let inFlight = 0;
/** Bulk steps waiting for the recalls in flight to end: woken together when none is left. */
let waiting: (() => void)[] = [];
/** Bulk steps that have waited since the process started. */
let waited = 0;

/** Runs a recall counted in flight, so that bulk steps give way to it until it ends. */
export async function asRecall<T>(work: () => Promise<T>): Promise<T> {
  inFlight++;
  try {
    return await work();
  } finally {
    inFlight--;
    if (inFlight === 0) {
      const woken = waiting;
      waiting = [];
      for (const wake of woken) wake();
    }
  }
}

/** The recalls in flight in this process now, and the bulk steps waiting for them to end. */
export function gateState(): { recalls: number; waiting: number; waited: number } {
  return { recalls: inFlight, waiting: waiting.length, waited };
}

/**
 * Before one step of bulk work: waits until no recall is in flight, or `maxMs` at most. Answers
 * whether it waited. Free when no recall runs. Call it where the work holds nothing a recall
 * needs: between statements, and between items judged in memory, which otherwise keep the event
 * loop from the recall's own statements' answers for the length of a group.
 */
export async function yieldToRecalls(maxMs: number): Promise<boolean> {
  if (inFlight === 0 || maxMs <= 0) return false;
  waited++;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      // Gone ahead: no longer among those to wake.
      waiting = waiting.filter((w) => w !== wake);
      resolve();
    }, maxMs);
    const wake = () => {
      clearTimeout(timer);
      resolve();
    };
    waiting.push(wake);
  });
  return true;
}

/**
 * How long a bulk step inside a transaction may wait for recalls: `bulkYieldMs` on Postgres, where
 * a recall runs on a connection of its own meanwhile, and 0 on the embedded database. There the one
 * connection is the transaction's, so a recall in flight is waiting for it: waiting inside would
 * only stall both, one step after another (recall's p99 under a batch of 500 was 1.5 s). Steps
 * before a transaction give way on every engine.
 */
export function inTransactionYieldMs(config: Pick<Config, 'bulkYieldMs' | 'databaseUrl'>): number {
  return config.databaseUrl === undefined ? 0 : config.bulkYieldMs;
}
