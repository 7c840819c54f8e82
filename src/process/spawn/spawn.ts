// Starting a shell command (docs/design-notes.md#bash-and-retention): the types every starter shares, the
// shell and executable lookup, and commands in a real terminal — the only importer of the PTY library. A
// command runs in its own session and process group (pipes: detached → setsid, in pipes.ts; PTY: the library
// makes the child a session leader), so the whole tree can be signalled at once. The argv it gets is already
// complete (shell + sandbox wrapper); nothing here decides policy.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { endCgroup, endLeftovers, inCgroup, treeTarget } from './pipes.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from './spawn-types.js';

export type { ProcessEvents, ProcessHandle, SpawnSpec };
import { signalName, signalTree } from './tree.js';

export class SpawnError extends Error {
  constructor(
    message: string,
    readonly kind: 'tty' | 'spawn',
  ) {
    super(message);
  }
}

export const PTY_COLS = 200;
export const PTY_ROWS = 50;

/** Absolute path of an executable named `name` on `pathVar`, or undefined. */
export function findExecutable(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(':')) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const p = path.join(dir, name);
    if (isExecutable(p)) return p;
  }
  return undefined;
}

export function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** docs/design-notes.md#bash-and-retention: bash when it exists, else sh. */
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

/** A command in a real terminal (stdout and stderr merged, input stays open), started in this process. */
export function spawnPty(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
  const mod = loadPty();
  if (typeof mod === 'string') throw new SpawnError(mod, 'tty');
  // A terminal's child gets no descriptors beyond the terminal: a shell opens the filter for bwrap, then execs it.
  const argv = spec.seccomp ? ['/bin/sh', '-c', 'exec "$@" 3<"$0"', spec.seccomp, ...spec.argv] : spec.argv;
  const [file, ...args] = argv as [string, ...string[]];
  let term: ReturnType<PtyModule['spawn']>;
  let limited = false;
  try {
    ({ result: term, limited } = inCgroup(spec.cgroup, () =>
      mod.spawn(file, args, {
        name: spec.env.TERM ?? 'xterm-256color',
        cols: spec.cols ?? PTY_COLS,
        rows: spec.rows ?? PTY_ROWS,
        cwd: spec.cwd,
        env: spec.env,
        encoding: null,
      }),
    ));
  } catch (e) {
    if (spec.cgroup) endCgroup(spec.cgroup, false, ev);
    throw new SpawnError(`the PTY could not be started: ${(e as Error).message}`, 'spawn');
  }
  let done = false;
  // The library throws on stream errors nobody listens to; EIO at exit is normal.
  ignoreErrors(term);
  term.onData((d: string | Buffer) => ev.onStdout(typeof d === 'string' ? Buffer.from(d) : d));
  term.onExit(({ exitCode, signal }) => {
    if (done) return;
    done = true;
    endLeftovers(treeTarget(term.pid, spec), spec);
    // The library reports a signal number; 0 means none.
    const sig = signal ? signalName(signal) : null;
    endCgroup(spec.cgroup, limited, ev);
    ev.onExit(sig ? null : exitCode, sig);
  });
  return {
    pid: term.pid,
    tty: true,
    limited,
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
    signal: (sig) => signalTree(treeTarget(term.pid, spec), sig),
  };
}

/** node-pty's terminal is an event emitter at run time, though its type does not say so: listen for errors. */
function ignoreErrors(term: object): void {
  if ('on' in term && typeof term.on === 'function') term.on('error', () => {});
}
