import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The test files that take 5 s or more, with their seconds in a full run (test/durations.json, refreshed by
 * hand from a JSON report when it drifts): started first, longest first, so the workers end together
 * instead of one finishing a long file alone at the end (a fresh clone has no cache of earlier durations).
 */
const DURATIONS: Record<string, number> = JSON.parse(
  readFileSync(path.join(import.meta.dirname, 'test/durations.json'), 'utf8'),
);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const seconds = (f: TestSpecification) =>
      DURATIONS[
        path
          .relative(import.meta.dirname, f.moduleId)
          .split(path.sep)
          .join('/')
      ] ?? 0;
    // Stable: files without a duration keep the order the base sequencer gave them, after the long ones.
    return base
      .map((f, i) => ({ f, i, s: seconds(f) }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .map((x) => x.f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous for a loaded 2-core machine: a timeout only ends a hung test, tests wait on events.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Three forks on two cores: a file often waits (process starts, servers, disks, timers) with a core idle, so a
    // third fork ended a mixed subset of 39 files 14 % sooner (docs/development.md); every test waits on events,
    // none needs a core to itself.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
  },
});
