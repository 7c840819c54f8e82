// One command as a workspace resource (docs/design-notes.md#command-status): its state machine running →
// exited | timeout | terminated | killed | failed, its two output streams, what has already been handed back,
// and waits that end on a condition or a deadline. A command belongs to the runtime, never to the request or
// connection that started it: nothing here looks at who asks.
import type { Clock } from '../../core/clock.js';
import {
  outputNote,
  proxyNote,
  SCAN_MAX_BYTES,
  SCAN_OVERLAP,
  type BlockedNote,
  type NoteContext,
} from './blocked.js';
import type { NetDecision } from '../net/net-decision.js';
import { StreamBuffer } from './output.js';
import type { ProcessHandle } from '../spawn/spawn.js';
import { signalName } from '../spawn/tree.js';

export type CommandStatus = 'running' | 'exited' | 'timeout' | 'terminated' | 'killed' | 'failed';
export type StreamName = 'stdout' | 'stderr';

export interface CommandInit {
  id: string;
  cmd: string;
  workdir: string;
  tty: boolean;
  sandboxed: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  tailBytes: number;
  clock: Clock;
  /** How to read a `blocked` note from its error output (blocked.ts); absent: none is looked for. */
  notes?: NoteContext;
}

/** After a timeout's TERM, how long before KILL. */
export const TIMEOUT_KILL_GRACE_MS = 2000;

export class Command {
  readonly id: string;
  readonly cmd: string;
  readonly workdir: string;
  readonly tty: boolean;
  readonly sandboxed: boolean;
  readonly maxOutputBytes: number;
  readonly timeoutMs: number;
  readonly startedMono: number;
  status: CommandStatus = 'running';
  exitCode: number | null = null;
  signal: string | null = null;
  /** Wall-clock ms when it finished (retention is measured from here). */
  finishedAt: number | null = null;
  endedMono: number | null = null;
  startError: string | undefined;
  readonly streams: Record<StreamName, StreamBuffer>;
  /** How far each stream was handed back by exec_command / write_stdin. */
  readonly cursor: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  /** A final status has been returned to some client at least once (docs/design-notes.md#bash-and-retention). */
  finalReturned = false;
  /** Signals this server sent, by name. */
  readonly sent = new Set<string>();
  escalated = false;
  timedOut = false;
  private handle: ProcessHandle | undefined;
  private readonly waiters = new Set<() => void>();
  private timers: NodeJS.Timeout[] = [];
  private readonly clock: Clock;
  onFinish: ((c: Command) => void) | undefined;
  /** What the proxy refused this command (exact), and what its error output says was blocked (blocked.ts). */
  private proxyBlock: BlockedNote | undefined;
  private outputBlock: BlockedNote | undefined;
  private readonly notes: NoteContext | undefined;
  private scanned = 0;
  /** The end of the error output already looked at: a message written in pieces is still recognised. */
  private scanTail = '';
  /** The note was handed back while running / with the final status. */
  private noteShown = false;
  private noteShownFinal = false;

  constructor(init: CommandInit) {
    this.id = init.id;
    this.cmd = init.cmd;
    this.workdir = init.workdir;
    this.tty = init.tty;
    this.sandboxed = init.sandboxed;
    this.maxOutputBytes = init.maxOutputBytes;
    this.timeoutMs = init.timeoutMs;
    this.clock = init.clock;
    this.notes = init.notes;
    this.startedMono = init.clock.monotonic();
    this.streams = { stdout: new StreamBuffer(init.tailBytes), stderr: new StreamBuffer(init.tailBytes) };
  }

  get running(): boolean {
    return this.status === 'running';
  }

  get stdinOpen(): boolean {
    return this.running && (this.handle?.stdinOpen ?? false);
  }

  get pid(): number {
    return this.handle?.pid ?? 0;
  }

  /** Whether a pids cgroup bounds the tree (undefined until the spawner has said). */
  get limited(): boolean | undefined {
    return this.handle?.limited;
  }

  get elapsedMs(): number {
    return Math.round((this.endedMono ?? this.clock.monotonic()) - this.startedMono);
  }

  get retainedBytes(): number {
    return this.streams.stdout.retainedBytes + this.streams.stderr.retainedBytes;
  }

  /** Bytes not yet handed back by exec_command / write_stdin. */
  get hasUnreturnedOutput(): boolean {
    return this.streams.stdout.total > this.cursor.stdout || this.streams.stderr.total > this.cursor.stderr;
  }

  /** Settles once the process exists or has ended: a `running` answer must name a spawned process. */
  started(): Promise<void> {
    return this.handle?.whenStarted ?? Promise.resolve();
  }

  attach(handle: ProcessHandle): void {
    this.handle = handle;
    const t = setTimeout(() => this.onTimeout(), this.timeoutMs);
    t.unref();
    this.timers.push(t);
  }

  output(stream: StreamName, chunk: Buffer): void {
    this.streams[stream].append(chunk);
    if (
      this.notes &&
      !this.outputBlock &&
      this.scanned < SCAN_MAX_BYTES &&
      (stream === 'stderr' || this.tty)
    ) {
      this.scanned += chunk.length;
      const text = this.scanTail + chunk.toString('latin1');
      this.outputBlock = outputNote(text, this.notes);
      this.scanTail = text.slice(-SCAN_OVERLAP);
    }
    this.notify();
  }

  /** The proxy refused something this command asked for; the first refusal is the one reported. */
  /** The proxy refused one of this command's requests (net-access.ts): a note where the sandbox, not the network, said no. */
  refused(d: NetDecision): void {
    const note = proxyNote(d);
    if (note) this.block(note);
  }

  block(note: BlockedNote): void {
    this.proxyBlock ??= note;
  }

  /** What was blocked, if anything: the proxy's refusal first, else what the output said. */
  get blocked(): BlockedNote | undefined {
    return this.proxyBlock ?? this.outputBlock;
  }

  /** The note for the result being shaped: once when it is new, and once more with the final status. */
  takeBlocked(): BlockedNote | undefined {
    const n = this.blocked;
    if (!n) return undefined;
    if (this.running) {
      if (this.noteShown) return undefined;
      this.noteShown = true;
      return n;
    }
    if (this.noteShownFinal) return undefined;
    this.noteShown = this.noteShownFinal = true;
    return n;
  }

  /** The leader exited and its streams are drained. */
  exited(code: number | null, sig: string | null, startError?: string): void {
    if (!this.running) return;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.endedMono = this.clock.monotonic();
    this.finishedAt = this.clock.now();
    if (startError !== undefined) {
      this.startError = startError;
      this.status = 'failed';
      this.streams.stderr.append(
        Buffer.from(`workbench-mcp: the command could not be started: ${startError}\n`),
      );
    } else {
      // bwrap reports a signalled command as exit 128+N; it is a signal when this server sent that signal.
      if (sig === null && this.sandboxed && code !== null && code > 128) {
        const name = signalName(code - 128);
        if (name && this.sent.has(name)) sig = name;
      }
      this.signal = sig;
      this.exitCode = sig === null ? code : null;
      if (this.timedOut) this.status = 'timeout';
      else if (sig === null) this.status = 'exited';
      else if (this.escalated && sig === 'SIGKILL') this.status = 'killed';
      else this.status = 'terminated';
    }
    this.notify();
    this.onFinish?.(this);
  }

  /** Send a signal to the whole tree; false when nothing was left to signal. */
  send(sig: NodeJS.Signals): boolean {
    if (!this.handle || !this.running) return false;
    const ok = this.handle.signal(sig);
    if (ok) this.sent.add(sig);
    return ok;
  }

  write(data: string): boolean {
    return this.handle?.write(data) ?? false;
  }

  closeStdin(): void {
    this.handle?.closeStdin();
  }

  private onTimeout(): void {
    if (!this.running) return;
    this.timedOut = true;
    this.send('SIGTERM');
    const t = setTimeout(() => {
      if (this.running) this.send('SIGKILL');
    }, TIMEOUT_KILL_GRACE_MS);
    t.unref();
    this.timers.push(t);
  }

  /** Ask for escalation bookkeeping before sending SIGKILL after a softer signal. */
  escalate(): boolean {
    this.escalated = true;
    return this.send('SIGKILL');
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /**
   * Resolve when `done()` holds (checked now and after every change), after `ms`, or on abort. Returns
   * whether the condition held.
   */
  waitUntil(done: () => boolean, ms: number, signal?: AbortSignal): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    if (ms <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (v: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const check = () => {
        if (done()) finish(true);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(done()), ms);
      this.waiters.add(check);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
