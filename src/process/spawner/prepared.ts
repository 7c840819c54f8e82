// The server's side of sandboxes prepared ahead (docs/security-model.md, "A sandbox per command, prepared
// ahead"; the helper's side is prepared-sandbox.ts): when a command ends the next sandbox is asked for, so a
// command that follows finds bubblewrap already set up and only wb-exec's request left to write. Not while a
// command runs: the set-up's milliseconds of CPU would be taken from it. Only when commands come back to back
// (one starting within BACK_TO_BACK_MS of the last one's end, as a script sends them), which a sandbox asked
// for at the end would not be ready for, is the next one asked for as each starts. A prepared sandbox is used
// only if it was built from exactly the options the command would get now (the masks are recomputed as the
// sandbox plan says), and only once.
import type { Clock } from '../../core/clock.js';
import type { CgroupTarget } from '../spawn/cgroup.js';
import type { NetAccess } from '../net/net-access.js';
import type { PrepareSpec } from './prepared-sandbox.js';
import { isBwrap, wrapperArgv, type SandboxPlan } from '../sandbox/sandbox.js';

/** What the registry says a prepared sandbox is built from (undefined: none can be, e.g. no wb-exec). */
export interface PreparedSource {
  template(): Template | undefined;
  /** A fresh pids cgroup for the sandbox and the command it becomes (pids-limit.ts). */
  nextCgroup(): CgroupTarget | undefined;
  /** The server's clock: when the last command ended. */
  clock: Pick<Clock, 'monotonic'>;
}

/**
 * A command starting within this long of the last one's end came back to back. Preparing a sandbox takes 5–10 ms
 * on two idle cores and a few times that on busy ones (docs/benchmarks.md); a model's next call comes seconds
 * after the result it read.
 */
export const BACK_TO_BACK_MS = 50;

type Template = Omit<PrepareSpec, 'cgroup'>;

/**
 * What a sandbox prepared ahead is built from: the options a command of this plan gets, started in the
 * workspace's root, the bridge, and wb-exec at the end. With bubblewrap only when the proxy's directory is
 * bound (where wb-exec is placed); without a sandbox, wb-exec alone (`starter`, the server's copy); undefined
 * otherwise (the Landlock sandbox), and commands start the usual way.
 */
export function preparedTemplate(
  plan: SandboxPlan,
  net: Pick<NetAccess, 'mounts' | 'bridgePrefix'>,
  root: string,
  starter?: string,
): Template | undefined {
  // Without a sandbox (dangerous, or SERVICE_SANDBOX=off) only wb-exec waits, in the next command's cgroup, and
  // only where the registry gives `starter`: where moving a process into a cgroup costs the kernel a grace period
  // (up to ~15 ms), which is then paid ahead, on a thread of the helper's pool (wb-exec forks nothing before its
  // request, so it may move after it started). Where a command is born in its cgroup by moving the helper's thread
  // alone, starting it the usual way is the cheaper one: no hand-over, and nothing prepared beside the answer
  // (docs/benchmarks.md#calls-back-to-back).
  if (plan.status.in_use === null)
    return starter ? { argv: [starter], cwd: root, moveAfter: true } : undefined;
  if (!isBwrap(plan) || plan.status.network !== 'proxy') return undefined;
  const m = net.mounts();
  const bridge = net.bridgePrefix();
  if (!('starterAt' in m) || !m.starterAt || !bridge) return undefined;
  return { argv: [...wrapperArgv(plan, root), ...bridge, m.starterAt], cwd: root, seccomp: plan.seccomp };
}

/**
 * preparedTemplate, built again only when what it is built from changed: the plan's options (sandbox.ts keeps
 * them for a while, as one array) or the bridge. Asked twice per command (take, then refill), it is otherwise
 * ~100 strings copied and joined each time.
 */
export function templateMemo(
  plan: () => SandboxPlan | undefined,
  net: Pick<NetAccess, 'mounts' | 'bridgePrefix'>,
  root: string,
  starter?: () => string | undefined,
): () => Template | undefined {
  let last: { args: unknown; bridge: string; t: Template | undefined } | undefined;
  return () => {
    const p = plan();
    if (!p) return undefined;
    const args = p.args?.();
    const bridge = net.bridgePrefix()?.join('\0') ?? '';
    if (!last || last.args !== args || last.bridge !== bridge)
      last = {
        args,
        bridge,
        t: preparedTemplate(p, net, root, p.status.in_use === null ? starter?.() : undefined),
      };
    return last.t;
  };
}

interface Asked {
  n: number;
  key: string;
  cgroup: CgroupTarget | undefined;
}

const keys = new WeakMap<Template, string>();
/** What tells two templates apart; the source hands out the same template object while nothing changed. */
function keyOf(t: Template): string {
  let k = keys.get(t);
  if (k === undefined) keys.set(t, (k = [t.cwd, t.seccomp ?? '', ...t.argv].join('\0')));
  return k;
}

export class PreparedPool {
  private asked: Asked | undefined;
  private lastEnd = -Infinity;

  constructor(private readonly source: PreparedSource) {}

  /** The prepared sandbox a command may use now, taken (it is never offered twice). */
  take(): { n: number; cgroup: CgroupTarget | undefined } | undefined {
    const a = this.asked;
    this.asked = undefined;
    const t = a && this.source.template();
    return a && t && keyOf(t) === a.key ? { n: a.n, cgroup: a.cgroup } : undefined;
  }

  /** Ask for the next one when none is asked for; `post` sends the helper the request. */
  refill(n: () => number, post: (m: { t: 'prepare'; n: number } & PrepareSpec) => void): void {
    if (this.asked) return;
    const t = this.source.template();
    if (!t) return;
    const cgroup = this.source.nextCgroup();
    this.asked = { n: n(), key: keyOf(t), cgroup };
    post({ t: 'prepare', n: this.asked.n, ...t, cgroup });
  }

  /** A command ended. */
  ended(): void {
    this.lastEnd = this.source.clock.monotonic();
  }

  /** Whether a command starting now comes back to back with the last one's end (BACK_TO_BACK_MS). */
  backToBack(): boolean {
    return this.source.clock.monotonic() - this.lastEnd < BACK_TO_BACK_MS;
  }

  /** The helper went away (its sandboxes die with it): forget the one asked for; its cgroup, to clean up. */
  forget(): CgroupTarget | undefined {
    const cg = this.asked?.cgroup;
    this.asked = undefined;
    return cg;
  }
}
