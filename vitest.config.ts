import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous for a loaded 2-core machine: a timeout only ends a hung test, tests wait on events (issue 9).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: keep parallelism modest.
    maxWorkers: 2,
  },
});
