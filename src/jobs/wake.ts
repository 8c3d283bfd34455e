/**
 * The runners of this process, woken when a request of this process queues a job, so that it
 * starts at once instead of at the next poll. Other processes find it when they poll.
 */
const sleepers = new Set<() => void>();

export function onJobSubmitted(wake: () => void): () => void {
  sleepers.add(wake);
  return () => sleepers.delete(wake);
}

export function wakeRunners(): void {
  for (const wake of sleepers) wake();
}
