// One command's pids cgroup (docs/security-model.md, "a command tree's process count is bounded"): created
// just before the spawn, with the spawning process moved into it for the duration of the fork so the child is
// born inside (no window in which it could fork outside), then moved back. Two small writes and a mkdir per
// command; the cgroup is removed once the command has ended. Runs in the spawner helper and in the server
// (PTY commands); imports only node:fs so the helper stays light. Probing which hierarchy to use lives in
// pids-limit.ts.
import { mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';

/** Where a command's cgroup goes: `dir` is created; `home` is the spawning process's own cgroup. */
export interface CgroupTarget {
  dir: string;
  home: string;
  max: number;
}

/**
 * Move process `pid` (this one by default) into a fresh cgroup limited to `t.max` tasks for its children, so
 * what it forks next is born inside; false (and nothing left behind) when the host refuses.
 */
export function enterCgroup(t: CgroupTarget, pid = process.pid): boolean {
  let entered = false;
  try {
    mkdirSync(t.dir);
    // While the process sits in the cgroup its own threads count too: allow them on top, then lower the
    // limit once it has left, so the command's tree never gets more than `max`.
    writeFileSync(`${t.dir}/pids.max`, String(t.max + threadCount(pid)));
    writeFileSync(`${t.dir}/cgroup.procs`, String(pid));
    entered = true;
  } catch {
    if (!entered) removeCgroup(t.dir);
  }
  return entered;
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

/** Move `pid` back to its home cgroup and give the command's cgroup its real limit. */
export function leaveCgroup(t: CgroupTarget, pid = process.pid): void {
  try {
    writeFileSync(`${t.home}/cgroup.procs`, String(pid));
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
