// Signalling a command's whole process tree. Pipes without a sandbox: the process group (kill(-pgid), one
// atomic call). A PTY or a sandbox: the session (the leader is a session leader either way), found in /proc,
// which also catches the job-control subgroups of an interactive shell. Inside bubblewrap the leader is the
// outer bwrap process and is spared for every signal but SIGKILL: it would die of the signal and tear the
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
  if (!t.bySession || signal === 'SIGKILL' || !t.spareLeader) {
    let any = kill(-t.leader, signal);
    if (t.bySession)
      for (const p of sessionMembers(t.leader)) if (p.pgrp !== t.leader) any = kill(p.pid, signal) || any;
    return any;
  }
  // Sandboxed: the command's processes, not bwrap itself nor bwrap's init in the PID namespace (its child,
  // which ignores signals it has no handler for). Before the command has started (or after it ended) there
  // is nothing else: then the signal goes to bwrap, whose death ends the sandbox.
  const members = sessionMembers(t.leader).filter((p) => p.pid !== t.leader && p.ppid !== t.leader);
  if (!members.length) return kill(t.leader, signal);
  let any = false;
  for (const p of members) any = kill(p.pid, signal) || any;
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
  const out: ProcInfo[] = [];
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
    if (Number(rest[3]) === sid)
      out.push({ pid: Number(name), ppid: Number(rest[1]), pgrp: Number(rest[2]) });
  }
  return out;
}

const SIGNAL_NAMES: Record<number, string> = {};
for (const [name, num] of Object.entries(osConstants.signals)) SIGNAL_NAMES[num as number] ??= name;

export function signalName(n: number): string | null {
  return SIGNAL_NAMES[n] ?? null;
}
