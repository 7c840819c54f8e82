// The command registry, owned by the runtime (docs/design-notes.md#one-workspace-one-runtime,
// docs/design-notes.md#limits; docs/tools.md#commands): starts commands (shell → sandbox wrapper → spawn),
// finds them by their unguessable id for any client, enforces the limits (running count, processes per
// command tree, finished kept, total retained output, retention time — each from config), and ends every
// process tree at shutdown. Finished commands are evicted oldest-first by age and bytes, but one whose final
// status was never returned is kept (docs/design-notes.md#bash-and-retention) — up to twice the count and
// byte limits, so memory stays bounded even when nobody polls.
import { ToolError } from '../../core/tool-error.js';
import type { Config } from '../../config/load.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/log.js';
import type { RuntimeDirs } from '../runtime-dir.js';
import { Command } from './command.js';
import { toEvict } from './retention.js';
import { childEnv, envPreview } from './env.js';
import { HEAD_BYTES } from './output.js';
import { killLeftovers } from './leftovers.js';
import { NetAccess, type NetHost } from '../net/net-access.js';
import {
  isBwrap,
  planSandbox,
  wrapperArgv,
  type SandboxContext,
  type SandboxPlan,
  type SandboxStatus,
} from '../sandbox/sandbox.js';
import { probeProcessLimit, type ProcessLimiter } from './pids-limit.js';
import { TreeWatchdog } from './tree-watchdog.js';
import { privateFilesOf, sealedDirsOf } from '../sandbox/sandbox-mounts.js';
import { commandLimitError, newCommand, shellArgv, ttyUnsupportedError } from './launch.js';
import {
  findShell,
  spawnPty,
  SpawnError,
  type ProcessEvents,
  type ProcessHandle,
  type SpawnSpec,
} from '../spawn/spawn.js';
import { Spawner } from '../spawner/spawner.js';
import { templateMemo } from '../spawner/prepared.js';
import { placeProgram } from '../native.js';
import { writeSeccompFilter } from '../sandbox/seccomp.js';

export interface StartSpec {
  cmd: string;
  /** Real path of the working directory (inside the workspace). */
  cwd: string;
  /** The working directory as the model named it, relative to the root. */
  workdir: string;
  tty: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  stdin: string;
  env: Record<string, string>;
  /** Identifies the call (tool and arguments), so the proxy's refusals can be asked about when it comes again. */
  callKey?: string;
  /** Host names the user granted this one command through the proxy (net-access.ts); gone when it ends. */
  netGrant?: readonly string[];
}

/** What the registry needs of the server; the composition root hands it over. */
export interface RegistryHost {
  readonly config: Config;
  readonly dirs: RuntimeDirs;
  /** The workspace's real path. */
  readonly root: { readonly real: string };
  readonly clock: Clock;
  readonly log: Logger;
  readonly audit?: NetHost['audit'];
  /** One of several workspaces (src/workspaces/): more to hide (the project roots) and to show read-only. */
  readonly view?: { readonly sealed: readonly string[]; readonly alsoRead: readonly string[] };
  /** Runs work in a quiet moment (core/quiet.ts): the sandboxes kept ready are set up again there. */
  readonly defer?: (fn: () => void) => void;
}

/** After shutdown's TERM, how long commands get before KILL. */
const SHUTDOWN_GRACE_MS = 1500;
const SHUTDOWN_KILL_WAIT_MS = 1000;
const SWEEP_INTERVAL_MS = 60_000;

export class CommandRegistry {
  private readonly commands = new Map<string, Command>();
  private plan: SandboxPlan | undefined;
  private limiter: ProcessLimiter | undefined;
  private readonly watchdog = new TreeWatchdog(
    () => this.running(),
    () => this.host.config.execMaxProcesses,
  );
  private readonly shell: { path: string; name: 'bash' | 'sh' };
  private closing = false;
  private readonly spawner: Spawner;
  private sweeper: NodeJS.Timeout | undefined;
  /** `safe` and `trusted`: the filtering proxy and each command's credential for it. */
  private readonly net: NetAccess;

  /** Commands asked for since start, started or not (cli/warm-up.ts leaves its rehearsal out after one). */
  asked = 0;

  /** No side effects: startUp() does the start-up work, shutdown() ends it. */
  constructor(private readonly host: RegistryHost) {
    this.shell = findShell(host.config.env.PATH);
    this.net = new NetAccess(host);
    this.spawner = new Spawner(
      host.log,
      {
        template: templateMemo(
          () => this.plan,
          this.net,
          this.host.root.real,
          // wb-exec alone, for commands without a sandbox: only where it pays, a cgroup move that would wait.
          () =>
            this.processLimit().moveWaits || host.config.testPrepareAlone
              ? placeProgram('wb-exec', host.dirs.root)
              : undefined,
        ),
        nextCgroup: () => this.processLimit().next(),
      },
      host.dirs.root,
      host.defer,
    );
  }

  /**
   * Start-up, called once by the runtime's start() (runtime/runtime.ts): SERVICE_SANDBOX=bwrap fails here when
   * bwrap cannot run (SandboxUnavailableError; `auto` is probed on first use), the retention sweep starts, and
   * processes a crashed earlier instance left behind are ended.
   */
  startUp(): void {
    const host = this.host;
    if (host.config.sandbox === 'bwrap' || host.config.sandbox === 'landlock') this.sandbox();
    this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
    void killLeftovers(host.dirs.root).then(
      (n) => n && host.log.warn('killed processes left by a crashed earlier instance', { count: n }),
      () => {},
    );
  }

  get shellName(): 'bash' | 'sh' {
    return this.shell.name;
  }

  private sandbox(): SandboxPlan {
    if (!this.plan) {
      this.plan = planSandbox(this.sandboxContext());
      if (this.plan.status.network !== 'proxy') void this.net.close();
    }
    return this.plan;
  }

  private sandboxContext(): SandboxContext {
    const c = this.host.config;
    return {
      mode: c.permissionMode,
      requested: c.sandbox,
      pathVar: c.env.PATH,
      workspaceReal: this.host.root.real,
      dirs: this.host.dirs,
      privateFiles: privateFilesOf(c),
      readAllow: c.readAllow ?? [],
      sealed: [...sealedDirsOf(c), ...(this.host.view?.sealed ?? [])],
      alsoRead: this.host.view?.alsoRead ?? [],
      seccompFile: writeSeccompFilter(this.host.dirs.root),
      net: c.permissionMode !== 'dangerous' && c.sandbox !== 'off' ? this.net.mounts() : undefined,
    };
  }

  sandboxStatus(): SandboxStatus {
    return this.sandbox().status;
  }

  /**
   * Everything the first command needs, done ahead (docs/tools.md#commands: the first command must not wait
   * for it): the sandbox probe, the process-limit probe and the spawner helper. Called after the server is
   * listening.
   */
  warm(): void {
    this.sandbox();
    this.processLimit();
    this.spawner.warm();
  }

  /** Settles once the helper that will start pipe commands is up (false when none will come). */
  whenUp(): Promise<boolean> {
    return this.spawner.whenUp();
  }

  /** The sandbox probe is done and the helper is up, or none will come (GET /readyz; never starts either). */
  get ready(): boolean {
    return this.plan !== undefined && this.spawner.settled;
  }

  /** The helper that starts pipe commands: its pid when one runs, and how the commands so far started. */
  get helper(): Pick<Spawner, 'helperPid' | 'starts'> {
    return this.spawner;
  }

  /** Drop a command from the registry (the server's own rehearsal of the first command, docs/architecture.md). */
  forget(id: string): void {
    this.commands.delete(id);
  }

  /** How each command tree's process count is bounded (probed once). */
  processLimit(): ProcessLimiter {
    this.limiter ??= probeProcessLimit(this.host.config.execMaxProcesses);
    return this.limiter;
  }

  get limits() {
    const c = this.host.config;
    return {
      max_running: c.execMaxActive,
      max_finished_kept: c.execMaxRetained,
      retention_s: c.execRetentionS,
      max_processes: c.execMaxProcesses,
      stream_buffer_bytes: c.execStreamBufferBytes,
      stream_head_bytes: HEAD_BYTES,
      total_buffer_bytes: c.execTotalBufferBytes,
    };
  }

  childEnvPreview(): ReturnType<typeof envPreview> {
    return envPreview({
      snapshot: this.host.config.env,
      mode: this.host.config.permissionMode,
      dirs: this.host.dirs,
      proxy:
        this.sandbox().status.network === 'proxy'
          ? 'http://wb:<this command’s token>@127.0.0.1:3128'
          : undefined,
    });
  }

  /** Host names the proxy refused to a recent run of the same call (net-access.ts). */
  refusedHosts(callKey: string): string[] {
    return this.net.refusedFor(callKey);
  }

  list(): Command[] {
    return [...this.commands.values()];
  }

  running(): Command[] {
    return this.list().filter((c) => c.running);
  }

  retainedBytes(): number {
    let n = 0;
    for (const c of this.commands.values()) n += c.retainedBytes;
    return n;
  }

  start(spec: StartSpec): Command {
    this.asked++;
    if (this.closing)
      throw new ToolError('INTERNAL_ERROR', 'the server is shutting down and starts no more commands', {});
    this.sweep();
    const max = this.host.config.execMaxActive;
    const running = this.running();
    if (running.length >= max) throw commandLimitError(running, max);
    const plan = this.sandbox();
    const cmd = newCommand(spec, plan, this.host);
    const handle = this.spawnCommand(spec, cmd, plan);
    if (!handle) return cmd;
    cmd.onFinish = () => {
      this.net.detach(cmd);
      this.sweep();
    };
    cmd.attach(handle);
    this.commands.set(cmd.id, cmd);
    if (spec.stdin) handle.write(spec.stdin);
    if (!spec.tty) handle.closeStdin();
    if (handle.limited !== true) this.watchdog.watch();
    this.host.log.debug('command started', { command_id: cmd.id, pid: handle.pid, sandboxed: cmd.sandboxed });
    return cmd;
  }

  /** What runs: the sandbox wrapper (and the proxy bridge), the shell, and the filtered environment. */
  private launchSpec(spec: StartSpec, cmd: Command, plan: SandboxPlan): SpawnSpec {
    const sandboxed = isBwrap(plan);
    const confined = plan.status.in_use !== null;
    // With the proxy: the bridge starts first in the sandbox, and the command gets its own credential.
    const net =
      sandboxed && plan.status.network === 'proxy'
        ? this.net.attach(cmd, spec.callKey, spec.netGrant ?? [])
        : undefined;
    const shell = shellArgv(this.shell, sandboxed && spec.tty, spec.cmd);
    const argv = confined ? [...wrapperArgv(plan, spec.cwd), ...(net?.prefix ?? []), ...shell] : shell;
    const env = childEnv({
      snapshot: this.host.config.env,
      mode: this.host.config.permissionMode,
      dirs: this.host.dirs,
      tty: spec.tty,
      extra: spec.env,
      proxy: net?.proxyUrl,
    });
    if (plan.pathFor && env.PATH) env.PATH = plan.pathFor(env.PATH);
    const seccomp = confined ? plan.seccomp : undefined;
    // A prepared process (prepared.ts) becomes the shell: in bubblewrap, or without any sandbox (not Landlock).
    const commandArgv = (sandboxed || !confined) && !spec.tty ? shell : undefined;
    return { argv, cwd: spec.cwd, env, tty: spec.tty, sandboxed, seccomp, commandArgv };
  }

  /** Starts the process; undefined when a terminal program could not start (the command is kept as failed). */
  private spawnCommand(spec: StartSpec, cmd: Command, plan: SandboxPlan): ProcessHandle | undefined {
    const how = this.launchSpec(spec, cmd, plan);
    try {
      const ev: ProcessEvents = {
        onStdout: (b) => cmd.output('stdout', b),
        onStderr: (b) => cmd.output('stderr', b),
        onExit: (code, sig, err) => cmd.exited(code, sig, err),
      };
      const withCgroup: SpawnSpec = { ...how, cgroup: this.processLimit().next() };
      return spec.tty ? spawnPty(withCgroup, ev) : this.spawner.spawn(withCgroup, ev);
    } catch (e) {
      this.net.detach(cmd);
      if (e instanceof SpawnError && e.kind === 'tty') throw ttyUnsupportedError(e.message);
      if (!(e instanceof SpawnError)) throw e;
      // The terminal exists but the program could not start in it: a failed command, like a pipe spawn error.
      this.commands.set(cmd.id, cmd);
      cmd.exited(null, null, e.message);
      return undefined;
    }
  }

  /** The command with this id, or COMMAND_NOT_FOUND explaining retention. */
  get(id: string): Command {
    this.sweep();
    const c = this.commands.get(id);
    if (c) return c;
    const l = this.limits;
    throw new ToolError(
      'COMMAND_NOT_FOUND',
      `no command ${JSON.stringify(id)} is known: either the id is wrong, or the command finished and was dropped — this server keeps a finished ` +
        `command's status and output for ${l.retention_s} s after it ended (until its final status was returned at least once), at most ` +
        `${l.max_finished_kept} finished commands and ${l.total_buffer_bytes} bytes of output in total (oldest dropped first), and forgets every ` +
        'command when it restarts',
      { command_id: id, ...l },
      { suggestion: 'Run the command again with exec_command; its result carries a new command_id.' },
    );
  }

  /** Record that a result with the final status went back to a client. */
  markReturned(c: Command): void {
    if (!c.running && !c.finalReturned) {
      c.finalReturned = true;
      this.sweep();
    }
  }

  /** Forget the finished commands the retention limits name (retention.ts). */
  sweep(): void {
    const cfg = this.host.config;
    const limits = {
      retentionMs: cfg.execRetentionS * 1000,
      maxKept: cfg.execMaxRetained,
      maxBytes: cfg.execTotalBufferBytes,
    };
    for (const c of toEvict(this.commands.values(), limits, this.host.clock.now()))
      this.commands.delete(c.id);
  }

  /** Shutdown: TERM every tree, wait briefly, KILL what is left. */
  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const live = this.running();
    for (const c of live) c.send('SIGTERM');
    await Promise.all(live.map((c) => c.waitUntil(() => !c.running, SHUTDOWN_GRACE_MS)));
    const stubborn = live.filter((c) => c.running);
    for (const c of stubborn) c.escalate();
    await Promise.all(stubborn.map((c) => c.waitUntil(() => !c.running, SHUTDOWN_KILL_WAIT_MS)));
    this.watchdog.stop();
    await this.spawner.close();
    await this.net.close();
    this.limiter?.close();
  }
}
