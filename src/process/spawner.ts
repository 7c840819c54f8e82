// The server's side of the spawner helper (spawner-main.ts): pipe commands are started there, because fork()
// in a process as large as the server costs milliseconds per command and blocks the event loop. The helper is
// started on first use, relays output and exit in order over IPC, and is restarted if it dies (its running
// commands are then killed and reported as such). Without a built helper (or if it cannot start) commands
// are started in this process instead — same behaviour, slower.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/log.js';
import { killCgroup, releaseCgroup, type CgroupTarget } from './cgroup.js';
import { spawnPipes, treeTarget } from './pipes.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from './spawn.js';
import { signalTree } from './tree.js';

export type ToHelper =
  | {
      t: 'spawn';
      id: number;
      argv: readonly string[];
      cwd: string;
      env: Record<string, string>;
      sandboxed: boolean;
      cgroup?: CgroupTarget;
    }
  | { t: 'write'; id: number; data: string }
  | { t: 'end'; id: number };

type FromHelper =
  | { t: 'spawned'; id: number; pid: number; limited: boolean }
  | { t: 'out'; id: number; fd: 1 | 2; d: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: string | null; startError?: string };

interface Remote {
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

/** The compiled helper next to this module (dist), or in dist/ when this module runs from source (tests). */
function helperPath(): string | undefined {
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

  constructor(private readonly log: Logger) {}

  spawn(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
    const child = this.helper();
    if (!child) return spawnPipes(spec, ev);
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
      started,
    };
    this.remotes.set(id, r);
    const { argv, cwd, env, sandboxed, cgroup } = spec;
    this.post({ t: 'spawn', id, argv, cwd, env, sandboxed, cgroup });
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
        this.post({ t: 'write', id, data });
        return true;
      },
      closeStdin: () => {
        if (!r.stdinOpen) return;
        r.stdinOpen = false;
        this.post({ t: 'end', id });
      },
      signal: (sig) => {
        if (r.done) return false;
        if (!r.pid) {
          r.pending.push(sig);
          return true;
        }
        return signalTree(treeTarget(r.pid, spec), sig);
      },
    };
  }

  /** Starts the helper ahead of the first command. */
  warm(): void {
    this.helper();
  }

  /** Let the helper go (after the registry ended every command). */
  close(): void {
    this.closed = true;
    if (this.child?.connected) this.child.disconnect();
    this.child = undefined;
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
      child = fork(file, [], {
        // A small young generation keeps the helper's memory small; it only relays bytes.
        execArgv: ['--max-semi-space-size=1'],
        env: {},
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        serialization: 'advanced',
      });
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
    const r = this.remotes.get(m.id);
    if (!r) return;
    if (m.t === 'spawned') {
      this.failures = 0;
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

  /** The helper died: its commands lost their output channel, so they are ended and reported. */
  private onHelperExit(child: ChildProcess, code: number | null, signal: string | null): void {
    if (this.child === child) this.child = undefined;
    if (this.closed && this.remotes.size === 0) return;
    this.failures++;
    this.log.warn('the spawner helper ended', { code, signal, commands: this.remotes.size });
    for (const [id, r] of this.remotes) {
      this.remotes.delete(id);
      r.done = true;
      if (r.pid) signalTree(treeTarget(r.pid, { ...r.spec, sandboxed: false }), 'SIGKILL');
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
