/**
 * A time budget that aborts a signal, built only from a timer and a controller that the deadline
 * itself holds. Not AbortSignal.timeout or AbortSignal.any: on Node 20 a composite signal is held
 * weakly by its sources, so after a garbage collection its timeout can fire into nothing and a
 * request that never answers waits forever.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Whether the budget ran out (as opposed to the parent aborting). */
  hit(): boolean;
  /** Stops the timer and lets go of the parent; call it in a finally. */
  clear(): void;
}

export function startDeadline(timeoutMs: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  let hit = false;
  const timer = setTimeout(() => {
    hit = true;
    controller.abort();
  }, timeoutMs);
  const onParentAbort = (): void => controller.abort();
  if (parent?.aborted) controller.abort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    hit: () => hit,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
