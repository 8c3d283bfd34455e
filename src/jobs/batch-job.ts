import type { z } from 'zod';
import { storeBatchItems } from './batch-items.js';
import type { StoreBatchResponse } from '../schemas/objects.js';
import type { JobKind } from './kind.js';

/** A batch job's input: the items of the request, as sent (each is checked when the job runs). */
export interface BatchJobInput {
  items: unknown[];
}

type Result = z.input<typeof StoreBatchResponse>;

export const batchJob: JobKind<BatchJobInput, Result> = {
  // Run again from the start, a batch would reinforce what the first run stored: a batch whose
  // process died is failed with job_interrupted instead (docs/api.md, Jobs).
  resumable: () => false,
  run: async ({ core, actor, input, progress }) => {
    await progress({ items: input.items.length, items_done: 0 });
    const result = await storeBatchItems(core, actor, input.items);
    await progress({ items: input.items.length, items_done: input.items.length });
    return result;
  },
  counts: (result) => {
    const counts = { items: result.results.length, created: 0, reinforced: 0, promoted: 0, failed: 0 };
    for (const r of result.results) {
      if ('problem' in r) counts.failed++;
      else if (r.outcome !== undefined) counts[r.outcome]++;
    }
    return counts;
  },
};
