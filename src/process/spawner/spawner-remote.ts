// One command handed to the spawner helper (spawner.ts), as the server sees it: a ProcessHandle whose stdin
// writes go to the helper as messages and whose signals go straight to the command's tree once its pid is
// known. Its state is one value: starting (signals asked for wait), started (pid and process limit known,
// pid 0 when the helper could not start it), or done. Imports stay light, as pipes.ts's.
import type { ChildProcess } from 'node:child_process';
import { killCgroup, releaseCgroup, type CgroupTarget } from '../spawn/cgroup.js';
import { treeTarget } from '../spawn/pipes.js';
import type { ProcessEvents, ProcessHandle, SpawnSpec } from '../spawn/spawn-types.js';
import type { FromHelper, ToHelper } from './spawner-messages.js';
import { signalTree } from '../spawn/tree.js';

type RemoteState =
  | { phase: 'starting'; signals: NodeJS.Signals[] }
  | { phase: 'started' | 'done'; pid: number; limited: boolean | undefined };

/** What the helper reports about one command. */
export type CommandMessage = Extract<FromHelper, { id: number }>;

export class RemoteCommand implements ProcessHandle {
  readonly tty = false;
  readonly whenStarted: Promise<void>;
  private state: RemoteState = { phase: 'starting', signals: [] };
  private stdinIsOpen = true;
  private resolveStarted!: () => void;
  /** The cgroups the command may be in: its own, and the prepared sandbox's until the helper says which. */
  private cgroups: CgroupTarget[];

  /**
   * `send` posts a message to `owner`, the helper the command was handed to; `prepared`: the cgroup of the
   * prepared sandbox it was offered (prepared.ts).
   */
  constructor(
    readonly id: number,
    readonly owner: ChildProcess,
    private readonly spec: SpawnSpec,
    private readonly ev: ProcessEvents,
    private readonly send: (msg: ToHelper) => void,
    private readonly prepared?: CgroupTarget,
  ) {
    this.whenStarted = new Promise<void>((resolve) => (this.resolveStarted = resolve));
    this.cgroups = [spec.cgroup, prepared].filter((c) => c !== undefined);
  }

  get pid(): number {
    return this.state.phase === 'starting' ? 0 : this.state.pid;
  }

  get limited(): boolean | undefined {
    return this.state.phase === 'starting' ? undefined : this.state.limited;
  }

  get stdinOpen(): boolean {
    return this.stdinIsOpen && this.state.phase !== 'done';
  }

  write(data: string): boolean {
    if (!this.stdinOpen) return false;
    this.send({ t: 'write', id: this.id, data });
    return true;
  }

  closeStdin(): void {
    if (!this.stdinIsOpen) return;
    this.stdinIsOpen = false;
    this.send({ t: 'end', id: this.id });
  }

  signal(sig: NodeJS.Signals): boolean {
    const s = this.state;
    if (s.phase === 'done') return false;
    if (s.phase === 'starting') s.signals.push(sig);
    if (s.phase === 'starting' || !s.pid) return true;
    return signalTree(treeTarget(s.pid, this.spec), sig);
  }

  /** A message of the helper about this command. */
  onMessage(m: CommandMessage): void {
    if (m.t === 'spawned') {
      const waiting = this.state.phase === 'starting' ? this.state.signals : [];
      this.state = { phase: 'started', pid: m.pid, limited: m.limited };
      const cg = m.warm ? this.prepared : this.spec.cgroup;
      this.cgroups = cg ? [cg] : [];
      this.resolveStarted();
      for (const sig of waiting) signalTree(treeTarget(m.pid, this.spec), sig);
      return;
    }
    if (m.t === 'out') {
      const b = Buffer.from(m.d.buffer, m.d.byteOffset, m.d.byteLength);
      if (m.fd === 1) this.ev.onStdout(b);
      else this.ev.onStderr(b);
      return;
    }
    this.end();
    this.ev.onExit(m.code, m.signal, m.startError);
  }

  /** Its helper died: the command lost its output channel, so it is ended and reported. */
  lost(): void {
    const pid = this.pid;
    this.end();
    if (pid) signalTree(treeTarget(pid, { ...this.spec, sandboxed: false }), 'SIGKILL');
    // Started but not yet reported (no pid): only its cgroup still finds the tree.
    for (const cg of this.cgroups) {
      killCgroup(cg.dir);
      releaseCgroup(cg.dir);
    }
    // Not reported as started: it never ran, or was ended the moment it did (bwrap dies with the helper).
    if (!pid) {
      this.ev.onExit(
        null,
        null,
        'the helper that starts commands ended before this one started; run it again',
      );
      return;
    }
    this.ev.onStderr(
      Buffer.from(
        'workbench-mcp: the helper that relayed this command ended unexpectedly; the command was stopped\n',
      ),
    );
    this.ev.onExit(null, 'SIGKILL');
  }

  private end(): void {
    this.state = { phase: 'done', pid: this.pid, limited: this.limited };
    this.resolveStarted();
  }
}
