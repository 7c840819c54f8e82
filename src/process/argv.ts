// The argv runner: how git/ and the ripgrep search start a program. Never a shell; a bounded wait; stdout
// bounded while it is read (not after), with an optional streaming consumer that may stop the program early.
// process/ is the only place that imports child_process.
import { spawn } from 'node:child_process';

export interface ArgvOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Stop reading (and kill the program) past this many stdout bytes. */
  maxStdoutBytes: number;
  maxStderrBytes?: number;
  /** Receives stdout as it arrives; returning false stops the program (result.stopped = true). */
  onStdout?: (chunk: Buffer) => boolean | void;
  signal?: AbortSignal;
}

export interface ArgvResult {
  /** Collected stdout (empty when onStdout consumed it). */
  stdout: Buffer;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  truncated: boolean;
  timedOut: boolean;
  stopped: boolean;
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  spawnError?: string;
}

export function runArgv(file: string, args: readonly string[], opts: ArgvOptions): Promise<ArgvResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: false,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    const maxErr = opts.maxStderrBytes ?? 64 * 1024;
    const state = { truncated: false, timedOut: false, stopped: false };
    let settled = false;
    const kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      state.timedOut = true;
      kill();
    }, opts.timeoutMs);
    const onAbort = () => {
      state.stopped = true;
      kill();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (state.truncated || state.stopped) return;
      outBytes += chunk.length;
      if (outBytes > opts.maxStdoutBytes) {
        state.truncated = true;
        const keep = chunk.length - (outBytes - opts.maxStdoutBytes);
        if (keep > 0) deliver(chunk.subarray(0, keep));
        kill();
        return;
      }
      deliver(chunk);
    });
    const deliver = (chunk: Buffer) => {
      if (opts.onStdout) {
        if (opts.onStdout(chunk) === false) {
          state.stopped = true;
          kill();
        }
      } else out.push(chunk);
    };
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < maxErr) err += chunk.toString('utf8').slice(0, maxErr - err.length);
    });
    const finish = (r: Partial<ArgvResult>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ stdout: Buffer.concat(out), stderr: err, code: null, signal: null, ...state, ...r });
    };
    child.on('error', (e: NodeJS.ErrnoException) => finish({ spawnError: e.code ?? e.message }));
    child.on('close', (code, signal) => finish({ code, signal }));
  });
}
