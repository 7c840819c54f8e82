// The jail for programs the server itself runs on workspace content — git and ripgrep
// (docs/security-model.md, rule A). Whatever the repository makes them run (a filter driver, fsmonitor, a
// textconv, an include of another config) runs in here: the system's programs and libraries read-only, the
// workspace read-only, an empty /tmp, its own PID, network, IPC and user namespaces, no capabilities, the
// seccomp filter of seccomp.ts, and nothing else of the host — no home directories, no /run, no secrets, no
// way to write. So a hostile repository can at worst read the workspace, as the user's own `git` would. git's
// own hardening (git/run.ts) stays as a second line. Where bubblewrap cannot run (a container), the Landlock
// helper jails them instead (jail-landlock.ts), as it confines commands there; where neither can, programs run
// unjailed and status() says so. SERVICE_SANDBOX=bwrap or landlock picks that one only.
import { closeSync, constants, openSync, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { SandboxMode } from '../../config/load.js';
import { SYSTEM_TOPS, systemBinds } from '../sandbox/host-view.js';
import { LandlockJail, type LandlockJailContext } from './jail-landlock.js';
import { probeRun, SECCOMP_FD } from '../sandbox/sandbox.js';
import { writeSeccompFilter } from '../sandbox/seccomp.js';
import { findExecutable } from '../spawn/spawn.js';

/** What either jail is built from (the Landlock jail's fields), and which one was asked for. */
export interface JailContext extends LandlockJailContext {
  requested: SandboxMode;
}

export interface JailStatus {
  in_use: 'bwrap' | 'landlock' | null;
  reason: string;
}

/** How to start one program in the jail: the argv to spawn and the filter to open on SECCOMP_FD. */
export interface Jailed {
  file: string;
  args: string[];
  seccomp?: string;
  /** Variables the jail sets on top of the caller's environment. */
  env?: Record<string, string>;
  /** Called once the program has ended (or could not start). */
  done?: () => void;
  /** Start it as the leader of a process group, ended with it (a jail without a PID namespace). */
  group?: boolean;
  /** Descriptors the program must get from ALONE_FD on (wrapAlone: the directory it runs in). */
  fds?: number[];
}

/** Where wrapAlone's program finds the directory it was given, and on which descriptor bwrap gets it. */
export const ALONE_DIR = '/base';
export const ALONE_FD = SECCOMP_FD + 1;

type BwrapPlan = { bwrap: string; base: string[]; isolation: string[]; seccomp?: string };

/** The few files of /etc that programs and the dynamic loader read; the rest of /etc stays out of sight. */
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/alternatives',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
];

export class ToolJail {
  private plan: BwrapPlan | LandlockJail | null | undefined;
  private why = '';
  private readonly dirsOf = new Map<string, string[]>();
  /** Per program: whether it runs in a jail of its own directory and the one it is given (wrapAlone). */
  private readonly aloneOk = new Map<string, boolean>();

  constructor(private readonly ctx: JailContext) {}

  status(): JailStatus {
    const p = this.ready();
    if (p instanceof LandlockJail) return { in_use: 'landlock', reason: p.describe() };
    return p
      ? {
          in_use: 'bwrap',
          reason:
            'git and ripgrep run in bubblewrap: system files and the workspace read-only, no network, no home directories, no capabilities',
        }
      : { in_use: null, reason: `git and ripgrep run without a sandbox: ${this.why}` };
  }

  /** The argv that runs `file args…` in `cwd` inside the jail, or the program itself where there is no jail. */
  wrap(file: string, args: readonly string[], cwd: string): Jailed {
    const p = this.ready();
    if (!p) return { file, args: [...args] };
    const program = path.isAbsolute(file) ? file : findExecutable(file, this.ctx.pathVar);
    if (!program) return { file, args: [...args] }; // the spawn reports ENOENT as usual
    if (p instanceof LandlockJail) return p.start(program, args);
    // A directory the caller pinned by descriptor (/proc/self/fd/N) is already the process's working directory
    // when bwrap starts; bwrap then enters the same directory inside the jail by its path.
    const chdir = cwd.startsWith('/proc/') ? [] : ['--chdir', cwd];
    const a = [...p.base, ...this.programDirs(program), ...chdir];
    if (p.seccomp) a.push('--seccomp', String(SECCOMP_FD));
    return { file: p.bwrap, args: [...a, '--', program, ...args], seccomp: p.seccomp };
  }

  /**
   * Like wrap, for a program that needs nothing of the system — a static executable, as ripgrep's is — run in
   * a directory the caller holds open (`dirFd`): in bubblewrap it sees its own directory and that directory
   * (bound from the descriptor, at ALONE_DIR, where it starts), read-only, and nothing else. So whatever it
   * reports was read below that directory, by construction, whatever is renamed or swapped while it runs. A
   * program that is not static or does not run so (probed once with `--version`), a bwrap without
   * `--ro-bind-fd`, and the Landlock jail get wrap's jail.
   */
  wrapAlone(file: string, args: readonly string[], cwd: string, dirFd: number): Jailed {
    const p = this.ready();
    if (!p || p instanceof LandlockJail || !this.runsAlone(file)) return this.wrap(file, args, cwd);
    return {
      file: p.bwrap,
      args: [...this.aloneArgs(p, file), '--', file, ...args],
      seccomp: p.seccomp,
      fds: [dirFd],
    };
  }

  /** Whether wrapAlone(file) runs it seeing only its own directory and the one it is given. */
  runsAlone(file: string): boolean {
    const p = this.ready();
    if (!p || p instanceof LandlockJail || !path.isAbsolute(file)) return false;
    let ok = this.aloneOk.get(file);
    if (ok === undefined) {
      ok = isStaticExecutable(file) && this.probeAlone(p, file);
      this.aloneOk.set(file, ok);
    }
    return ok;
  }

  private aloneArgs(p: BwrapPlan, file: string): string[] {
    const dir = path.dirname(file);
    const a = ['--ro-bind', dir, dir, '--ro-bind-fd', String(ALONE_FD), ALONE_DIR, ...p.isolation];
    a.push('--chdir', ALONE_DIR);
    if (p.seccomp) a.push('--seccomp', String(SECCOMP_FD));
    return a;
  }

  /** `file --version` in its jail of one directory (the workspace's root, held open as the caller would). */
  private probeAlone(p: BwrapPlan, file: string): boolean {
    const dir = openSync(this.ctx.workspaceReal, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const argv = [...this.aloneArgs(p, file), '--', file, '--version'];
      return probeRun(p.bwrap, argv, undefined, p.seccomp, [dir]) === undefined;
    } finally {
      closeSync(dir);
    }
  }

  private ready() {
    if (this.plan === undefined) this.plan = this.probe();
    return this.plan;
  }

  private probe(): BwrapPlan | LandlockJail | null {
    const c = this.ctx;
    if (c.requested === 'off') {
      this.why = 'SERVICE_SANDBOX=off';
      return null;
    }
    const bwrap = c.requested === 'landlock' ? null : this.probeBwrap();
    if (bwrap || c.requested === 'bwrap') return bwrap;
    const ll = LandlockJail.plan(
      {
        pathVar: c.pathVar,
        workspaceReal: c.workspaceReal,
        dirs: c.dirs,
        privateFiles: c.privateFiles,
        sealed: c.sealed ?? [],
        readAllow: c.readAllow ?? [],
        alsoRead: c.alsoRead ?? [],
        alsoWrite: c.alsoWrite ?? [],
      },
      SECCOMP_FD,
      (helper, argv, filter) => probeRun(helper, argv, c.pathVar, filter),
    );
    if (ll instanceof LandlockJail) return ll;
    this.why = this.why ? `${this.why}; ${ll.unavailable}` : ll.unavailable;
    return null;
  }

  private probeBwrap(): BwrapPlan | null {
    const c = this.ctx;
    const bwrap = findExecutable('bwrap', c.pathVar);
    if (!bwrap) {
      this.why = 'bwrap (bubblewrap) is not installed on PATH';
      return null;
    }
    const seccomp = writeSeccompFilter(c.dirs.root);
    const mounts = baseMounts(c.workspaceReal);
    for (const r of c.alsoRead ?? []) mounts.push('--ro-bind', r, r);
    for (const w of c.alsoWrite ?? []) mounts.push('--bind', w, w);
    let error = '';
    for (const userns of [true, false]) {
      const base = [...mounts, ...isolation(userns)];
      const probeArgs = [...base, '--chdir', '/', ...(seccomp ? ['--seccomp', String(SECCOMP_FD)] : [])];
      const e = probeRun(bwrap, [...probeArgs, '--', 'true'], c.pathVar, seccomp);
      if (!e) return { bwrap, base, isolation: isolation(userns), seccomp };
      error ||= e;
    }
    this.why = `bwrap cannot create its sandbox here (${error})`;
    return null;
  }

  /** Bind the program's own directory where the system directories do not already show it. */
  private programDirs(program: string): string[] {
    let dirs = this.dirsOf.get(program);
    if (!dirs) {
      let real = program;
      try {
        real = realpathSync(program);
      } catch {
        /* the spawn reports it */
      }
      const dir = path.dirname(real);
      const shown = ['/usr', ...SYSTEM_TOPS].some((t) => dir === t || dir.startsWith(`${t}/`));
      dirs = shown ? [] : ['--ro-bind', dir, dir];
      this.dirsOf.set(program, dirs);
    }
    return dirs;
  }
}

function isolation(userns: boolean): string[] {
  const a = ['--unshare-all', '--die-with-parent', '--new-session'];
  if (userns) a.push('--unshare-user', '--disable-userns');
  a.push('--cap-drop', 'ALL');
  return a;
}

function baseMounts(workspaceReal: string): string[] {
  const a = systemBinds();
  a.push('--dir', '/etc');
  for (const f of ETC_FILES) a.push('--ro-bind-try', f, f);
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  a.push('--ro-bind', workspaceReal, workspaceReal);
  return a;
}

/** An ELF executable without a program interpreter (PT_INTERP): it needs no loader and no libraries. */
export function isStaticExecutable(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(64);
    // 64-bit, little-endian ELF only; anything else is taken as needing the system.
    if (readSync(fd, head, 0, 64, 0) !== 64 || head.readUInt32BE(0) !== 0x7f454c46) return false;
    if (head[4] !== 2 || head[5] !== 1) return false;
    const phoff = Number(head.readBigUInt64LE(0x20));
    const size = head.readUInt16LE(0x36);
    const count = head.readUInt16LE(0x38);
    if (size < 4 || count === 0 || count > 256) return false;
    const table = Buffer.alloc(size * count);
    if (readSync(fd, table, 0, table.length, phoff) !== table.length) return false;
    for (let i = 0; i < count; i++) if (table.readUInt32LE(i * size) === 3) return false; // PT_INTERP
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
