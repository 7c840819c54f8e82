// The argv runner: how git/ and the ripgrep search start a program. Never a shell; a bounded wait; stdout
// bounded while it is read (not after), with an optional streaming consumer that may stop the program early;
// inside the tool jail (jail.ts) when one is given. process/ is the only place that imports child_process.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import type { ToolJail } from './jail.js';
import type { JailRun } from './prepared-jail.js';
import { openFilter } from '../spawn/pipes.js';

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
  /**
   * It needs nothing of the system and `cwd` is held open on this descriptor: in the jail it sees only its own
   * directory and that one (jail.ts wrapAlone).
   */
  aloneIn?: number;
  /** A server-owned directory the program may write inside the jail in this call (jail.ts wrap). */
  writable?: string;
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
  const started = startArgv(file, args, opts);
  if (typeof started === 'string') return Promise.resolve({ ...EMPTY, spawnError: started });
  const done = followRun(started.run, opts);
  // The next prepared jail is asked for once this run has its result: a reported end comes before the jail
  // has been torn down, and the next call may follow at once.
  if (started.refill) void done.then(started.refill);
  return done;
}

/** The run of a started program to its end, bounded as `opts` says (runArgv's second half). */
export function followRun(run: JailRun, opts: ArgvOptions): Promise<ArgvResult> {
  return new Promise((resolve) => new ArgvRun(run, opts, resolve));
}

/**
 * The started child (whether it leads a process group of its own, where its end is reported) and what asks for
 * the next prepared jail once it has ended, or the error code.
 */
function startArgv(
  file: string,
  args: readonly string[],
  opts: ArgvOptions,
): { run: JailRun; refill?: () => void } | string {
  const j = opts.jail;
  const alone = opts.aloneIn;
  // A prepared jail has no writable directory: a run that needs one (the review points) gets a jail of its own.
  const prep =
    opts.writable === undefined
      ? j?.startPrepared(file, args, { cwd: opts.cwd, env: opts.env, dirFd: alone })
      : undefined;
  if (prep?.ready) return { run: prep.ready, refill: prep.refill };
  const run = (alone !== undefined
    ? j?.wrapAlone(file, args, opts.cwd, alone)
    : j?.wrap(file, args, opts.cwd, opts.writable)) ?? {
    file,
    args: [...args],
  };
  let filter: number | undefined;
  try {
    filter = openFilter(run.seccomp);
    const child = spawn(run.file, run.args, {
      cwd: opts.cwd,
      env: run.env ? { ...opts.env, ...run.env } : opts.env,
      stdio: ['ignore', 'pipe', 'pipe', filter ?? 'ignore', ...(run.fds ?? [])],
      detached: run.group === true,
    });
    if (run.done) child.once('close', run.done).once('error', run.done);
    return { run: { child, group: run.group === true, sweep: run.sweep }, refill: prep?.refill };
  } catch (e) {
    run.done?.();
    return (e as NodeJS.ErrnoException).code ?? String(e);
  } finally {
    if (filter !== undefined) closeSync(filter);
  }
}

/** One run of a started program: its output, bounded while read, and the first of close, error or timeout. */
class ArgvRun {
  private readonly out: Buffer[] = [];
  private outBytes = 0;
  private err = '';
  private readonly maxErr: number;
  private readonly state = { truncated: false, timedOut: false, stopped: false };
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => {
    this.state.stopped = true;
    this.kill();
  };
  private readonly child: ChildProcess;
  /** The child leads a process group (jail.ts `Jailed.group`): the whole group is ended with it. */
  private readonly group: boolean;

  constructor(
    run: JailRun,
    private readonly opts: ArgvOptions,
    private readonly resolve: (r: ArgvResult) => void,
  ) {
    this.child = run.child;
    this.group = run.group;
    const child = run.child;
    this.maxErr = opts.maxStderrBytes ?? 64 * 1024;
    this.timer = setTimeout(() => {
      this.state.timedOut = true;
      this.kill();
    }, opts.timeoutMs);
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    (child.stdout as Readable).on('data', (chunk: Buffer) => this.onStdout(chunk));
    (child.stderr as Readable).on('data', (chunk: Buffer) => {
      if (this.err.length < this.maxErr)
        this.err += chunk.toString('utf8').slice(0, this.maxErr - this.err.length);
    });
    child.on('error', (e: NodeJS.ErrnoException) => this.finish({ spawnError: e.code ?? e.message }));
    child.on('close', (code, signal) => this.finish({ code, signal }));
    // What the program left behind in its group would otherwise hold the pipes open until the timeout (a PID
    // namespace ends it by itself: bubblewrap's jails are not swept, which would cost a failed kill per run).
    if (run.sweep) child.on('exit', () => this.killGroup());
    if (run.report) this.whenReported(run.report);
  }

  /**
   * A jail that reports the program's end (prepared-jail.ts): the result is its status once the program's
   * output has ended too, while the jail is still being torn down. Without a report (the jail was killed, or
   * the message is not one wb-exec writes) the jail's own close decides, as for any other start.
   */
  private whenReported(report: Readable): void {
    let head = Buffer.alloc(0);
    let told: Partial<ArgvResult> | undefined;
    let open = 2;
    const settle = () => {
      if (told && open === 0) this.finish(told);
    };
    const ended = () => {
      open--;
      settle();
    };
    this.child.stdout?.once('end', ended);
    this.child.stderr?.once('end', ended);
    report.on('data', (chunk: Buffer) => {
      if (told || head.length >= REPORT_BYTES) return;
      head = Buffer.concat([head, chunk]);
      if (head.length < REPORT_BYTES) return;
      told = reportedEnd(head);
      settle();
    });
  }

  private kill(): void {
    const exited = this.child.exitCode !== null || this.child.signalCode !== null;
    if (this.group) this.killGroup();
    else if (!exited) this.child.kill('SIGKILL');
    // A process that left the group may still hold the pipes: the result does not wait for it.
    if (exited) {
      this.child.stdout?.destroy();
      this.child.stderr?.destroy();
      this.finish({ code: this.child.exitCode, signal: this.child.signalCode });
    }
  }

  private killGroup(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      /* the group is gone */
    }
  }

  private onStdout(chunk: Buffer): void {
    const { state, opts } = this;
    if (state.truncated || state.stopped) return;
    this.outBytes += chunk.length;
    if (this.outBytes > opts.maxStdoutBytes) {
      state.truncated = true;
      const keep = chunk.length - (this.outBytes - opts.maxStdoutBytes);
      if (keep > 0) this.deliver(chunk.subarray(0, keep));
      this.kill();
      return;
    }
    this.deliver(chunk);
  }

  private deliver(chunk: Buffer): void {
    if (!this.opts.onStdout) this.out.push(chunk);
    else if (this.opts.onStdout(chunk) === false) {
      this.state.stopped = true;
      this.kill();
    }
  }

  private finish(r: Partial<ArgvResult>): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    this.resolve({
      stdout: Buffer.concat(this.out),
      stderr: this.err,
      code: null,
      signal: null,
      ...this.state,
      ...r,
    });
  }
}

/** wb-exec's report (native/wb-exec.c --status-fd): "WBS1", then 0 and the exit status or 1 and the signal. */
const REPORT_BYTES = 12;

function reportedEnd(m: Buffer): Partial<ArgvResult> | undefined {
  if (m.toString('latin1', 0, 4) !== 'WBS1') return undefined;
  const kind = m.readUInt32LE(4);
  const value = m.readUInt32LE(8);
  if (kind === 0) return { code: value, signal: null };
  const name = Object.entries(constants.signals).find(([, n]) => n === value)?.[0];
  return kind === 1 && name ? { code: null, signal: name as NodeJS.Signals } : undefined;
}
