// V8's background threads run at the lowest priority, SCHED_IDLE (docs/benchmarks.md, "V8's background threads
// never before a call"): they compile hot functions with TurboFan and help the garbage collector, work no call
// waits for. At the default priority a compile of a few milliseconds, started in a fresh server's first calls,
// took a CPU of two from the thread answering the call or from the thread-pool thread doing its file I/O
// (apply_patch: 6–8 ms instead of ~3 under `npm run`); a nice value of 19 did not stop it, since the scheduler
// lets a running thread finish its slice. A SCHED_IDLE thread gives way to any other the moment it wakes.
// Where the CPUs have nothing else to do they run as before; what V8 does not get done in the background its
// main thread does itself.
//
// Node does not name these threads (Node 22 names only DelayedTaskScheduler and libuv-worker), so they are told
// apart by the layout Node 20 and 22 start with (node_platform.cc): the main thread, the platform's delayed-task
// thread, then the platform's workers (--v8-pool-size, 4 by default), waiting on one condition variable. Any
// other layout leaves every thread as it was.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { findExecutable } from './spawn/spawn.js';

/** One thread of this process as /proc shows it: its id, its name, and the first two fields of its `syscall`. */
export interface ThreadState {
  tid: number;
  comm: string;
  /** e.g. "202 0x55d0c3a0" (futex on that word), or "running". */
  wait: string;
}

/** The threads of this process, by id ascending; [] where /proc cannot be read. */
export function ownThreads(): ThreadState[] {
  const base = '/proc/self/task';
  let tids: number[];
  try {
    tids = readdirSync(base)
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
  return tids.map((tid) => {
    const read = (f: string) => {
      try {
        return readFileSync(`${base}/${tid}/${f}`, 'latin1').trim();
      } catch {
        return '';
      }
    };
    return { tid, comm: read('comm'), wait: read('syscall').split(' ').slice(0, 2).join(' ') };
  });
}

/** How many workers Node gave V8's platform: --v8-pool-size, else Node's default of 4; undefined for 0 (Node's own pick). */
export function v8PoolSize(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)]
    .map((a) => /^--v8-pool-size=(\d+)$/.exec(a)?.[1])
    .filter((n) => n !== undefined);
  const n = given.length ? Number(given[given.length - 1]) : 4;
  return n > 0 ? n : undefined;
}

/**
 * The ids of V8's platform workers among `threads` (ownThreads of a process whose main thread is `mainTid`), of
 * which there are `pool`: the threads right after the delayed-task thread. Told apart by what they wait on: every
 * one of them not busy just then waits on one condition variable, which no other thread waits on, and none is
 * libuv's.
 * Undefined when the layout is not that one.
 */
export function v8Workers(
  threads: readonly ThreadState[],
  mainTid: number,
  pool: number | undefined,
): number[] | undefined {
  const [main, delayed] = threads;
  if (pool === undefined || main?.tid !== mainTid || !delayed || threads.length < 2 + pool) return undefined;
  const run = threads.slice(2, 2 + pool);
  const waits = run.map((t) => condition(t.wait)).filter((w) => w !== undefined);
  const word = waits[0];
  if (word === undefined || waits.some((w) => w !== word)) return undefined;
  const others = [delayed, ...threads.slice(2 + pool)];
  if (others.some((t) => condition(t.wait) === word) || run.some((t) => t.comm === 'libuv-worker'))
    return undefined;
  return run.map((t) => t.tid);
}

/**
 * The condition variable a thread waits on, from its `syscall` fields (a futex wait shows its number and the
 * word's address; a thread busy just now shows neither): glibc's waiters sleep on one of two adjacent words of
 * the condition variable, so the 8-byte block they share names it.
 */
function condition(wait: string): string | undefined {
  const m = /^(\d+) 0x([0-9a-f]+)$/.exec(wait);
  return m ? `${m[1]} ${(BigInt(`0x${m[2]}`) >> 3n).toString(16)}` : undefined;
}

/** chrt of util-linux, from the system's own directories only (never a PATH a workspace could put first). */
function chrt(): string | undefined {
  return findExecutable('chrt', '/usr/bin:/bin');
}

export type IdleOutcome = { idle: number[] } | { skipped: string };

/**
 * Puts this process's V8 platform workers on SCHED_IDLE (`chrt --idle --pid 0 TID`, one thread each);
 * `nodeOptions`: the NODE_OPTIONS this process started with. Resolves which threads, or why none. Never throws;
 * a thread chrt could not move stays as it was.
 */
export async function idleV8Workers(nodeOptions: string | undefined): Promise<IdleOutcome> {
  if (process.platform !== 'linux') return { skipped: 'not Linux' };
  const bin = chrt();
  if (!bin) return { skipped: 'no chrt in /usr/bin or /bin (util-linux)' };
  const workers = v8Workers(ownThreads(), process.pid, v8PoolSize(process.execArgv, nodeOptions));
  if (!workers?.length) return { skipped: "V8's worker threads were not told apart from the others" };
  const moved = await Promise.all(
    workers.map(
      (tid) =>
        new Promise<number | undefined>((resolve) =>
          execFile(bin, ['--idle', '--pid', '0', String(tid)], { timeout: 5000 }, (e) =>
            resolve(e ? undefined : tid),
          ),
        ),
    ),
  );
  const idle = moved.filter((t) => t !== undefined);
  return idle.length ? { idle } : { skipped: 'chrt refused every thread' };
}
