// The server's side of the spawner helper (spawner-main.ts): pipe commands are started there, because fork()
// in a process as large as the server costs milliseconds per command and blocks the event loop. The helper is
// started on first use, relays output and exit in order over IPC, and is replaced if it dies, sends anything
// that is not a well-formed message, or stops answering pings (stopped, or hung): its running commands are
// then killed and reported as such, and waiting calls return. Without a built helper (or if it cannot start)
// commands are started in this process instead — same behaviour, slower. Each sandboxed command is a
// bubblewrap sandbox of its own with its own PID namespace, so no command can see the helper or another one.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/log.js';
import { killCgroup, releaseCgroup } from './cgroup.js';
import { spawnPipes, treeTarget } from './pipes.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from './spawn.js';
import { parseFromHelper, type FromHelper, type ToHelper } from './spawner-messages.js';
import { signalTree } from './tree.js';

interface Remote {
  /** The helper it was handed to. */
  owner: ChildProcess;
  spec: SpawnSpec;
  ev: ProcessEvents;
  pid: number;
  limited: boolean | undefined;
  stdinOpen: boolean;
  done: boolean;
  /** Signals asked for before the pid was known. */
  pending: NodeJS.Signals[];
  /** Resolves the handle's whenStarted: the helper reported the spawn (or the end). */
  started: () => void;
}

/** Consecutive helper failures after which commands are started in this process for good. */
const MAX_HELPER_FAILURES = 3;
/** How long close() waits for the helper to exit before killing it. */
const CLOSE_WAIT_MS = 2000;
/** The helper is pinged this often while it runs … */
export const PING_MS = 250;
/** … and replaced when a ping is unanswered this long and the kernel says it is stopped (SIGSTOP, a tracer) … */
export const STOPPED_AFTER_MS = 1000;
/** … or this long whatever its state (a loop). */
export const HUNG_AFTER_MS = 5000;

/** The compiled helper next to this module (dist), or in dist/ when this module runs from source (tests). */
let helperFile: string | null | undefined;

export function helperPath(): string | undefined {
  if (helperFile !== undefined) return helperFile ?? undefined;
  helperFile = findHelper() ?? null;
  return helperFile ?? undefined;
}

function findHelper(): string | undefined {
  const candidates = [
    new URL('./spawner-main.js', import.meta.url),
    new URL('../../dist/process/spawner-main.js', import.meta.url),
  ];
  for (const u of candidates) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  return undefined;
}

function startHelper(file: string): ChildProcess {
  return fork(file, [], {
    // A small young generation keeps the helper's memory small; it only relays bytes.
    execArgv: ['--max-semi-space-size=1'],
    env: {},
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
}

/** Whether the kernel reports `pid` as stopped (`T`) or stopped by a tracer (`t`). */
function stopped(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}

export class Spawner {
  private child: ChildProcess | undefined;
  private readonly remotes = new Map<number, Remote>();
  private seq = 0;
  private failures = 0;
  private closed = false;
  private everReady = false;
  private readonly upWaiters: Array<() => void> = [];
  private watch: NodeJS.Timeout | undefined;
  /** The unanswered ping: its number and when it was sent. */
  private ping: { n: number; at: number } | undefined;
  private lastTick = 0;

  constructor(private readonly log: Logger) {}

  /** Whether a helper runs or can be started. */
  get available(): boolean {
    return !this.closed && this.failures < MAX_HELPER_FAILURES && helperPath() !== undefined;
  }

  spawn(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
    const child = this.helper();
    // A command that comes while the helper is still starting (or when none can) is started here.
    if (!child || !this.everReady) return spawnPipes(spec, ev);
    const id = ++this.seq;
    let started!: () => void;
    const whenStarted = new Promise<void>((resolve) => (started = resolve));
    const r: Remote = {
      owner: child,
      spec,
      ev,
      pid: 0,
      limited: undefined,
      stdinOpen: true,
      done: false,
      pending: [],
      started,
    };
    this.remotes.set(id, r);
    const { argv, cwd, env, sandboxed, cgroup, seccomp } = spec;
    this.post({ t: 'spawn', id, argv, cwd, env, sandboxed, cgroup, seccomp });
    return {
      get pid() {
        return r.pid;
      },
      get limited() {
        return r.limited;
      },
      tty: false,
      whenStarted,
      get stdinOpen() {
        return r.stdinOpen && !r.done;
      },
      write: (data) => {
        if (!r.stdinOpen || r.done) return false;
        this.post({ t: 'write', id, data }, r.owner);
        return true;
      },
      closeStdin: () => {
        if (!r.stdinOpen) return;
        r.stdinOpen = false;
        this.post({ t: 'end', id }, r.owner);
      },
      signal: (sig) => {
        if (r.done) return false;
        if (!r.pid) {
          r.pending.push(sig);
          return true;
        }
        return signalTree(treeTarget(r.pid, r.spec), sig);
      },
    };
  }

  /** Settles once a helper has come up (at once if one did), or when none can. */
  whenUp(): Promise<boolean> {
    if (this.everReady) return Promise.resolve(true);
    if (!this.available) return Promise.resolve(false);
    this.helper();
    return new Promise((resolve) => this.upWaiters.push(() => resolve(this.everReady)));
  }

  /** A helper has come up, or none can: commands no longer wait for one. */
  get settled(): boolean {
    return this.everReady || !this.available;
  }

  /** The helper's pid (for the liveness tests and the operator's own checks), when one runs. */
  get helperPid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the helper ahead of the first command. */
  warm(): void {
    this.helper();
  }

  /** Let the helper go (after the registry ended every command); resolves once it exited (killed after CLOSE_WAIT_MS). */
  close(): Promise<void> {
    this.closed = true;
    this.stopWatching();
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_WAIT_MS);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      if (child.connected) child.disconnect();
    });
  }

  private post(msg: ToHelper, child = this.child): void {
    if (!child?.connected) return;
    try {
      child.send(msg);
    } catch (e) {
      this.replace(child, `cannot be written to (${String(e)})`);
    }
  }

  private helper(): ChildProcess | undefined {
    if (this.child || this.closed || this.failures >= MAX_HELPER_FAILURES) return this.child;
    const file = helperPath();
    if (!file) {
      this.failures = MAX_HELPER_FAILURES;
      return undefined;
    }
    let child: ChildProcess;
    try {
      child = startHelper(file);
    } catch (e) {
      this.failures++;
      this.log.warn('the spawner helper cannot start; commands start in the server process', {
        error: String(e),
      });
      return undefined;
    }
    child.on('message', (m: unknown) => this.onMessage(child, m));
    child.on('exit', (code, signal) => this.onHelperExit(child, code, signal));
    child.on('error', (e) => this.log.warn('spawner helper error', { error: String(e) }));
    // Neither the helper nor its channel keeps the server alive; the helper exits when the server does.
    child.unref();
    (child as unknown as { channel?: { unref(): void } }).channel?.unref();
    this.child = child;
    this.startWatching();
    return child;
  }

  /**
   * Kill a helper that misbehaves. New commands go to the next helper at once; the commands it held end when
   * its exit is seen (onHelperExit).
   */
  private replace(child: ChildProcess, why: string): void {
    if (child !== this.child) return;
    this.log.warn(`the spawner helper ${why}; it is replaced`, {
      pid: child.pid,
      commands: this.remotes.size,
    });
    this.child = undefined;
    this.stopWatching();
    this.failures++;
    child.kill('SIGKILL');
  }

  private startWatching(): void {
    this.stopWatching();
    this.lastTick = Date.now();
    this.watch = setInterval(() => this.tick(), PING_MS);
    this.watch.unref();
  }

  private stopWatching(): void {
    clearInterval(this.watch);
    this.watch = undefined;
    this.ping = undefined;
  }

  /**
   * One liveness check. A late tick means this process was busy, not the helper: the pending ping's clock
   * starts again. Otherwise an unanswered ping past STOPPED_AFTER_MS replaces a helper the kernel reports as
   * stopped, and past HUNG_AFTER_MS any helper.
   */
  private tick(): void {
    const child = this.child;
    if (!child) return this.stopWatching();
    const now = Date.now();
    const late = now - this.lastTick > 2 * PING_MS;
    this.lastTick = now;
    if (this.ping && late) this.ping.at = now;
    if (!this.ping) {
      this.ping = { n: ++this.seq, at: now };
      this.post({ t: 'ping', n: this.ping.n });
      return;
    }
    const waited = now - this.ping.at;
    if (waited >= HUNG_AFTER_MS) this.replace(child, `did not answer for ${waited} ms`);
    else if (waited >= STOPPED_AFTER_MS && stopped(child.pid))
      this.replace(child, 'is stopped and does not answer');
  }

  private onMessage(child: ChildProcess, raw: unknown): void {
    if (child !== this.child) return;
    const m = parseFromHelper(raw);
    if (!m) return this.replace(child, 'sent a malformed message');
    if (m.t === 'pong') {
      if (this.ping?.n === m.n) this.ping = undefined;
      return;
    }
    if (m.t === 'ready') {
      this.failures = 0;
      this.everReady = true;
      for (const w of this.upWaiters.splice(0)) w();
      return;
    }
    const r = this.remotes.get(m.id);
    if (r && r.owner !== child) return this.replace(child, 'named a command of another helper');
    if (!r) {
      // Late output of a command already ended (killed) is expected; anything else names no command of ours.
      if (m.id > this.seq) this.replace(child, 'named a command it was never given');
      return;
    }
    this.onCommandMessage(m, r);
  }

  private onCommandMessage(m: Exclude<FromHelper, { t: 'ready' | 'pong' }>, r: Remote): void {
    if (m.t === 'spawned') {
      r.pid = m.pid;
      r.limited = m.limited;
      r.started();
      for (const sig of r.pending.splice(0)) signalTree(treeTarget(r.pid, r.spec), sig);
    } else if (m.t === 'out') {
      const b = Buffer.from(m.d.buffer, m.d.byteOffset, m.d.byteLength);
      if (m.fd === 1) r.ev.onStdout(b);
      else r.ev.onStderr(b);
    } else {
      this.remotes.delete(m.id);
      r.done = true;
      r.started();
      r.ev.onExit(m.code, m.signal, m.startError);
    }
  }

  /** The helper died (or was replaced): its commands lost their output channel, so they are ended and reported. */
  private onHelperExit(child: ChildProcess, code: number | null, signal: string | null): void {
    const current = this.child === child;
    if (current) {
      this.child = undefined;
      this.stopWatching();
      if (!this.closed) this.failures++;
    }
    const owned = [...this.remotes].filter(([, r]) => r.owner === child);
    if (this.closed && owned.length === 0) return;
    if (current || owned.length > 0)
      this.log.warn('the spawner helper ended', { code, signal, commands: owned.length });
    // A new one right away, so the next command does not wait for it; waiters learn when none will come.
    if (!this.closed && this.failures < MAX_HELPER_FAILURES) setImmediate(() => this.helper());
    else for (const w of this.upWaiters.splice(0)) w();
    for (const [id, r] of owned) {
      this.remotes.delete(id);
      r.done = true;
      if (r.pid) signalTree(treeTarget(r.pid, { ...r.spec, sandboxed: false }), 'SIGKILL');
      // Started but not yet reported (no pid): only its cgroup still finds the tree.
      if (r.spec.cgroup) {
        killCgroup(r.spec.cgroup.dir);
        releaseCgroup(r.spec.cgroup.dir);
      }
      r.started();
      // Not reported as started: it never ran, or was ended the moment it did (bwrap dies with the helper).
      if (!r.pid) {
        r.ev.onExit(
          null,
          null,
          'the helper that starts commands ended before this one started; run it again',
        );
        continue;
      }
      r.ev.onStderr(
        Buffer.from(
          'workbench-mcp: the helper that relayed this command ended unexpectedly; the command was stopped\n',
        ),
      );
      r.ev.onExit(null, 'SIGKILL');
    }
  }
}
