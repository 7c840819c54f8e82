// How the server has V8 run its code (docs/benchmarks.md, "Compiled to the baseline tier at once" and "V8's
// background threads never before a call"): functions compiled to Sparkplug from their first call, set from
// inside the process (src/process/compile-tier.ts), in the server and in its spawner helper; and V8's platform
// workers on SCHED_IDLE once the warm-up is done (src/process/background-threads.ts), every other thread as it was.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { v8PoolSize, v8Workers, type ThreadState } from '../../src/process/background-threads.js';
import { COMPILE_FLAGS } from '../../src/process/compile-tier.js';
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

/** Each thread of `pid`: id, name and scheduling policy (0 SCHED_OTHER, 5 SCHED_IDLE). */
function threadsOf(pid: number): Array<{ tid: number; comm: string; policy: number }> {
  return readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .sort((a, b) => a - b)
    .map((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      // Field 41 of stat (policy); fields counts from field 3.
      return { tid, comm, policy: Number(fields[41 - 3]) };
    });
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

describe('the compile tier', () => {
  it('compileToBaseline, called from inside the process, gives a function baseline code at its first call', () => {
    expect(statusAfterOneCall('') & BASELINE_BIT).toBe(0);
    expect(statusAfterOneCall('compileToBaseline();') & BASELINE_BIT).toBe(BASELINE_BIT);
  });
});

const t = (tid: number, wait: string, comm = 'node'): ThreadState => ({ tid, comm, wait });

describe("telling V8's platform workers apart", () => {
  // As Node 20 starts: main, the delayed-task thread (epoll), 4 workers on one condition variable (glibc sleeps
  // its waiters on one of two adjacent words), another thread, 4 libuv workers on theirs.
  const node20 = [
    t(100, '232 0xd'),
    t(101, '281 0x9'),
    t(102, '202 0x26fe6364'),
    t(103, '202 0x26fe6364'),
    t(104, '202 0x26fe6360'),
    t(105, '202 0x26fe6360'),
    t(106, '202 0x5660460'),
    t(107, '202 0x566f9c8'),
    t(108, '202 0x566f9c8'),
    t(109, '202 0x566f9cc'),
    t(110, '202 0x566f9cc'),
  ];

  it('finds the workers of the Node 20 and Node 22 layouts, one of them busy', () => {
    expect(v8Workers(node20, 100, 4)).toEqual([102, 103, 104, 105]);
    const node22 = node20.map((x, i) =>
      i === 1 ? { ...x, comm: 'DelayedTaskSche' } : i >= 7 ? { ...x, comm: 'libuv-worker' } : x,
    );
    expect(v8Workers(node22, 100, 4)).toEqual([102, 103, 104, 105]);
    const busy = node20.map((x) => (x.tid === 104 ? { ...x, wait: 'running' } : x));
    expect(v8Workers(busy, 100, 4)).toEqual([102, 103, 104, 105]);
  });

  it('leaves everything alone when the layout is another', () => {
    // Not this process, or too few threads.
    expect(v8Workers(node20, 99, 4)).toBeUndefined();
    expect(v8Workers(node20.slice(0, 4), 100, 4)).toBeUndefined();
    // A pool size of 0 (Node's own pick) is not known.
    expect(v8Workers(node20, 100, undefined)).toBeUndefined();
    // The candidates wait on two different condition variables (the pool is not where it was expected).
    expect(v8Workers(node20, 100, 6)).toBeUndefined();
    // Their condition variable is also waited on further on (the pool is larger than said).
    expect(v8Workers(node20, 100, 2)).toBeUndefined();
    // Every candidate busy: nothing to compare.
    const allBusy = node20.map((x) => (x.tid >= 102 && x.tid <= 105 ? { ...x, wait: 'running' } : x));
    expect(v8Workers(allBusy, 100, 4)).toBeUndefined();
    // A libuv worker among them.
    const libuv = node20.map((x) => (x.tid === 103 ? { ...x, comm: 'libuv-worker' } : x));
    expect(v8Workers(libuv, 100, 4)).toBeUndefined();
  });

  it('takes the pool size from --v8-pool-size, in the arguments or NODE_OPTIONS', () => {
    expect(v8PoolSize([], undefined)).toBe(4);
    expect(v8PoolSize(['--v8-pool-size=2'], undefined)).toBe(2);
    expect(v8PoolSize([], '--max-old-space-size=100 --v8-pool-size=6')).toBe(6);
    expect(v8PoolSize(['--v8-pool-size=0'], undefined)).toBeUndefined();
  });
});

describe('a served server', () => {
  it("runs V8's workers on SCHED_IDLE after its warm-up, every other thread as before, and a helper compiled to baseline", async () => {
    const srv = await startServer({ workspace: ws.dir, env: { SERVICE_LOG_LEVEL: 'debug' } });
    try {
      expect(await waitFor(() => srv.stderr().includes('warm-up done')), srv.stderr()).toBe(true);
      const pid = srv.proc.pid as number;
      const line = /V8's background threads (\{.*\})/.exec(srv.stderr());
      expect(line, srv.stderr()).not.toBeNull();
      const outcome = JSON.parse((line as RegExpExecArray)[1] as string) as { idle?: number[] };
      const threads = threadsOf(pid);
      // The main thread and the delayed-task thread stay as they were.
      expect(threads[0]).toMatchObject({ tid: pid, policy: 0 });
      expect(threads[1]?.policy).toBe(0);
      const idle = threads.filter((x) => x.policy === 5).map((x) => x.tid);
      expect(idle).toEqual(outcome.idle);
      // The platform's workers: the 4 threads after the delayed-task thread, and no libuv worker among them.
      expect(idle).toEqual(threads.slice(2, 6).map((x) => x.tid));
      expect(threads.filter((x) => x.comm === 'libuv-worker' && x.policy !== 0)).toEqual([]);
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
