// The jail for programs the server itself runs on workspace content — git and ripgrep
// (docs/security-model.md, rule A). Whatever the repository makes them run (a filter driver, fsmonitor, a
// textconv, an include of another config) runs in here: the system's programs and libraries read-only, the
// workspace read-only, an empty /tmp, its own PID, network, IPC and user namespaces, no capabilities, the
// seccomp filter of seccomp.ts, and nothing else of the host — no home directories, no /run, no secrets, no
// way to write. So a hostile repository can at worst read the workspace, as the user's own `git` would. git's
// own hardening (git/run.ts) stays as a second line. Where bubblewrap cannot run (a container), the Landlock
// helper jails them instead (jail-landlock.ts), as it confines commands there; where neither can, programs run
// unjailed and status() says so. SERVICE_SANDBOX=bwrap or landlock picks that one only.
import { isStaticExecutable } from './static-exe.js';
import { closeSync, constants, openSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { SandboxMode } from '../../config/load.js';
import { ETC_FILES } from './bwrap-view.js';
import { LandlockJail, type LandlockJailContext } from './jail-landlock.js';
import { planJail, type BwrapPlan } from './jail-plan.js';
import { probeRun, SECCOMP_FD } from '../sandbox/sandbox.js';
import { ProgramPaths } from './programs.js';
import { placeProgram } from '../native.js';
import { reportingStarter, type PreparedCounts } from './prepared-jail.js';
import type { DirIdentity } from '../start-request.js';
import {
  identityOf,
  PreparedJails,
  type JailRunNote,
  type JailShape,
  type PreparedStart,
} from './prepared-jails.js';
import { programDir } from './jail-landlock.js';

/** What either jail is built from (the Landlock jail's fields), and which one was asked for. */
export interface JailContext extends LandlockJailContext {
  requested: SandboxMode;
  /** Told of each start that could use a prepared jail (the server's debug line). */
  onRun?: JailRunNote;
  /** Runs the preparing of the next jail once the answer is out (core/quiet.ts); at once without it. */
  defer?: (fn: () => void) => void;
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
  /**
   * Start it as the leader of a process group, killed whole. bubblewrap's: its sandbox child waits for bubblewrap's
   * go before it sets its own parent-death signal, so bubblewrap killed alone in that moment would leave it waiting
   * for ever; the Landlock jail's: it has no PID namespace, and what the program leaves in the group ends with it.
   */
  group?: boolean;
  /** The group is killed when the program exits too (no PID namespace to end what it left: the Landlock jail). */
  sweep?: boolean;
  /** Descriptors the program must get from ALONE_FD on (wrapAlone: the directory it runs in). */
  fds?: number[];
}

/** Where wrapAlone's program finds the directory it was given, and on which descriptor bwrap gets it. */
export { isStaticExecutable, ETC_FILES };

export const ALONE_DIR = '/base';
export const ALONE_FD = SECCOMP_FD + 1;

/** Where a prepared jail's wb-exec lies inside it (bound from the server's copy, prepared-jail.ts). */
const STARTER_AT = '/run/wb-exec';

export class ToolJail {
  private plan: BwrapPlan | LandlockJail | null | undefined;
  private why = '';
  /** Per program: whether it runs in a jail of its own directory and the one it is given (wrapAlone). */
  private readonly aloneOk = new Map<string, boolean>();
  /** Per program, its bubblewrap jail's arguments and key, the same for every call (shape). */
  private readonly recipes = new Map<string, Omit<JailShape, 'cwd' | 'pin'>>();
  /** The last jail of one directory asked for (aloneShape): searches of one directory ask for the same. */
  private lastAlone: { program: string; dev: bigint; ino: bigint; shape: JailShape } | undefined;
  private readonly programs: ProgramPaths;

  private readonly prepared: PreparedJails;
  /** The placed copies of wb-exec: dynamic (beside the system) and static (the jail of one directory). */
  private starters: { dynamic?: string; static?: string } | undefined;

  constructor(private readonly ctx: JailContext) {
    this.prepared = new PreparedJails(ctx.onRun, ctx.defer);
    this.programs = new ProgramPaths(ctx.pathVar);
  }

  /**
   * Starts `file args…` in a jail prepared ahead for exactly this call (prepared-jail.ts): `ready` when one
   * built so was waiting; otherwise the caller starts it through wrap/wrapAlone as before. Undefined when none
   * can be (no jail, no wb-exec, a directory pinned only by descriptor). `refill` once the run has ended.
   */
  startPrepared(
    file: string,
    args: readonly string[],
    call: { cwd: string; env: Record<string, string>; dirFd?: number },
  ): PreparedStart | undefined {
    const p = this.ready();
    const program = p && this.programs.path(file);
    const shape = program && this.shape(p, program, call.cwd, call.dirFd);
    return shape ? this.prepared.start(program, args, call.env, shape) : undefined;
  }

  /** At start: the jails of `programs` (git, ripgrep) prepared for the workspace's root (cli/warm-up.ts). */
  warm(programs: readonly string[]): void {
    const p = this.ready();
    if (!p) return;
    const root = openSync(this.ctx.workspaceReal, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      for (const f of programs) {
        const program = this.programs.path(f);
        const alone = program && this.runsAlone(program) ? root : undefined;
        if (program) this.prepared.warm(program, this.shape(p, program, this.ctx.workspaceReal, alone));
      }
    } finally {
      closeSync(root);
    }
  }

  /** How many jails were prepared, used, discarded (built otherwise) and died before use. */
  preparedCounts(): PreparedCounts {
    return { ...this.prepared.counts };
  }

  /** Shutdown: the prepared jails killed, none prepared again. */
  close(): void {
    this.prepared.close();
  }

  /** Whether programs run in a jail here (bubblewrap or Landlock), not unconfined. */
  confining(): boolean {
    return this.ready() !== null;
  }

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

  /**
   * The argv that runs `file args…` in `cwd` inside the jail, or the program itself where there is no jail.
   * `writable`: a server-owned directory (the review points' private repository, git/review-repo.ts) the
   * program may write in this one call; it is seen at its own path, and nothing else of the host is added.
   */
  wrap(file: string, args: readonly string[], cwd: string, writable?: string): Jailed {
    const p = this.ready();
    if (!p) return { file, args: [...args] };
    const program = this.programs.path(file);
    if (!program) return { file, args: [...args] }; // the spawn reports ENOENT as usual
    if (p instanceof LandlockJail) return p.start(program, args, writable);
    // A directory the caller pinned by descriptor (/proc/self/fd/N) is already the process's working directory
    // when bwrap starts; bwrap then enters the same directory inside the jail by its path.
    const chdir = cwd.startsWith('/proc/') ? [] : ['--chdir', cwd];
    const rw = writable ? ['--bind', writable, writable] : [];
    const a = [...p.base, ...rw, ...this.programs.dirs(program), ...chdir];
    if (p.seccomp) a.push('--seccomp', String(SECCOMP_FD));
    return { file: p.bwrap, args: [...a, '--', program, ...args], seccomp: p.seccomp, group: true };
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
      group: true,
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
    if (this.plan === undefined) ({ plan: this.plan, why: this.why } = planJail(this.ctx));
    return this.plan;
  }

  /** The jail one start of `program` needs, as a prepared jail is matched and built (prepared-jails.ts). */
  private shape(
    p: BwrapPlan | LandlockJail,
    program: string,
    cwd: string,
    dirFd?: number,
  ): JailShape | undefined {
    const st = this.placedStarters();
    if (dirFd !== undefined && !(p instanceof LandlockJail) && this.runsAlone(program))
      return this.aloneShape(p, program, dirFd, st.static);
    // A directory held open enters the jail by its path, which wb-exec checks leads to that very directory.
    let pin: DirIdentity | undefined;
    if (dirFd !== undefined) {
      pin = identityOf(dirFd);
      cwd = linkOf(dirFd);
      if (!pin || !cwd.startsWith('/')) return undefined;
    } else if (cwd.startsWith('/proc/')) return undefined;
    const starter = st.dynamic;
    if (!starter) return undefined;
    if (p instanceof LandlockJail) return this.landlockShape(p, program, starter, cwd, pin);
    const made = this.recipes.get(program) ?? this.bwrapRecipe(p, program, starter);
    return { key: made.key, recipe: made.recipe, cwd, pin };
  }

  /** The jail of `program` as every call of it gets it: made once, kept in `recipes`. */
  private bwrapRecipe(p: BwrapPlan, program: string, starter: string): Omit<JailShape, 'cwd' | 'pin'> {
    const root = this.ctx.workspaceReal;
    const args = [
      ...p.base,
      ...this.programs.dirs(program),
      '--ro-bind',
      starter,
      STARTER_AT,
      '--chdir',
      root,
    ];
    if (p.seccomp) args.push('--seccomp', String(SECCOMP_FD));
    args.push(...reportingStarter(STARTER_AT));
    const key = [p.bwrap, p.seccomp ?? '', ...args].join('\0');
    const recipe = { key, file: p.bwrap, args, cwd: root, seccomp: p.seccomp, reports: true };
    const made = { key, recipe: () => recipe };
    this.recipes.set(program, made);
    return made;
  }

  /** ripgrep's jail of one directory (wrapAlone), bound from the directory the server holds (prepared-jails.ts). */
  private aloneShape(p: BwrapPlan, program: string, dirFd: number, starter?: string): JailShape | undefined {
    const held = starter ? this.prepared.holdDir(dirFd) : undefined;
    if (!held || !starter) return undefined;
    const id = held.id;
    const last = this.lastAlone;
    if (last?.program === program && last.dev === id.dev && last.ino === id.ino) return last.shape;
    const args = [
      ...this.aloneArgs(p, program),
      '--ro-bind',
      starter,
      STARTER_AT,
      ...reportingStarter(STARTER_AT, [dirFd]),
    ];
    const key = [p.bwrap, p.seccomp ?? '', `${id.dev}:${id.ino}`, ...args].join('\0');
    const recipe = () => {
      const fd = this.prepared.heldDir(id);
      if (fd === undefined) return undefined;
      return {
        key,
        file: p.bwrap,
        args,
        cwd: this.ctx.workspaceReal,
        seccomp: p.seccomp,
        fds: [fd],
        reports: true,
      };
    };
    const shape = { key, recipe, cwd: ALONE_DIR };
    this.lastAlone = { program, dev: id.dev, ino: id.ino, shape };
    return shape;
  }

  /** The Landlock jail with wb-exec readable and at its end; its own scratch directory made as it is built. */
  private landlockShape(
    p: LandlockJail,
    program: string,
    starter: string,
    cwd: string,
    pin?: DirIdentity,
  ): JailShape {
    const readable = [programDir(program), starter];
    const keyOf = () => [p.helper, p.seccomp ?? '', ...p.options('', readable), '--', starter].join('\0');
    const recipe = () => {
      let scratch: string;
      try {
        scratch = p.scratch();
      } catch {
        return undefined;
      }
      const args = [...p.options(scratch, readable), '--', starter];
      const done = () => rmSync(scratch, { recursive: true, force: true });
      const env = { HOME: scratch, TMPDIR: scratch };
      const root = this.ctx.workspaceReal;
      return { key: keyOf(), file: p.helper, args, cwd: root, seccomp: p.seccomp, env, done, sweep: true };
    };
    return { key: keyOf(), recipe, cwd, pin };
  }

  private placedStarters(): { dynamic?: string; static?: string } {
    this.starters ??= {
      dynamic: placeProgram('wb-exec', this.ctx.dirs.root),
      static: placeProgram('wb-exec-static', this.ctx.dirs.root),
    };
    return this.starters;
  }
}

/** The path a descriptor was opened at, as the kernel tracks it ('' when it cannot say). */
function linkOf(fd: number): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return '';
  }
}
