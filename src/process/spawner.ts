// The server's side of the spawner helper (spawner-main.ts): pipe commands are started there, because fork()
// in a process as large as the server costs milliseconds per command and blocks the event loop. The helper is
// started on first use, relays output and exit in order over IPC, and is restarted if it dies (its running
// commands are then killed and reported as such). Without a built helper (or if it cannot start) commands
// are started in this process instead — same behaviour, slower. The same helper also runs inside a sandbox
// of its own (zone.ts): then the pids it reports belong to its PID namespace, so every signal goes through
// it, and each command's pids cgroup is entered by moving the helper in from outside around its fork.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/log.js';
import { killCgroup, releaseCgroup, type CgroupTarget } from './cgroup.js';
import { endCgroup, spawnPipes, treeTarget } from './pipes.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from './spawn.js';
import type { FromHelper, ToHelper } from './spawner-messages.js';
import { signalTree } from './tree.js';

interface Remote {
  spec: SpawnSpec;
  ev: ProcessEvents;
  pid: number;
  limited: boolean | undefined;
  stdinOpen: boolean;
  done: boolean;
  /** Signals asked for before the pid was known. */
  pending: NodeJS.Signals[];
  /** In a zone: the command's pids cgroup was entered around its fork (the helper then held it). */
  placed: boolean;
  /** Messages for it held back until its spawn is posted (a zone queues spawns), so none arrives first. */
  early?: ToHelper[];
  /** Resolves the handle's whenStarted: the helper reported the spawn (or the end). */
  started: () => void;
}

/** Consecutive helper failures after which commands are started in this process for good. */
const MAX_HELPER_FAILURES = 3;
/** How long close() waits for the helper to exit before killing it. */
const CLOSE_WAIT_MS = 2000;

/** How the helper is started, and where it lives. */
export interface HelperLaunch {
  start(file: string): ChildProcess;
  /**
   * Set for a helper in a PID namespace of its own (zone.ts): called once it is ready, with the pid it
   * reported, to place each command in its pids cgroup from outside; without it commands start unlimited.
   */
  placement?: (innerPid: number) => Placement | undefined;
}

export interface Placement {
  /** Put the helper where the next command must be born; whether that holds. */
  enter(cg: CgroupTarget): boolean;
  leave(cg: CgroupTarget): void;
}

/** The plain helper: a small Node process forked beside the server. */
const FORKED: HelperLaunch = {
  start: (file) =>
    fork(file, [], {
      // A small young generation keeps the helper's memory small; it only relays bytes.
      execArgv: ['--max-semi-space-size=1'],
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
};

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

export class Spawner {
  private child: ChildProcess | undefined;
  private readonly remotes = new Map<number, Remote>();
  private seq = 0;
  private failures = 0;
  private closed = false;
  /** Zone: spawns wait here until the helper is ready and the one before was placed. */
  private readonly queue: Array<Extract<ToHelper, { t: 'spawn' }>> = [];
  private placing: number | undefined;
  private placement: Placement | undefined;
  private ready = false;
  private everReady = false;
  private readonly upWaiters: Array<() => void> = [];

  constructor(
    private readonly log: Logger,
    private readonly launch: HelperLaunch = FORKED,
  ) {}

  private get zoned(): boolean {
    return this.launch.placement !== undefined;
  }

  /** Whether a helper runs or can be started (a zone has no in-process fallback). */
  get available(): boolean {
    return !this.closed && this.failures < MAX_HELPER_FAILURES && helperPath() !== undefined;
  }

  /** A zone takes commands once it has come up at least once: one that cannot start never costs a command. */
  get proven(): boolean {
    return this.everReady && this.available;
  }

  spawn(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
    const child = this.helper();
    if (!child) {
      if (this.zoned) throw new Error('the sandbox helper is not available');
      return spawnPipes(spec, ev);
    }
    // A command that comes while the plain helper is still starting is started here rather than wait for it.
    if (!this.zoned && !this.everReady) return spawnPipes(spec, ev);
    const id = ++this.seq;
    let started!: () => void;
    const whenStarted = new Promise<void>((resolve) => (started = resolve));
    const r: Remote = {
      spec,
      ev,
      pid: 0,
      limited: undefined,
      stdinOpen: true,
      done: false,
      pending: [],
      placed: false,
      started,
    };
    this.remotes.set(id, r);
    const { argv, cwd, env, sandboxed, cgroup } = spec;
    if (this.zoned) {
      // Inside the zone the command is a plain process group of the helper; its cgroup is managed from here.
      r.early = [];
      this.queue.push({ t: 'spawn', id, argv, cwd, env, sandboxed: false });
      this.pump();
    } else this.post({ t: 'spawn', id, argv, cwd, env, sandboxed, cgroup });
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
        this.postFor(r, { t: 'write', id, data });
        return true;
      },
      closeStdin: () => {
        if (!r.stdinOpen) return;
        r.stdinOpen = false;
        this.postFor(r, { t: 'end', id });
      },
      signal: (sig) => {
        if (r.done) return false;
        if (!r.pid) {
          r.pending.push(sig);
          return true;
        }
        return this.signalRemote(id, r, sig);
      },
    };
  }

  private postFor(r: Remote, msg: ToHelper): void {
    if (r.early) r.early.push(msg);
    else this.post(msg);
  }

  private signalRemote(id: number, r: Remote, sig: NodeJS.Signals): boolean {
    if (!this.zoned) return signalTree(treeTarget(r.pid, r.spec), sig);
    this.post({ t: 'signal', id, sig });
    // A kill also reaches what left the process group (its cgroup holds every process it started).
    if (sig === 'SIGKILL' && r.placed && r.spec.cgroup) killCgroup(r.spec.cgroup.dir);
    return true;
  }

  /** Zone: post the next queued spawn once the helper is ready and the previous one has been placed. */
  private pump(): void {
    while (this.ready && this.placing === undefined && this.queue.length) {
      const msg = this.queue.shift() as Extract<ToHelper, { t: 'spawn' }>;
      const r = this.remotes.get(msg.id);
      if (!r) continue;
      const cg = r.spec.cgroup;
      if (cg && this.placement) {
        r.placed = this.placement.enter(cg);
        if (r.placed) this.placing = msg.id;
      }
      if (cg && !r.placed) {
        // Never a command without its bound: report it as not started.
        this.remotes.delete(msg.id);
        r.done = true;
        r.started();
        r.ev.onExit(
          null,
          null,
          'its pids cgroup could not be entered (SERVICE_EXEC_MAX_PROCESSES); run it again',
        );
        continue;
      }
      this.post(msg);
      for (const m of r.early ?? []) this.post(m);
      r.early = undefined;
    }
  }

  /** Zone: the command being placed was born (or failed to be): the helper leaves its cgroup, the next goes. */
  private placed(id: number, r: Remote): void {
    if (this.placing !== id) return;
    this.placing = undefined;
    if (r.spec.cgroup) this.placement?.leave(r.spec.cgroup);
    this.pump();
  }

  /** Settles once a helper has come up (at once if one did), or when none can. */
  whenUp(): Promise<boolean> {
    if (this.everReady) return Promise.resolve(true);
    if (!this.available) return Promise.resolve(false);
    this.helper();
    return new Promise((resolve) => this.upWaiters.push(() => resolve(this.everReady)));
  }

  private up(): void {
    this.everReady = true;
    for (const w of this.upWaiters.splice(0)) w();
  }

  /** Starts the helper ahead of the first command. */
  warm(): void {
    this.helper();
  }

  /**
   * Let the helper go (after the registry ended every command). Resolves once it has exited — a zone's bwrap
   * may still be making its mount points in the instance's directory, which is removed next — killing it after
   * CLOSE_WAIT_MS.
   */
  close(): Promise<void> {
    this.closed = true;
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

  /** Start no more commands; let the helper go once the ones it runs have ended. */
  retire(): void {
    this.closed = true;
    if (this.remotes.size === 0) void this.close();
  }

  private post(msg: ToHelper): void {
    this.child?.send(msg);
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
      child = this.launch.start(file);
    } catch (e) {
      this.failures++;
      this.log.warn('the spawner helper cannot start; commands start in the server process', {
        error: String(e),
      });
      return undefined;
    }
    child.on('message', (m: FromHelper) => this.onMessage(m));
    child.on('exit', (code, signal) => this.onHelperExit(child, code, signal));
    child.on('error', (e) => this.log.warn('spawner helper error', { error: String(e) }));
    // Neither the helper nor its channel keeps the server alive; the helper exits when the server does.
    child.unref();
    (child as unknown as { channel?: { unref(): void } }).channel?.unref();
    this.child = child;
    return child;
  }

  private onMessage(m: FromHelper): void {
    if (m.t === 'ready') {
      if (!this.zoned) return this.up();
      // Only the first report counts: later, commands exist that could speak for a helper they took over.
      if (this.ready || this.placement) return;
      this.placement = this.launch.placement?.(m.pid);
      if (!this.placement) {
        // Commands could not be bounded: give the zone up (the registry falls back to a bwrap per command).
        this.log.warn('the sandbox helper cannot be placed in pids cgroups; commands get a sandbox each');
        this.failures = MAX_HELPER_FAILURES;
        this.child?.kill('SIGKILL');
        return;
      }
      this.ready = true;
      this.up();
      return this.pump();
    }
    const r = this.remotes.get(m.id);
    if (!r) return;
    if (m.t === 'spawned') {
      this.failures = 0;
      r.pid = m.pid;
      r.limited = this.zoned ? r.placed : m.limited;
      this.placed(m.id, r);
      r.started();
      for (const sig of r.pending.splice(0)) this.signalRemote(m.id, r, sig);
    } else if (m.t === 'out') {
      const b = Buffer.from(m.d.buffer, m.d.byteOffset, m.d.byteLength);
      if (m.fd === 1) r.ev.onStdout(b);
      else r.ev.onStderr(b);
    } else {
      this.remotes.delete(m.id);
      r.done = true;
      this.placed(m.id, r); // it may not have started: then no spawn was reported
      // Zone: what the command left in its cgroup (a daemon in its own session) ends with it, as the PID
      // namespace of a per-command sandbox would end it.
      if (this.zoned && r.spec.cgroup) {
        if (r.placed) killCgroup(r.spec.cgroup.dir);
        endCgroup(r.spec.cgroup, r.placed, r.ev);
      }
      r.started();
      r.ev.onExit(m.code, m.signal, m.startError);
      if (this.closed && this.remotes.size === 0) void this.close();
    }
  }

  /** The helper died: its commands lost their output channel, so they are ended and reported. */
  private onHelperExit(child: ChildProcess, code: number | null, signal: string | null): void {
    if (this.child === child) this.child = undefined;
    this.ready = false;
    this.placing = undefined;
    this.placement = undefined;
    this.queue.length = 0;
    if (this.closed && this.remotes.size === 0) return;
    this.failures++;
    this.log.warn('the spawner helper ended', { code, signal, commands: this.remotes.size });
    // A new one right away, so the next command does not wait for it; waiters learn when none will come.
    if (!this.closed && this.failures < MAX_HELPER_FAILURES) setImmediate(() => this.helper());
    else for (const w of this.upWaiters.splice(0)) w();
    for (const [id, r] of this.remotes) {
      this.remotes.delete(id);
      r.done = true;
      // A zone's pids are not this host's; its namespace ended with the helper anyway.
      if (r.pid && !this.zoned) signalTree(treeTarget(r.pid, { ...r.spec, sandboxed: false }), 'SIGKILL');
      // Started but not yet reported (no pid): only its cgroup still finds the tree.
      if (r.spec.cgroup) {
        killCgroup(r.spec.cgroup.dir);
        releaseCgroup(r.spec.cgroup.dir);
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
