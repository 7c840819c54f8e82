// The V8 flags the server runs with (src/cli/heap-flags.ts NODE_FLAGS, docs/operations.md#memory) are written in
// places that cannot import one another: the bin's shebang, package.json's `start` and the Dockerfile's
// ENTRYPOINT (the tunnel's server child and the relaunch use NODE_FLAGS itself). They must say the same. The soak
// benchmark passes none: it starts the server as `node dist/cli/main.js`, so it measures the server's own.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/cli/self.js';

const repo = path.resolve(__dirname, '../..');
const read = (f: string) => readFileSync(path.join(repo, f), 'utf8');
const flagsIn = (text: string) =>
  text.match(/--(?:max-semi-space-size|heap-growing-percent|optimize-for-size)[=\w]*/g) ?? [];

describe('the V8 flags of the server', () => {
  it('are the same in the shebang, npm start and the Dockerfile, and left to the server by the soak benchmark', () => {
    const want = [...NODE_FLAGS];
    expect(flagsIn(read('src/cli/main.ts').split('\n')[0] as string)).toEqual(want);
    expect(
      flagsIn((JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start),
    ).toEqual(want);
    const entry =
      read('Dockerfile')
        .split('\n')
        .find((l) => l.startsWith('ENTRYPOINT')) ?? '';
    expect(flagsIn(entry)).toEqual(want);
    expect(flagsIn(read('bench/soak.mjs').replace(/^\s*\/\/.*$/gm, ''))).toEqual([]);
  });
});
