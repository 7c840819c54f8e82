// How the server has V8 run its code (docs/benchmarks.md, "Compiled to the baseline tier at once"): functions
// compiled to Sparkplug from their first call, set from inside the process (src/process/compile-tier.ts), in the
// server and in its spawner helper.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPILE_FLAGS, PATH_HELPER_CALLS } from '../../src/process/compile-tier.js';
import { waitFor } from '../exec/exec-support.js';
import { REPO_ROOT, startServer } from '../helpers/server.js';
import { makeWorkspace } from '../helpers/workspace.js';

const ws = makeWorkspace({ 'README.md': '# threads\n' });
afterAll(() => ws.cleanup());

/** V8's optimization status bit for a function that has baseline (Sparkplug) code. */
const BASELINE_BIT = 1 << 15;

/** The status bits of a function called once, in a fresh node that first runs `before`. */
function statusAfterOneCall(before: string): number {
  const tier = path.join(REPO_ROOT, 'dist/process/compile-tier.js');
  const script = [
    `import { compileToBaseline } from ${JSON.stringify(tier)};`,
    before,
    'const f = function (a) { return a + 1; };',
    'f(1);',
    'console.log(%GetOptimizationStatus(f));',
  ].join('\n');
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout.trim());
}

/** The children of `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * Whether node:path's `resolve`, in a fresh node, is compiled by TurboFan (or on its way) after warmPathHelpers
 * (waiting for the concurrent compile to be installed: the ceiling only ends a hung test), or after ten calls.
 */
function resolveOptimized(warm: boolean): boolean {
  const tier = path.join(REPO_ROOT, 'dist/process/compile-tier.js');
  // Status bits: kOptimized 16, kTurboFanned 64; marked 256 / 512, compiling 1024.
  const script = [
    `import path from 'node:path';`,
    `import { warmPathHelpers } from ${JSON.stringify(tier)};`,
    'const status = () => %GetOptimizationStatus(path.resolve);',
    warm
      ? [
          `warmPathHelpers('/tmp/work');`,
          'const end = Date.now() + 60000;',
          'const tick = () => {',
          '  path.resolve("/tmp/work", "b.js");',
          '  if ((status() & (16 | 64)) !== 0 || Date.now() > end) return console.log((status() & (16 | 64)) !== 0);',
          '  setTimeout(tick, 10);',
          '};',
          'tick();',
        ].join('\n')
      : `for (let i = 0; i < 10; i++) path.resolve('/tmp/work', 'a.js');\nconsole.log((status() & (16 | 64 | 256 | 512 | 1024)) !== 0);`,
  ].join('\n');
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim() === 'true';
}

describe('the compile tier', () => {
  it('compileToBaseline, called from inside the process, gives a function baseline code at its first call', () => {
    expect(statusAfterOneCall('') & BASELINE_BIT).toBe(0);
    expect(statusAfterOneCall('compileToBaseline();') & BASELINE_BIT).toBe(BASELINE_BIT);
  });

  it(`warmPathHelpers (${PATH_HELPER_CALLS} calls) has V8 optimize path.resolve, which a few calls do not`, () => {
    expect(resolveOptimized(false)).toBe(false);
    expect(resolveOptimized(true)).toBe(true);
  });
});

describe('a served server', () => {
  it('starts its spawner helper with the compile flags', async () => {
    const srv = await startServer({ workspace: ws.dir, env: { SERVICE_LOG_LEVEL: 'info' } });
    try {
      expect(await waitFor(() => srv.stderr().includes('warm-up done')), srv.stderr()).toBe(true);
      const pid = srv.proc.pid as number;
      // The spawner helper, a child of the server, runs node with the compile flags.
      const cmdlines = childrenOf(pid).map((c) => readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0'));
      const helper = cmdlines.find((argv) => argv.some((a) => /spawner[-\w]*\.mjs$/.test(a)));
      expect(helper, JSON.stringify(cmdlines)).toBeDefined();
      for (const flag of COMPILE_FLAGS) expect(helper).toContain(flag);
    } finally {
      await srv.stop();
    }
  });
});
