// Tool jails prepared ahead (docs/security-model.md#tool-jails-prepared-ahead): the jail git or ripgrep will run
// in (jail.ts) is set up while nothing waits for it, with native/wb-exec waiting at its end, so that a call
// only writes wb-exec's request (its argv, directory and environment) and wb-exec execs the program in place.
// Each prepared jail is used once, and only by a call whose jail would be built from exactly the same options
// (its key: the whole argv that builds it, and for ripgrep's jail of one directory that directory's device and
// inode); any other is killed. It is started with no environment, descriptors 0–2 (0: the request), the seccomp
// filter and, for ripgrep's jail, the directory it binds — wb-exec closes all but 0–2 before the exec. It dies
// with the server: bubblewrap's --die-with-parent, and wb-exec ends at the end of its input, which closes when
// the server does. Nothing it writes before its request is taken: output then, or an early exit, discards it.
// A bubblewrap jail's wb-exec takes its request on a socket of its own and runs the program as its child, with
// /dev/null for input, then reports its end back on that socket (`reports`, wb-exec --status-fd): the call has
// its answer when the program ends, not when the jail has been torn down (about a millisecond later,
// docs/security-model.md#tool-jails-prepared-ahead).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync } from 'node:fs';
import type { Duplex, Readable } from 'node:stream';
import { openFilter } from '../spawn/pipes.js';
import { startRequest, type DirIdentity } from '../start-request.js';

/** What a jail prepared ahead is built from; equal keys build equal jails. */
export interface JailRecipe {
  key: string;
  file: string;
  /** The argv that builds the jail, ending in `-- <wb-exec>`. */
  args: string[];
  /** Where it is spawned (a directory the jail shows at the same path). */
  cwd: string;
  seccomp?: string;
  /** Descriptors it gets from the one after the filter's on (ripgrep's directory). */
  fds?: number[];
  /** Variables the jail sets on top of the call's environment (the Landlock jail's scratch directory). */
  env?: Record<string, string>;
  /** Called once the jail has ended, used or not. */
  done?: () => void;
  /** Its process group is killed at the program's exit too (the Landlock jail, without a PID namespace). */
  sweep?: boolean;
  /**
   * wb-exec reads its request on a socket after `fds` and reports the program's end back on it (its descriptor
   * is in `args`: --status-fd); descriptor 0 is /dev/null.
   */
  reports?: boolean;
}

/** The descriptor of a jail's request and report socket (wb-exec --status-fd): after 0–2, the filter's and `fds`. */
function reportFd(fds: readonly number[] = []): number {
  return 4 + fds.length;
}

/** The end of a reporting jail's argv: wb-exec (bound at `at`) told where its request and report socket is. */
export function reportingStarter(at: string, fds?: readonly number[]): string[] {
  return ['--', at, '--status-fd', String(reportFd(fds))];
}

/** A started program: its process and, when its jail reports, the socket its end is told on (argv.ts). */
export interface JailRun {
  child: ChildProcess;
  group: boolean;
  /** What the program left in its group is killed at its exit (no PID namespace does it). */
  sweep?: boolean;
  report?: Readable;
}

/** What a call hands a prepared jail: the program's argv, its directory as the jail sees it, its environment. */
export interface JailCall {
  cwd: string;
  argv: readonly string[];
  env: Record<string, string>;
  /** The directory must be this one (wb-exec checks after entering it). */
  pin?: DirIdentity;
}

/** How many prepared jails came and went (server_info and the tests read them, docs/architecture.md). */
export interface PreparedCounts {
  prepared: number;
  used: number;
  discarded: number;
  died: number;
}

class Prepared {
  dead = false;
  used = false;
  constructor(
    readonly recipe: JailRecipe,
    readonly child: ChildProcess,
  ) {}
}

/** A prepared jail's failures in a row after which none is prepared again until one is used. */
const MAX_FAILURES = 3;

/** The jails prepared for one program: as many as `depth` (git_show runs two git processes at once). */
export class JailSlot {
  private ready: Prepared[] = [];
  private failures = 0;
  private closed = false;
  /** The recipe of the next one, asked for but not yet started (prepared-jails.ts defers it past the answer). */
  private pending: (() => JailRecipe | undefined) | undefined;

  constructor(
    private readonly counts: PreparedCounts,
    private readonly depth: number,
  ) {}

  /** A prepared jail built from `key`, taken (never offered twice); those built otherwise, or dead, are killed. */
  take(key: string): Prepared | undefined {
    // One asked for and not started yet (the call came before the quiet moment) stays asked for: the call starts
    // its jail the usual way, the program itself at bubblewrap's end. Started here and handed over at once, it
    // would cost the call more than that (wb-exec, its request and report, one more fork in the jail: back to
    // back, ~0.25 ms of the server's CPU a search and ~0.6 ms of a git_status answer,
    // docs/benchmarks.md#calls-back-to-back).
    const i = this.ready.findIndex((p) => alive(p) && p.recipe.key === key);
    const got = i < 0 ? undefined : this.ready.splice(i, 1)[0];
    if (got) this.failures = 0;
    else for (const p of this.ready.splice(0)) this.discard(p);
    return got;
  }

  /** Starts more from `recipe()` up to the depth (none after too many failures in a row, or once closed). */
  fill(recipe: () => JailRecipe | undefined): void {
    while (this.ready.length < this.depth && !this.closed && this.failures < MAX_FAILURES) {
      const r = recipe();
      if (!r) return; // not to be built any more (ripgrep's directory changed since)
      const child = startJail(r);
      if (!child) {
        this.failures++;
        return;
      }
      this.counts.prepared++;
      this.watch(new Prepared(r, child), recipe);
    }
  }

  /** Asks for the next one from `recipe`, started by flush() (or by the next take, whichever comes first). */
  later(recipe: () => JailRecipe | undefined): void {
    this.pending = recipe;
  }

  /** Starts what later() asked for, if it has not been started yet. */
  flush(): void {
    const recipe = this.pending;
    this.pending = undefined;
    if (recipe) this.fill(recipe);
  }

  /** Shutdown: the prepared jails are killed and none is prepared again. */
  close(): void {
    this.closed = true;
    this.pending = undefined;
    for (const p of this.ready.splice(0)) this.discard(p);
  }

  /** Until it is used: an exit, an error or any output means it died or misbehaves; it is replaced. */
  private watch(p: Prepared, recipe: () => JailRecipe | undefined): void {
    const fail = () => {
      if (p.used || p.dead) return;
      p.dead = true;
      this.counts.died++;
      this.failures++;
      this.discard(p);
      this.ready = this.ready.filter((q) => q !== p);
      // Killed or broken from outside: replaced, a bounded number of times in a row.
      setImmediate(() => this.fill(recipe));
    };
    const c = p.child;
    c.once('exit', fail).once('error', fail);
    c.stdout?.on('data', fail);
    c.stderr?.on('data', fail);
    reportOf(p)?.on('data', fail);
    c.stdin?.on('error', () => {});
    reportOf(p)?.on('error', () => {});
    c.once('close', () => p.recipe.done?.());
    this.ready.push(p);
  }

  private discard(p: Prepared): void {
    if (p.used) return;
    if (!p.dead) this.counts.discarded++;
    p.dead = true;
    p.child.stdin?.destroy();
    reportOf(p)?.destroy();
    killJail(p.child);
  }
}

function alive(p: Prepared): boolean {
  return !p.dead && p.child.exitCode === null && p.child.signalCode === null;
}

/** The program starts in the prepared jail: its request written, the process handed over as the program's. */
export function handOver(p: Prepared, call: JailCall): JailRun {
  p.used = true;
  const c = p.child;
  c.removeAllListeners('exit').removeAllListeners('error');
  c.stdout?.removeAllListeners('data');
  c.stderr?.removeAllListeners('data');
  const report = reportOf(p);
  report?.removeAllListeners('data');
  const request = startRequest(call.cwd, call.argv, { ...call.env, ...p.recipe.env }, call.pin);
  // The report's socket stays open for reading; only its writing half ends with the request.
  if (report) report.end(request);
  else c.stdin?.end(request);
  return { child: c, group: true, sweep: p.recipe.sweep, report };
}

function reportOf(p: Prepared): Duplex | undefined {
  if (!p.recipe.reports) return undefined;
  return (p.child.stdio[reportFd(p.recipe.fds)] as Duplex | null) ?? undefined;
}

function startJail(r: JailRecipe): ChildProcess | undefined {
  let filter: number | undefined;
  try {
    filter = openFilter(r.seccomp);
    return spawn(r.file, r.args, {
      cwd: r.cwd,
      // bubblewrap and the Landlock helper need no environment: the program's arrives with the request.
      env: {},
      stdio: [
        r.reports ? 'ignore' : 'pipe',
        'pipe',
        'pipe',
        filter ?? 'ignore',
        ...(r.fds ?? []),
        ...(r.reports ? ['pipe' as const] : []),
      ],
      // A group of its own, killed whole (killJail, argv.ts; jail.ts `Jailed.group` says why).
      detached: true,
    });
  } catch {
    r.done?.();
    return undefined;
  } finally {
    if (filter !== undefined) closeSync(filter);
  }
}

function killJail(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}
