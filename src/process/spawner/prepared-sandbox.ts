// The helper's side of a sandbox prepared ahead of its command (docs/security-model.md, "A sandbox per
// command, prepared ahead"): bubblewrap (and the network bridge) set up with native/wb-exec waiting at the end,
// so that when the command comes only the request has to be written: wb-exec changes to its directory and
// execs it with its environment. At most KEPT_READY at a time; a sandbox is never used twice — it becomes one
// command, or is killed. Runs in the spawner helper; imports stay light (pipes.ts, cgroup.ts, tree.ts).
import {
  killCgroup,
  moveIntoCgroup,
  movesThread,
  releaseCgroup,
  type CgroupTarget,
} from '../spawn/cgroup.js';
import { startChild, type Spawned } from '../spawn/pipes.js';
import { signalTree } from '../spawn/tree.js';
import { startRequest } from '../start-request.js';

/** What the server asks to have ready: the argv ending in wb-exec, where bwrap starts, its filter and cgroup. */
export interface PrepareSpec {
  argv: readonly string[];
  cwd: string;
  seccomp?: string;
  cgroup?: CgroupTarget;
  /**
   * wb-exec alone (no sandbox): it forks nothing before its request, so where moving the helper's thread into the
   * cgroup would wait (no cgroup v1 `tasks` file: cgroup.ts enterCgroup) it is started first and moved into its
   * cgroup after, off the helper's thread (cgroup.ts moveIntoCgroup); usable once moved.
   */
  moveAfter?: boolean;
}

/** wb-exec's request (native/wb-exec.c), kept where the spawner's tests import it from. */
export { startRequest };

/**
 * How many sandboxes wait for their command at most. Two: a model's fix-and-test loop runs its tests twice with
 * a search, a read and a patch between, and both runs then find theirs with nothing set up beside those calls;
 * the next are set up in the next quiet moment (prepared.ts).
 */
export const KEPT_READY = 2;

/** A prepared sandbox of this helper, numbered by the server. */
export class PreparedSandbox {
  private exited = false;
  /** In its cgroup (or has none to go to): a sandbox started before its move is not handed a command until then. */
  private placed = true;
  /** Who waits for the move to end (whenPlaced): told whether it is in its cgroup. */
  private waiters: Array<(placed: boolean) => void> = [];
  private readonly onExit = () => {
    this.exited = true;
    if (this.cgroup) releaseCgroup(this.cgroup.dir);
  };

  private constructor(
    readonly n: number,
    readonly started: Spawned,
    readonly cgroup: CgroupTarget | undefined,
  ) {
    const child = started.result;
    // Until it is used nobody reads it: a sandbox that fails to come up only exits.
    for (const s of [child.stdin, child.stdout, child.stderr]) s.on('error', () => {});
    child.once('exit', this.onExit);
  }

  /** Starts one (undefined when it cannot start; the command then starts the usual way). */
  static start(n: number, spec: PrepareSpec): PreparedSandbox | undefined {
    const later = spec.moveAfter === true && spec.cgroup !== undefined && !movesThread(spec.cgroup.home);
    // bwrap itself needs no environment: the command's arrives with the request.
    const started = startChild({
      ...spec,
      ...(later ? { cgroup: undefined } : {}),
      env: {},
      sandboxed: true,
    });
    if ('error' in started) return undefined;
    const p = new PreparedSandbox(n, started, spec.cgroup);
    if (later) p.moveLater();
    return p;
  }

  private moveLater(): void {
    const { cgroup, started } = this;
    const pid = started.result.pid;
    if (!cgroup || pid === undefined) return;
    this.placed = false;
    void moveIntoCgroup(cgroup, pid).then((moved) => {
      if (moved) {
        started.limited = true;
        this.placed = true;
      } else this.discard();
      for (const w of this.waiters.splice(0)) w(moved && this.usable);
    });
  }

  /**
   * Calls `then` once it can be handed a command: at once when it can or never will, else when its move into its
   * cgroup ended (with false when the move failed: it is then discarded). A command that comes a moment after the
   * one before ended finds its process started but the move (a kernel grace period) still running: waiting for
   * the rest of it is cheaper than starting another process the usual way, which moves the helper in and out.
   */
  whenPlaced(then: (usable: boolean) => void): void {
    if (this.placed || this.exited) then(this.usable);
    else this.waiters.push(then);
  }

  /** Still waiting for its command (its exit not seen), and in its cgroup. */
  get usable(): boolean {
    return (
      this.placed &&
      !this.exited &&
      this.started.result.exitCode === null &&
      this.started.result.signalCode === null
    );
  }

  /** Hand it its command: what it runs, where, with which environment. */
  use(cwd: string, argv: readonly string[], env: Record<string, string>): Spawned {
    // From here on the command's own handle watches the process and ends its cgroup.
    this.exited = true;
    this.started.result.off('exit', this.onExit);
    this.started.result.stdin.write(startRequest(cwd, argv, env));
    return this.started;
  }

  /** Not needed after all (another was asked for, or the helper goes): its whole tree is killed. */
  discard(): void {
    if (this.exited) return;
    const pid = this.started.result.pid;
    if (pid) signalTree({ leader: pid, bySession: true, spareLeader: false }, 'SIGKILL');
    if (this.cgroup) killCgroup(this.cgroup.dir);
  }
}
