import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Files in one worker share its database (each test makes its own tenant), which saves
    // starting an embedded Postgres per file.
    pool: 'forks',
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
