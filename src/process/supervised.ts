// Long-running children supervised by the CLI (process/ owns every child process): the server and the
// provider CLI that `workbench-mcp tunnel` runs. Spawned with an explicit environment (secrets never in argv),
// their output split into lines (the last ones kept for the message when a process dies), an `exited` promise,
// and stop(): SIGTERM, then SIGKILL if it is still there after a grace period.
import { spawn, type ChildProcess } from 'node:child_process';
import { LineFramer } from '../core/text/line-framer.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all. */
  error?: string;
}

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<Exit>;
  /** Whether it has exited. */
  done(): boolean;
  /** The last output lines (stdout and stderr), oldest first. */
  tail(): string[];
  onLine(cb: (line: string) => void): void;
  stop(): Promise<Exit>;
}

const KEEP_LINES = 25;
/** How long a process gets to end after SIGTERM before SIGKILL. */
const GRACE_MS = 10_000;

export function startChild(
  name: string,
  file: string,
  args: readonly string[],
  env: Record<string, string>,
  opts: { cwd?: string } = {},
): Child {
  const proc = spawn(file, args, { env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const kept: string[] = [];
  const listeners: Array<(line: string) => void> = [];
  let finished: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    proc.once('exit', (code, signal) => resolve((finished ??= { code, signal })));
    proc.once('error', (e: NodeJS.ErrnoException) => {
      // 'error' without 'exit' means it never started; after a start, 'exit' follows and wins.
      if (proc.pid === undefined)
        resolve((finished ??= { code: null, signal: null, error: e.code ?? e.message }));
    });
  });
  const emit = (line: string) => {
    kept.push(line);
    if (kept.length > KEEP_LINES) kept.shift();
    for (const l of listeners) l(line);
  };
  for (const stream of [proc.stdout, proc.stderr]) {
    // "\r\n" ends a line as "\n" does.
    const lines = new LineFramer({ onLine: (b) => emit(b.toString('utf8').replace(/\r$/, '')) });
    stream?.on('data', (chunk: Buffer) => lines.push(chunk));
    stream?.on('end', () => lines.end());
  }
  return {
    name,
    proc,
    exited,
    done: () => finished !== undefined,
    tail: () => [...kept],
    onLine: (cb) => void listeners.push(cb),
    async stop() {
      if (finished) return finished;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), GRACE_MS);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
}

/** "exited with code 1" / "was killed by SIGKILL" / "could not start (EACCES)". */
export function describeExit(e: Exit): string {
  if (e.error) return `could not start (${e.error})`;
  if (e.signal) return `was killed by ${e.signal}`;
  return `exited with code ${e.code}`;
}
