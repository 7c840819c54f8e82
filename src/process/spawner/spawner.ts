// The server's side of the spawner helper (spawner-main.ts): pipe commands are started there, because fork()
// in a process as large as the server costs milliseconds per command and blocks the event loop. The helper is
// started on first use, relays output and exit in order over IPC, and is replaced if it dies, sends anything
// that is not a well-formed message, or stops answering pings (stopped, or hung): its running commands are
// then killed and reported as such, and waiting calls return. Without a built helper (or if it cannot start)
// commands are started in this process instead — same behaviour, slower. Each sandboxed command is a
// bubblewrap sandbox of its own with its own PID namespace, so no command can see the helper or another one.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../core/log.js';
import { COMPILE_FLAGS } from '../compile-tier.js';
import { spawnPipes } from '../spawn/pipes.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from '../spawn/spawn.js';
import { killCgroup, releaseCgroup } from '../spawn/cgroup.js';
import { placeCopy } from '../native.js';
import { PreparedPool, type PreparedSource } from './prepared.js';
import { parseFromHelper, type ToHelper } from './spawner-messages.js';
import { HelperOutbox } from './spawner-outbox.js';
import { RemoteCommand } from './spawner-remote.js';
import { HelperWatch } from './spawner-watch.js';

export { HUNG_AFTER_MS, PING_MS, STOPPED_AFTER_MS } from './spawner-watch.js';

/** Consecutive helper failures after which commands are started in this process for good. */
const MAX_HELPER_FAILURES = 3;
/** How long close() waits for the helper to exit before killing it. */
const CLOSE_WAIT_MS = 2000;

/**
 * The helper as built: one self-contained file (scripts/bundle.mjs) next to this module's dist twin, or in dist/
 * when this module runs from source (tests).
 */
let helperFile: string | null | undefined;

export function helperPath(): string | undefined {
  if (helperFile !== undefined) return helperFile ?? undefined;
  helperFile = findHelper() ?? null;
  return helperFile ?? undefined;
}

function findHelper(): string | undefined {
  const candidates = [
    new URL('../../helper/spawner.mjs', import.meta.url),
    new URL('../../../dist/helper/spawner.mjs', import.meta.url),
  ];
  for (const u of candidates) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  return undefined;
}

function startHelper(file: string): ChildProcess {
  return fork(file, [], {
    // A small young generation keeps the helper's memory small; it only relays bytes. Its code compiled to the
    // baseline tier at once, as the server's (process/compile-tier.ts): it runs at each command's start and end.
    execArgv: ['--max-semi-space-size=1', ...COMPILE_FLAGS],
    env: {},
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
}

/** The helper in use and its liveness check. */
interface Helper {
  child: ChildProcess;
  watch: HelperWatch;
}

export class Spawner {
  private helper: Helper | undefined;
  private readonly remotes = new Map<number, RemoteCommand>();
  /** Numbers commands and pings alike: a helper naming a number past it names something never sent. */
  private seq = 0;
  private failures = 0;
  private closed = false;
  private everReady = false;
  private readonly upWaiters: Array<() => void> = [];
  private readonly pool: PreparedPool | undefined;
  private readonly outbox = new HelperOutbox((child, e) =>
    this.replace(child, `cannot be written to (${String(e)})`),
  );

  /** Commands started on pipes so far: in a sandbox (or, without one, a process) prepared ahead, or the usual way. */
  readonly starts = { prepared: 0, cold: 0 };

  /**
   * `prepared`: what sandboxes prepared ahead are built from (prepared.ts); none without it. `copyDir`: where the
   * helper's script is copied and forked from (the runtime directory's root, which no sandbox can see or
   * write), never dist/, which may lie inside the workspace a command can write, and is read again at every
   * replacement (docs/security-model.md, rule B). Without it (tests of this class) the built file is forked.
   * `defer`: runs the refill of the sandboxes kept ready in a quiet moment (core/quiet.ts).
   */
  constructor(
    private readonly log: Logger,
    prepared?: PreparedSource,
    private readonly copyDir?: string,
    private readonly defer: (fn: () => void) => void = setImmediate,
  ) {
    this.pool = prepared && new PreparedPool(prepared);
  }

  /** The script the helper is forked from: its private copy; undefined when there is none. */
  private helperScript(): string | undefined {
    const built = helperPath();
    if (!built || this.copyDir === undefined) return built;
    return placeCopy(built, this.copyDir, 'spawner-main.mjs');
  }

  /** Whether a helper runs or can be started. */
  get available(): boolean {
    return !this.closed && this.failures < MAX_HELPER_FAILURES && helperPath() !== undefined;
  }

  spawn(spec: SpawnSpec, ev: ProcessEvents): ProcessHandle {
    const child = this.ensureHelper();
    // A command that comes while the helper is still starting (or when none can) is started here.
    if (!child || !this.everReady) {
      this.starts.cold++;
      return spawnPipes(spec, ev);
    }
    const id = ++this.seq;
    // Unsandboxed, a directory that cannot be entered is a start that failed (ENOENT), not wb-exec's exit 126.
    const usable = spec.commandArgv && (spec.sandboxed || isDirectory(spec.cwd));
    const taken = usable ? this.pool?.take() : undefined;
    for (const n of taken?.stale ?? []) this.post({ t: 'drop', n }, child);
    const ready = taken?.ready;
    const r = new RemoteCommand(id, child, spec, ev, (msg) => this.post(msg, child), ready?.cgroup);
    this.remotes.set(id, r);
    const { argv, cwd, env, sandboxed, cgroup, seccomp, commandArgv } = spec;
    const warm = ready && commandArgv ? { n: ready.n, argv: commandArgv } : undefined;
    this.post({ t: 'spawn', id, argv, cwd, env, sandboxed, cgroup, seccomp, warm });
    this.pool?.afterStart(
      () => ++this.seq,
      (m) => this.post(m, child),
    );
    return r;
  }

  /**
   * Ask the helper for as many sandboxes as make prepared.ts's KEPT_READY, in a quiet moment: after it came up
   * and after a command ended.
   */
  private refillLater(child: ChildProcess): void {
    // Nothing to wait for a quiet moment for (`dangerous` where nothing is prepared, or all are asked for).
    if (!this.pool?.wants()) return;
    this.defer(() => {
      if (this.closed || !this.everReady || this.helper?.child !== child) return;
      this.pool?.fill(
        () => ++this.seq,
        (m) => this.post(m, child),
      );
    });
  }

  /** Settles once a helper has come up (at once if one did), or when none can. */
  whenUp(): Promise<boolean> {
    if (this.everReady) return Promise.resolve(true);
    if (!this.available) return Promise.resolve(false);
    this.ensureHelper();
    return new Promise((resolve) => this.upWaiters.push(() => resolve(this.everReady)));
  }

  /** A helper has come up, or none can: commands no longer wait for one. */
  get settled(): boolean {
    return this.everReady || !this.available;
  }

  /** The helper's pid (for the liveness tests and the operator's own checks), when one runs. */
  get helperPid(): number | undefined {
    return this.helper?.child.pid;
  }

  /** Starts the helper ahead of the first command. */
  warm(): void {
    this.ensureHelper();
  }

  /** Let the helper go (after the registry ended every command); resolves once it exited (killed after CLOSE_WAIT_MS). */
  close(): Promise<void> {
    this.closed = true;
    const child = this.dropHelper();
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_WAIT_MS);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.outbox.flush();
      if (child.connected) child.disconnect();
    });
  }

  private post(msg: ToHelper, child = this.helper?.child): void {
    if (child?.connected) this.outbox.post(msg, child);
  }

  /** The helper in use, started if there is none and one may be. */
  private ensureHelper(): ChildProcess | undefined {
    if (this.helper || this.closed || this.failures >= MAX_HELPER_FAILURES) return this.helper?.child;
    const file = this.helperScript();
    if (!file) {
      this.failures = MAX_HELPER_FAILURES;
      if (helperPath())
        this.log.warn(
          'the spawner helper cannot be copied into the runtime directory; commands start in the server',
        );
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
    child.channel?.unref();
    const watch = new HelperWatch(
      {
        pid: child.pid,
        ping: (n) => this.post({ t: 'ping', n }, child),
        onSilent: (why) => this.replace(child, why),
      },
      () => ++this.seq,
    );
    this.helper = { child, watch };
    return child;
  }

  /** Forgets the helper in use (and stops watching it); returns it. */
  private dropHelper(): ChildProcess | undefined {
    const h = this.helper;
    this.helper = undefined;
    h?.watch.stop();
    // Its prepared sandboxes die with it (bwrap --die-with-parent); their cgroups are what may be left.
    for (const cg of this.pool?.forget() ?? []) {
      killCgroup(cg.dir);
      releaseCgroup(cg.dir);
    }
    return h?.child;
  }

  /**
   * Kill a helper that misbehaves. New commands go to the next helper at once; the commands it held end when
   * its exit is seen (onHelperExit).
   */
  private replace(child: ChildProcess, why: string): void {
    if (child !== this.helper?.child) return;
    this.log.warn(`the spawner helper ${why}; it is replaced`, {
      pid: child.pid,
      commands: this.remotes.size,
    });
    this.dropHelper();
    this.failures++;
    child.kill('SIGKILL');
  }

  private onMessage(child: ChildProcess, raw: unknown): void {
    const h = this.helper;
    if (child !== h?.child) return;
    const m = parseFromHelper(raw);
    if (!m) return this.replace(child, 'sent a malformed message');
    if (m.t === 'pong') return h.watch.pong(m.n);
    if (m.t === 'ready') {
      this.failures = 0;
      this.everReady = true;
      for (const w of this.upWaiters.splice(0)) w();
      this.refillLater(child);
      return;
    }
    const r = this.remotes.get(m.id);
    if (r && r.owner !== child) return this.replace(child, 'named a command of another helper');
    if (!r) {
      // Late output of a command already ended (killed) is expected; anything else names no command of ours.
      if (m.id > this.seq) this.replace(child, 'named a command it was never given');
      return;
    }
    if (m.t === 'spawned') this.starts[m.warm === true ? 'prepared' : 'cold']++;
    if (m.t === 'exit') {
      this.remotes.delete(m.id);
      this.refillLater(child);
    }
    r.onMessage(m);
  }

  /** The helper died (or was replaced): its commands lost their output channel, so they are ended and reported. */
  private onHelperExit(child: ChildProcess, code: number | null, signal: string | null): void {
    const current = this.helper?.child === child;
    if (current) {
      this.dropHelper();
      if (!this.closed) this.failures++;
    }
    const owned = [...this.remotes].filter(([, r]) => r.owner === child);
    if (this.closed && owned.length === 0) return;
    if (current || owned.length > 0)
      this.log.warn('the spawner helper ended', { code, signal, commands: owned.length });
    // A new one right away, so the next command does not wait for it; waiters learn when none will come.
    if (!this.closed && this.failures < MAX_HELPER_FAILURES) setImmediate(() => this.ensureHelper());
    else for (const w of this.upWaiters.splice(0)) w();
    for (const [id, r] of owned) {
      this.remotes.delete(id);
      r.lost();
    }
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
