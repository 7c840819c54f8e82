// A command's pids cgroup entered for its fork (src/process/spawn/cgroup.ts): on cgroup v1, where the hierarchy
// has a `tasks` file, only the calling thread moves in and back, and what it forks is born inside; the process's
// other threads (libuv's pool, V8's workers) never enter the command's cgroup, and the limit counts that one
// thread on top of the command's own. On cgroup v2 the whole process moves, as before. Real cgroups: it needs a
// pids hierarchy this process may write (root, or a delegated one).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { probeProcessLimit } from '../../src/process/commands/pids-limit.js';
import { enterCgroup, leaveCgroup, movesThread } from '../../src/process/spawn/cgroup.js';

const limiter = probeProcessLimit(7);
const usable = limiter.usesCgroup;
if (!usable) {
  const why = `the pids cgroup is not usable here (${limiter.status.reason})`;
  if (process.env.CI === 'true')
    throw new Error(`cgroup thread move needs a pids cgroup under CI=true, but ${why}`);
  console.log(`SKIP cgroup thread move: ${why}`);
}

/** The pids cgroup a /proc/…/cgroup text names (its path below the hierarchy's mount; v2: the one line). */
function pidsOf(text: string): string {
  const lines = text.split('\n');
  const line =
    lines.find((l) => /^\d+:([^:]*,)?pids(,[^:]*)?:/.test(l)) ?? lines.find((l) => l.startsWith('0::'));
  return line ? line.split(':').slice(2).join(':') : '';
}

const pidsPath = (file: string) => pidsOf(readFileSync(file, 'utf8'));

(usable ? describe : describe.skip)('a command cgroup entered for its fork', () => {
  afterAll(() => limiter.close());

  it('moves only the calling thread where the hierarchy has a tasks file, and the child is born inside', () => {
    const t = limiter.next()!;
    const home = pidsPath('/proc/thread-self/cgroup');
    const others = readdirSync('/proc/self/task').filter((tid) => tid !== String(process.pid));
    expect(others.length).toBeGreaterThan(0);
    expect(enterCgroup(t)).toBe(true);
    let inside: string;
    let child: string;
    let max: string;
    let otherPaths: string[];
    try {
      inside = pidsPath('/proc/thread-self/cgroup');
      otherPaths = others.map((tid) => pidsPath(`/proc/self/task/${tid}/cgroup`));
      child = pidsOf(spawnSync('cat', ['/proc/self/cgroup']).stdout.toString());
      max = readFileSync(`${t.dir}/pids.max`, 'utf8').trim();
    } finally {
      leaveCgroup(t);
    }
    expect(t.dir.endsWith(inside)).toBe(true);
    expect(inside).not.toBe(home);
    expect(child).toBe(inside);
    if (movesThread(t.home)) {
      // cgroup v1: the other threads stayed home, and the limit allowed this one thread on top.
      expect(otherPaths.every((p) => p === home)).toBe(true);
      expect(max).toBe(String(t.max + 1));
    } else expect(otherPaths.every((p) => p === inside)).toBe(true);
    expect(pidsPath('/proc/thread-self/cgroup')).toBe(home);
    expect(readFileSync(`${t.dir}/pids.max`, 'utf8').trim()).toBe(String(t.max));
  });
});
