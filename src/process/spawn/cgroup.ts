// One command's pids cgroup (docs/security-model.md, "a command tree's process count is bounded"): created
// just before the spawn, with the spawning process (on cgroup v1 its spawning thread alone) moved into it for
// the duration of the fork so the child is born inside (no window in which it could fork outside), then moved
// back. Two small writes and a mkdir per command; the cgroup is removed once the command has ended. Runs in the spawner helper and in the server
// (PTY commands); imports only node:fs so the helper stays light. Probing which hierarchy to use lives in
// pids-limit.ts.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';

/** Where a command's cgroup goes: `dir` is created; `home` is the spawning process's own cgroup. */
export interface CgroupTarget {
  dir: string;
  home: string;
  max: number;
}

/**
 * Move this process into a fresh cgroup limited to `t.max` tasks for its children, so what it forks next is
 * born inside; false (and nothing left behind) when the host refuses. Where the hierarchy has a `tasks` file
 * (cgroup v1) only the calling thread moves ('0' names it): the kernel then skips the lock that moving a whole
 * process takes, whose first taking after ~20 ms without one waits for a grace period (6–11 ms here, on this
 * thread; measured in docs/benchmarks.md), and a child forked by this thread is born in this thread's cgroup.
 */
export function enterCgroup(t: CgroupTarget): boolean {
  let entered = false;
  const byThread = movesThread(t.home);
  try {
    mkdirSync(t.dir);
    // While this process (or this thread) sits in the cgroup it counts too: allow it on top, then lower the
    // limit once it has left, so the command's tree never gets more than `max`.
    writeFileSync(`${t.dir}/pids.max`, String(t.max + (byThread ? 1 : threadCount(process.pid))));
    if (byThread) writeFileSync(`${t.dir}/tasks`, '0');
    else writeFileSync(`${t.dir}/cgroup.procs`, String(process.pid));
    entered = true;
  } catch {
    if (!entered) removeCgroup(t.dir);
  }
  return entered;
}

/** Per home cgroup: whether its hierarchy moves one thread at a time (a `tasks` file: cgroup v1). */
const threadMoves = new Map<string, boolean>();

export function movesThread(home: string): boolean {
  let v = threadMoves.get(home);
  if (v === undefined) threadMoves.set(home, (v = existsSync(`${home}/tasks`)));
  return v;
}

/**
 * Move `pid` — a process that forks nothing until it is told to (wb-exec waiting for its request) — into a
 * fresh cgroup limited to `t.max` tasks, with the write on a thread of the pool: the kernel may hold that
 * write for a grace period (up to ~15 ms after a quiet spell), which then blocks no one's thread. Resolves
 * whether it moved (nothing left behind when not).
 */
export async function moveIntoCgroup(t: CgroupTarget, pid: number): Promise<boolean> {
  try {
    mkdirSync(t.dir);
  } catch {
    return false;
  }
  try {
    writeFileSync(`${t.dir}/pids.max`, String(t.max));
    await writeFile(`${t.dir}/cgroup.procs`, String(pid));
    return true;
  } catch {
    removeCgroup(t.dir);
    return false;
  }
}

/** Move this process (or thread, enterCgroup) back to its home cgroup and give the command's cgroup its real limit. */
export function leaveCgroup(t: CgroupTarget): void {
  try {
    if (movesThread(t.home)) writeFileSync(`${t.home}/tasks`, '0');
    else writeFileSync(`${t.home}/cgroup.procs`, String(process.pid));
    writeFileSync(`${t.dir}/pids.max`, String(t.max));
  } catch {
    /* cannot leave: the limit still holds for the children, and this process is counted in it */
  }
}

/** Run `spawn` with this process inside a fresh cgroup limited to `t.max` tasks for its children. */
export function spawnInCgroup<T>(t: CgroupTarget, spawn: () => T): { result: T; limited: boolean } {
  if (!enterCgroup(t)) return { result: spawn(), limited: false };
  try {
    return { result: spawn(), limited: true };
  } finally {
    leaveCgroup(t);
  }
}

function threadCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 64;
  }
}

/** Whether forks in this cgroup were refused because the limit was reached. */
export function hitLimit(dir: string): boolean {
  try {
    const m = /^max (\d+)/m.exec(readFileSync(`${dir}/pids.events`, 'latin1'));
    return m !== null && Number(m[1]) > 0;
  } catch {
    return false;
  }
}

/**
 * SIGKILL every process in the cgroup (cgroup.kill on v2; on v1 each listed pid, a few rounds, since a fork
 * may land between the read and the kill). Catches what no process group or parent link reaches, e.g. a
 * sandbox whose bwrap died while it was still being set up.
 */
export function killCgroup(dir: string): void {
  try {
    writeFileSync(`${dir}/cgroup.kill`, '1');
    return;
  } catch {
    /* v1, or an older v2 kernel */
  }
  for (let round = 0; round < 8; round++) {
    let pids: string[];
    try {
      pids = readFileSync(`${dir}/cgroup.procs`, 'latin1').split('\n').filter(Boolean);
    } catch {
      return;
    }
    if (!pids.length) return;
    for (const p of pids) {
      try {
        process.kill(Number(p), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
}

const RELEASE_RETRIES = 20;
const RELEASE_RETRY_MS = 250;

/**
 * Remove the cgroup once its last process is gone (the ones killed at exit may take a moment). Deferred, so
 * the exit is reported first: an rmdir in cgroupfs costs a tenth of a millisecond.
 */
export function releaseCgroup(dir: string, tries = RELEASE_RETRIES): void {
  setImmediate(() => {
    if (removeCgroup(dir) || tries <= 0) return;
    setTimeout(() => releaseCgroup(dir, tries - 1), RELEASE_RETRY_MS).unref();
  });
}

function removeCgroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
