// The tool jail where bubblewrap cannot run (jail.ts; docs/security-model.md#the-landlock-sandbox): git and
// ripgrep start through the Landlock helper (native/wb-landlock.c) instead. They may read what a `safe`
// Landlock command may read (the allow-list of host-view.ts, without the paths the command sandbox hides,
// sandbox-mounts.ts maskedPaths), their own directory and the workspace, and write nothing but a scratch directory of their own call (HOME and TMPDIR, as bubblewrap's
// empty /tmp; removed when the program ends), /dev/null included; no TCP (Landlock, ABI >= 4) and no
// AF_INET/AF_INET6 socket (the seccomp filter of seccomp.ts); signals and abstract unix sockets confined to
// the call (ABI >= 6). Unlike bubblewrap there is no PID namespace: the program leads a process group that is
// killed when it exits; a process that started a session of its own outlives it, still confined.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { landlockHelper, probeLandlockAbi } from '../sandbox/sandbox-landlock.js';
import { allowList, maskedPaths, type SandboxContext } from '../sandbox/sandbox-mounts.js';
import { writeSeccompFilter } from '../sandbox/seccomp.js';
import type { RuntimeDirs } from '../runtime-dir.js';
import { findExecutable } from '../spawn/spawn.js';
import { systemClock } from '../../core/clock.js';

const DEVICES_RW = ['/dev/null'];
const DEVICES_RO = ['/dev/zero', '/dev/random', '/dev/urandom'];
/** The hidden paths are looked up at most this often, as for commands (sandbox-landlock.ts). */
const MASKS_TTL_MS = 30_000;

export interface LandlockJailContext {
  pathVar: string | undefined;
  workspaceReal: string;
  /** The instance's runtime directories (root: where the seccomp filter is kept). */
  dirs: RuntimeDirs;
  /** The server's own secret files (token file, audit log): unreadable in the Landlock jail. */
  privateFiles: readonly string[];
  /** Kept state of every instance (sandbox-mounts.ts sealedDirsOf): unreadable in the Landlock jail. */
  sealed?: readonly string[];
  /** SERVICE_READ_ALLOW: readable in the Landlock jail as for `safe` commands. */
  readAllow?: readonly string[];
  /** More directories readable even inside hidden ones (a worktree's source object directory, src/workspaces/). */
  alsoRead?: readonly string[];
  /** Directories writable (only the one-off jail that makes a worktree, src/workspaces/worktree.ts). */
  alsoWrite?: readonly string[];
}

/** One jailed start: the argv, the environment it needs on top of the caller's, and what to remove after. */
export interface LandlockStart {
  file: string;
  args: string[];
  seccomp?: string;
  env: Record<string, string>;
  done: () => void;
  group: true;
  sweep: true;
}

export class LandlockJail {
  private cached: { at: number; hide: string[]; read: string[] } | undefined;
  private readonly scratchParent: string;

  private constructor(
    private readonly ctx: LandlockJailContext,
    readonly helper: string,
    readonly abi: number,
    readonly seccomp: string | undefined,
    private readonly slot: number,
  ) {
    this.scratchParent = path.join(ctx.dirs.root, 'jail');
  }

  /**
   * The jail, or why there is none. `run` runs the helper once with an argv and the filter on `slot` (the
   * probe: `true` in the real jail).
   */
  static plan(
    ctx: LandlockJailContext,
    slot: number,
    run: (helper: string, argv: string[], filter: string | undefined) => string | undefined,
  ): LandlockJail | { unavailable: string } {
    const helper = landlockHelper(ctx.dirs);
    if (!helper) return { unavailable: 'the Landlock helper dist/native/wb-landlock was not built' };
    const abi = probeLandlockAbi(helper);
    if (typeof abi === 'string') return { unavailable: abi };
    const seccomp = writeSeccompFilter(ctx.dirs.root, { noInet: true });
    const jail = new LandlockJail(ctx, helper, abi, seccomp, slot);
    mkdirSync(jail.scratchParent, { recursive: true, mode: 0o700 });
    const probe = jail.start(findExecutable('true', ctx.pathVar) ?? '/bin/true', []);
    try {
      const why = run(helper, probe.args, seccomp);
      if (why) return { unavailable: `the Landlock helper cannot confine git here (${why})` };
    } finally {
      probe.done();
    }
    return jail;
  }

  /**
   * How `program args…` starts in the jail (`program` resolved; its directory is made readable); `writable`: a
   * server-owned directory it may also write (jail.ts wrap).
   */
  start(program: string, args: readonly string[], writable?: string): LandlockStart {
    // No working directory to give: the helper keeps the one the spawn gives it (a pinned /proc/self/fd/N too).
    const scratch = this.scratch();
    return {
      file: this.helper,
      args: [...this.options(scratch, [programDir(program)], writable), '--', program, ...args],
      seccomp: this.seccomp,
      // bubblewrap's jail has an empty /tmp and no HOME; here both are the call's own directory.
      env: { HOME: scratch, TMPDIR: scratch },
      done: () => rmSync(scratch, { recursive: true, force: true }),
      // No PID namespace: what the program leaves in its process group is ended with it (process/jail/argv.ts).
      group: true,
      sweep: true,
    };
  }

  /**
   * The helper's options before `--`: `scratch` (and `writable`, a server-owned directory) writable, the
   * workspace, `readable` (the program's directory; a prepared jail's wb-exec too) and the `safe` view readable.
   * A prepared jail's key is these with an empty scratch: the rest is what it is built from (prepared-jail.ts).
   */
  options(scratch: string, readable: readonly string[], writable?: string): string[] {
    const a: string[] = ['--rw', scratch];
    if (writable) a.push('--rw', writable);
    for (const d of DEVICES_RW) a.push('--rw', d);
    for (const w of this.ctx.alsoWrite ?? []) a.push('--rw', w);
    const ro = [...DEVICES_RO, this.ctx.workspaceReal, ...(this.ctx.alsoRead ?? []), ...readable];
    for (const r of ro) a.push('--ro', r);
    const view = this.view();
    for (const r of view.read) a.push('--read', r);
    for (const h of view.hide) a.push('--hide', h);
    a.push('--no-inet');
    if (this.seccomp) a.push('--seccomp', String(this.slot));
    return a;
  }

  /** A scratch directory of one run (HOME and TMPDIR), removed by its `done`. */
  scratch(): string {
    return mkdtempSync(path.join(this.scratchParent, 'c-'));
  }

  /** What the status says about this jail. */
  describe(): string {
    const net =
      `no network (${this.seccomp ? 'seccomp refuses internet sockets' : 'no seccomp filter: UDP stays open'}` +
      `${this.abi >= 4 ? ', Landlock refuses TCP' : ''})`;
    return [
      `git and ripgrep run in the Landlock sandbox (ABI ${this.abi}; bubblewrap cannot run here): read-only ` +
        'everywhere commands may read, the workspace included; writes only in a scratch directory of each call',
      'secret files, home directories, /tmp and the runtime directory unreadable as for commands',
      net,
      this.abi >= 6
        ? 'signals and abstract unix sockets confined to the call'
        : `signals and abstract unix sockets NOT confined (kernel Landlock ABI ${this.abi} < 6)`,
      'no capabilities; unlike bubblewrap no PID namespace',
    ].join('; ');
  }

  /** What `safe` commands may read (host-view.ts, the allow-list) and what is hidden inside it. */
  private view(): { read: string[]; hide: string[] } {
    const now = systemClock.monotonic();
    if (!this.cached || now - this.cached.at > MASKS_TTL_MS) {
      const c = this.ctx;
      const sandboxCtx: SandboxContext = {
        mode: 'safe',
        requested: 'landlock',
        pathVar: c.pathVar,
        workspaceReal: c.workspaceReal,
        dirs: c.dirs,
        privateFiles: c.privateFiles,
        seccompFile: this.seccomp,
        sealed: c.sealed ?? [],
        readAllow: c.readAllow ?? [],
      };
      const read = [...(allowList(sandboxCtx) ?? []), '/proc'];
      this.cached = { at: now, hide: [...maskedPaths(sandboxCtx), '/dev'], read };
    }
    return this.cached;
  }
}

/** The real directory of a program (readable even inside a hidden directory, as bubblewrap binds it). */
export function programDir(program: string): string {
  try {
    return path.dirname(realpathSync(program));
  } catch {
    return path.dirname(program);
  }
}
