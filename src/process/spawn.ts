// Starting a shell command (decision 19): the only importer of child_process for commands and of the PTY
// library. A command runs in its own session and process group (pipes: detached → setsid; PTY: the PTY
// library makes the child a session leader), so the whole tree can be signalled at once. The argv it gets
// is already complete (shell + sandbox wrapper); nothing here decides policy.
import { spawn as spawnChild } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { signalName, signalTree, treeAlive, type TreeTarget } from './tree.js';

export interface SpawnSpec {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** Runs inside bubblewrap: the leader is bwrap, spared by signals other than SIGKILL. */
  sandboxed: boolean;
  cols?: number;
  rows?: number;
}

export interface ProcessEvents {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /**
   * Once, after the leader exited and its output streams are drained (or given up on). `startError` is set
   * when the process could not be started at all.
   */
  onExit(code: number | null, signal: string | null, startError?: string): void;
}

export interface ProcessHandle {
  readonly pid: number;
  readonly tty: boolean;
  /** false once stdin was closed (pipes) or the process ended. */
  readonly stdinOpen: boolean;
  write(data: string): boolean;
  closeStdin(): void;
  /** Signal the whole tree; false when no process was left to signal. */
  signal(sig: NodeJS.Signals): boolean;
}

export class SpawnError extends Error {
  constructor(
    message: string,
    readonly kind: 'tty' | 'spawn',
  ) {
    super(message);
  }
}

/** After the leader exits, how long its streams may stay open (a leftover child holding them) before we stop waiting. */
const DRAIN_AFTER_EXIT_MS = 500;

export const PTY_COLS = 200;
export const PTY_ROWS = 50;

/** Absolute path of an executable named `name` on `pathVar`, or undefined. */
export function findExecutable(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(':')) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** decision 19: bash when it exists, else sh. */
export function findShell(pathVar: string | undefined): { path: string; name: 'bash' | 'sh' } {
  const searchPath = `${pathVar ?? ''}:/usr/bin:/bin`;
  const bash = findExecutable('bash', searchPath);
  if (bash) return { path: bash, name: 'bash' };
  return { path: findExecutable('sh', searchPath) ?? '/bin/sh', name: 'sh' };
}

type PtyModule = typeof import('@lydell/node-pty');
let ptyModule: PtyModule | undefined;
let ptyError: string | undefined;

/** The PTY library, loaded on first use (its native part is not needed by servers that never use a tty). */
export function loadPty(): PtyModule | string {
  if (ptyModule) return ptyModule;
  if (ptyError) return ptyError;
  try {
    ptyModule = createRequire(import.meta.url)('@lydell/node-pty') as PtyModule;
    return ptyModule;
  } catch (e) {
    ptyError = `the PTY library @lydell/node-pty cannot be loaded on this platform (${(e as Error).message.split('\n')[0]})`;
    return ptyError;
  }
}

function target(leader: number, spec: SpawnSpec): TreeTarget {
  return { leader, bySession: spec.tty || spec.sandboxed, spareLeader: spec.sandboxed };
}

export function spawnProcess(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
  return spec.tty ? spawnPty(spec, ev) : spawnPipes(spec, ev);
}

function spawnPipes(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
  const [file, ...args] = spec.argv as [string, ...string[]];
  const child = spawnChild(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let stdinOpen = true;
  let done = false;
  let exited: { code: number | null; signal: string | null } | undefined;
  let openStreams = 2;
  let drainTimer: NodeJS.Timeout | undefined;

  let startError: string | undefined;
  const finish = () => {
    if (done || !exited) return;
    done = true;
    stdinOpen = false;
    if (drainTimer) clearTimeout(drainTimer);
    ev.onExit(exited.code, exited.signal, startError);
  };
  child.stdout.on('data', ev.onStdout);
  child.stderr.on('data', ev.onStderr);
  for (const s of [child.stdout, child.stderr]) {
    s.once('close', () => {
      openStreams--;
      if (openStreams === 0) finish();
    });
  }
  child.stdin.on('error', () => {
    stdinOpen = false; // EPIPE: the command stopped reading; what it did not read is lost, as in a shell
  });
  child.on('error', (e: NodeJS.ErrnoException) => {
    // Spawn failure (ENOENT, EACCES, EAGAIN): no 'exit' follows.
    if (exited) return;
    exited = { code: null, signal: null };
    startError = e.code ?? e.message;
    openStreams = 0;
    finish();
  });
  child.on('exit', (code, signal) => {
    exited = { code, signal };
    endLeftovers(target(child.pid ?? 0, spec), spec);
    if (openStreams === 0) return finish();
    // Killed leftovers close the pipes at once; a process that left the group may hold them: stop waiting soon.
    drainTimer = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
      finish();
    }, DRAIN_AFTER_EXIT_MS);
  });
  return {
    // A spawn that fails has no pid; 'error' then reports the failure.
    get pid() {
      return child.pid ?? 0;
    },
    tty: false,
    get stdinOpen() {
      return stdinOpen && !done;
    },
    write(data: string) {
      if (!stdinOpen || done) return false;
      child.stdin.write(data);
      return true;
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      child.stdin.end();
    },
    signal: (sig) => signalTree(target(child.pid ?? 0, spec), sig),
  };
}

function spawnPty(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
  const mod = loadPty();
  if (typeof mod === 'string') throw new SpawnError(mod, 'tty');
  const [file, ...args] = spec.argv as [string, ...string[]];
  let term: ReturnType<PtyModule['spawn']>;
  try {
    term = mod.spawn(file, args, {
      name: spec.env.TERM ?? 'xterm-256color',
      cols: spec.cols ?? PTY_COLS,
      rows: spec.rows ?? PTY_ROWS,
      cwd: spec.cwd,
      env: spec.env,
      encoding: null,
    });
  } catch (e) {
    throw new SpawnError(`the PTY could not be started: ${(e as Error).message}`, 'spawn');
  }
  let done = false;
  // The library throws on stream errors nobody listens to; EIO at exit is normal.
  (term as unknown as { on(ev: string, f: (e: unknown) => void): void }).on('error', () => {});
  term.onData((d: string | Buffer) => ev.onStdout(typeof d === 'string' ? Buffer.from(d) : d));
  term.onExit(({ exitCode, signal }) => {
    if (done) return;
    done = true;
    endLeftovers(target(term.pid, spec), spec);
    // The library reports a signal number; 0 means none.
    const sig = signal ? signalName(signal) : null;
    ev.onExit(sig ? null : exitCode, sig);
  });
  return {
    pid: term.pid,
    tty: true,
    get stdinOpen() {
      return !done;
    },
    write(data: string) {
      if (done) return false;
      term.write(data);
      return true;
    },
    closeStdin() {
      /* a terminal's input stays open; EOF is written as ^D by the caller */
    },
    signal: (sig) => signalTree(target(term.pid, spec), sig),
  };
}

/**
 * A command ends with its leader: background jobs it left behind are killed, as the PID namespace of the
 * sandbox does anyway, so no orphan outlives the command that nobody could kill any more. (A program that
 * started its own session — a daemon — is not a member and is left alone.)
 */
function endLeftovers(t: TreeTarget, spec: SpawnSpec): void {
  // In bubblewrap the leader exits only after the PID namespace is gone: nothing can be left.
  if (spec.sandboxed) return;
  if (treeAlive(t)) signalTree({ ...t, spareLeader: false }, 'SIGKILL');
}
