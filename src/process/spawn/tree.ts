// Signalling a command's whole process tree. Pipes without a sandbox: the process group (kill(-pgid), one
// atomic call). A PTY without a sandbox: the session (the leader is a session leader), found in /proc, which
// also catches the job-control subgroups of an interactive shell. Inside bubblewrap the leader is the outer
// bwrap process: every process below bwrap's init (the whole PID namespace, whatever session or group it is
// in) is signalled, and bwrap is spared for every signal but SIGKILL: it would die of the signal and tear the
// sandbox down with SIGKILL before the command could handle it (a TERM trap would never run).
import { readdirSync, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';

export interface TreeTarget {
  leader: number;
  bySession: boolean;
  spareLeader: boolean;
}

/** Signal a command's process tree; returns whether any process was signalled. */
export function signalTree(t: TreeTarget, signal: NodeJS.Signals): boolean {
  if (t.leader <= 0) return false;
  if (t.spareLeader && signal !== 'SIGKILL') {
    // Sandboxed: the command's processes, not bwrap itself nor bwrap's init in the PID namespace (its child,
    // which ignores signals it has no handler for). Before the command has started (or after it ended) there
    // is nothing else: then the signal goes to bwrap, whose death ends the sandbox.
    const members = children(t.leader).flatMap((init) => descendants(init));
    if (!members.length) return kill(t.leader, signal);
    let any = false;
    for (const p of members) any = kill(p, signal) || any;
    return any;
  }
  let any = kill(-t.leader, signal);
  if (t.bySession)
    for (const p of sessionMembers(t.leader)) if (p.pgrp !== t.leader) any = kill(p.pid, signal) || any;
  return any;
}

function kill(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of the tree is alive (the leader itself may already be gone). */
export function treeAlive(t: TreeTarget): boolean {
  if (t.leader <= 0) return false;
  try {
    process.kill(-t.leader, 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EPERM') return true;
  }
  return t.bySession && sessionMembers(t.leader).length > 0;
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
}

/** Processes whose session id is `sid`, from /proc (Linux). */
export function sessionMembers(sid: number): ProcInfo[] {
  return allProcs()
    .filter((p) => p.sid === sid)
    .map(({ pid, ppid, pgrp }) => ({ pid, ppid, pgrp }));
}

function allProcs(): Array<ProcInfo & { sid: number }> {
  const out: Array<ProcInfo & { sid: number }> = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    // After the command name (which may hold spaces and parentheses): state ppid pgrp session …
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.push({ pid: Number(name), ppid: Number(rest[1]), pgrp: Number(rest[2]), sid: Number(rest[3]) });
  }
  return out;
}

/** Direct children of `pid` (every thread's), from /proc; undefined when the kernel does not list them. */
function childrenOf(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const t of tasks) {
    let list: string;
    try {
      list = readFileSync(`/proc/${pid}/task/${t}/children`, 'latin1');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && t === String(pid)) return undefined;
      continue;
    }
    for (const c of list.split(' ')) if (c) out.push(Number(c));
  }
  return out;
}

export function children(pid: number): number[] {
  return childrenOf(pid) ?? byParent().get(pid) ?? [];
}

/** Every process below `pid` (not `pid` itself). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  let map: Map<number, number[]> | undefined;
  const queue = [pid];
  for (let i = 0; i < queue.length && out.length < MAX_TREE; i++) {
    const p = queue[i] as number;
    let kids = map ? map.get(p) : childrenOf(p);
    if (kids === undefined) {
      map = byParent();
      kids = map.get(p);
    }
    for (const k of kids ?? []) {
      out.push(k);
      queue.push(k);
    }
  }
  return out;
}

/** A walk stops here; a tree this large is past any limit anyway. */
const MAX_TREE = 1 << 16;

/** pid → children for every process, from /proc/<pid>/stat (kernels without task/<tid>/children). */
function byParent(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const p of allProcs()) {
    const list = map.get(p.ppid);
    if (list) list.push(p.pid);
    else map.set(p.ppid, [p.pid]);
  }
  return map;
}

const SIGNAL_NAMES: Record<number, string> = {};
for (const [name, num] of Object.entries(osConstants.signals)) SIGNAL_NAMES[num as number] ??= name;

export function signalName(n: number): string | null {
  return SIGNAL_NAMES[n] ?? null;
}
