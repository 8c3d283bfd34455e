import { beforeAll } from 'vitest';
import { sharedRunning } from './harness.js';

/**
 * A setup file of the fast project: the worker's database starts (and migrates) in a hook,
 * under hookTimeout, not inside whichever test first asks for it, where on a busy machine two
 * workers starting their PGlite at once could use up that one test's timeout. Started once per
 * worker: later files find it running.
 */
beforeAll(async () => {
  await sharedRunning();
});
