// Commands on pipes (docs/design-notes.md#bash-and-retention; docs/tools.md#commands): the only importer of
// child_process for commands. The child gets its own session and process group (detached → setsid); stdout
// and stderr are read as they come; when the leader exits, background jobs it left in its group are killed
// and the streams get a moment to drain. With a pids cgroup the child is born inside it (cgroup.ts). Runs in
// the spawner helper (spawner-main.ts) and, as a fallback, in the server. Imports stay light: the helper
// loads this file and nothing else of the server.
import { spawn as spawnChild, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { hitLimit, releaseCgroup, spawnInCgroup, type CgroupTarget } from './cgroup.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from './spawn-types.js';
import { signalTree, treeAlive, type TreeTarget } from './tree.js';

/** After the leader exits, how long its streams may stay open (a process that left the group holding them). */
const DRAIN_AFTER_EXIT_MS = 500;

export function treeTarget(leader: number, spec: Pick<SpawnSpec, 'tty' | 'sandboxed'>): TreeTarget {
  return { leader, bySession: spec.tty || spec.sandboxed, spareLeader: spec.sandboxed };
}

/**
 * A command ends with its leader: background jobs it left behind are killed, as the PID namespace of the
 * sandbox does anyway, so no orphan outlives the command that nobody could kill any more. (A program that
 * started its own session — a daemon — is not a member and is left alone.)
 */
export function endLeftovers(t: TreeTarget, spec: Pick<SpawnSpec, 'sandboxed'>): void {
  // In bubblewrap the leader exits only after the PID namespace is gone: nothing can be left.
  if (spec.sandboxed) return;
  if (treeAlive(t)) signalTree({ ...t, spareLeader: false }, 'SIGKILL');
}

export interface PipeHandle extends ProcessHandle {
  /** Stop / restart reading the command's output (flow control of the spawner helper). */
  pause(): void;
  resume(): void;
}

/** Spawn inside the command's pids cgroup when there is one; `limited` says whether it holds the tree. */
export function inCgroup<T>(cg: CgroupTarget | undefined, spawn: () => T): { result: T; limited: boolean } {
  return cg ? spawnInCgroup(cg, spawn) : { result: spawn(), limited: false };
}

/** At the end of a command: say so if it hit its process limit, and remove its cgroup. */
export function endCgroup(cg: CgroupTarget | undefined, limited: boolean, ev: ProcessEvents): void {
  if (!cg) return;
  if (limited && hitLimit(cg.dir))
    ev.onStderr(
      Buffer.from(
        `workbench-mcp: this command reached its limit of ${cg.max} processes (SERVICE_EXEC_MAX_PROCESSES); forks past it failed with EAGAIN\n`,
      ),
    );
  releaseCgroup(cg.dir);
}

/** Opens the seccomp filter a sandboxed spawn hands to bwrap on descriptor 3 (sandbox.ts SECCOMP_FD). */
export function openFilter(file: string | undefined): number | undefined {
  return file === undefined ? undefined : openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
}

export type Spawned = { result: ChildProcessWithoutNullStreams; limited: boolean };

/** Start `spec.argv` on pipes in its own session (and cgroup); the failure code when no process could exist. */
export function startChild(spec: Omit<SpawnSpec, 'tty'>): Spawned | { error: string } {
  const [file, ...args] = spec.argv as [string, ...string[]];
  let filter: number | undefined;
  try {
    filter = openFilter(spec.seccomp);
    const stdio = filter === undefined ? ['pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', filter];
    return inCgroup(
      spec.cgroup,
      () =>
        spawnChild(file, args, {
          cwd: spec.cwd,
          env: spec.env,
          stdio: stdio as ['pipe', 'pipe', 'pipe'],
          detached: true,
        }) as ChildProcessWithoutNullStreams,
    );
  } catch (e) {
    // Refused before any process existed (E2BIG: an argument or variable too large for execve): a failed start.
    return { error: (e as NodeJS.ErrnoException).code ?? String((e as Error).message) };
  } finally {
    if (filter !== undefined) closeSync(filter);
  }
}

export function spawnPipes(spec: SpawnSpec, ev: ProcessEvents): PipeHandle {
  const started = startChild(spec);
  if ('error' in started) return notStarted(spec, ev, started.error);
  return adoptChild(started, spec, ev);
}

/** A child already started (startChild) becomes the command of `spec`: its output and exit go to `ev`. */
export function adoptChild(started: Spawned, spec: SpawnSpec, ev: ProcessEvents): PipeHandle {
  return new PipedCommand(started.result, started.limited, spec, ev);
}

/** A started child on pipes: its output goes to `ev` as it comes; it is done when it exited and both
 *  streams closed (or the drain time after its exit passed). */
class PipedCommand implements PipeHandle {
  readonly tty = false;
  private stdinIsOpen = true;
  private done = false;
  private exited: { code: number | null; signal: string | null } | undefined;
  private openStreams = 2;
  private drainTimer: NodeJS.Timeout | undefined;
  private startError: string | undefined;

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    readonly limited: boolean,
    private readonly spec: SpawnSpec,
    private readonly ev: ProcessEvents,
  ) {
    child.stdout.on('data', ev.onStdout);
    child.stderr.on('data', ev.onStderr);
    for (const s of [child.stdout, child.stderr]) {
      s.once('close', () => {
        this.openStreams--;
        if (this.openStreams === 0) this.finish();
      });
    }
    child.stdin.on('error', () => {
      this.stdinIsOpen = false; // EPIPE: the command stopped reading; what it did not read is lost, as in a shell
    });
    child.on('error', (e: NodeJS.ErrnoException) => this.onSpawnError(e));
    child.on('exit', (code, signal) => this.onExit(code, signal));
  }

  /** Spawn failure (ENOENT, EACCES, EAGAIN): no 'exit' follows. */
  private onSpawnError(e: NodeJS.ErrnoException): void {
    if (this.exited) return;
    this.exited = { code: null, signal: null };
    this.startError = e.code ?? e.message;
    this.openStreams = 0;
    this.finish();
  }

  private onExit(code: number | null, signal: string | null): void {
    this.exited = { code, signal };
    endLeftovers(treeTarget(this.pid, this.spec), this.spec);
    if (this.openStreams === 0) return this.finish();
    // Killed leftovers close the pipes at once; a process that left the group may hold them: stop waiting soon.
    this.drainTimer = setTimeout(() => {
      this.child.stdout.destroy();
      this.child.stderr.destroy();
      this.finish();
    }, DRAIN_AFTER_EXIT_MS);
  }

  private finish(): void {
    if (this.done || !this.exited) return;
    this.done = true;
    this.stdinIsOpen = false;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    endCgroup(this.spec.cgroup, this.limited, this.ev);
    this.ev.onExit(this.exited.code, this.exited.signal, this.startError);
  }

  // A spawn that fails has no pid; 'error' then reports the failure.
  get pid(): number {
    return this.child.pid ?? 0;
  }

  get stdinOpen(): boolean {
    return this.stdinIsOpen && !this.done;
  }

  write(data: string): boolean {
    if (!this.stdinIsOpen || this.done) return false;
    this.child.stdin.write(data);
    return true;
  }

  closeStdin(): void {
    if (!this.stdinIsOpen) return;
    this.stdinIsOpen = false;
    this.child.stdin.end();
  }

  signal(sig: NodeJS.Signals): boolean {
    return signalTree(treeTarget(this.pid, this.spec), sig);
  }

  pause(): void {
    this.child.stdout.pause();
    this.child.stderr.pause();
  }

  resume(): void {
    this.child.stdout.resume();
    this.child.stderr.resume();
  }
}

/** The handle of a command that could not be started: its failure is reported as its exit, a moment later. */
function notStarted(spec: SpawnSpec, ev: ProcessEvents, why: string): PipeHandle {
  if (spec.cgroup) endCgroup(spec.cgroup, false, ev);
  setImmediate(() => ev.onExit(null, null, why));
  return {
    pid: 0,
    tty: false,
    limited: false,
    stdinOpen: false,
    write: () => false,
    closeStdin() {},
    signal: () => false,
    pause() {},
    resume() {},
  };
}
