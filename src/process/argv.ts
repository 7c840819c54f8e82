// The argv runner: how git/ and the ripgrep search start a program. Never a shell; a bounded wait; stdout
// bounded while it is read (not after), with an optional streaming consumer that may stop the program early;
// inside the tool jail (jail.ts) when one is given. process/ is the only place that imports child_process.
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import type { ToolJail } from './jail.js';
import { openFilter } from './pipes.js';

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
  /** Run the program in this jail (the workspace read-only, nothing else of the host). */
  jail?: ToolJail;
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

const EMPTY: ArgvResult = {
  stdout: Buffer.alloc(0),
  stderr: '',
  code: null,
  signal: null,
  truncated: false,
  timedOut: false,
  stopped: false,
};

export function runArgv(file: string, args: readonly string[], opts: ArgvOptions): Promise<ArgvResult> {
  return new Promise((resolve) => {
    const run = opts.jail?.wrap(file, args, opts.cwd) ?? { file, args: [...args] };
    let filter: number | undefined;
    let child;
    try {
      filter = openFilter(run.seccomp);
      child = spawn(run.file, run.args, {
        cwd: opts.cwd,
        env: opts.env,
        stdio: filter === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe', filter],
        detached: false,
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      return resolve({ ...EMPTY, spawnError: code });
    } finally {
      if (filter !== undefined) closeSync(filter);
    }
    const stdout = child.stdout as NonNullable<typeof child.stdout>;
    const stderr = child.stderr as NonNullable<typeof child.stderr>;
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
    stdout.on('data', (chunk: Buffer) => {
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
    stderr.on('data', (chunk: Buffer) => {
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
