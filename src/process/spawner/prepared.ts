// The server's side of sandboxes prepared ahead (docs/security-model.md, "A sandbox per command, prepared
// ahead"; the helper's side is prepared-sandbox.ts): KEPT_READY sandboxes wait with bubblewrap already set up,
// so a command that comes finds only wb-exec's request left to write. They are set up again in a quiet moment
// (core/quiet.ts: no call being answered), not when a command ends: the set-up's milliseconds of CPU would be
// taken from the calls a client makes next (a search, a read, a patch) and from a command that runs beside it.
// Only once a burst of commands has used up the ones kept ready (a command found none) does each command of the
// burst ask for the next as it starts, as a script's commands need. A prepared sandbox is used only if it was
// built from exactly the options the command would get now (the masks are recomputed as the sandbox plan says),
// and only once; one built from other options is dropped.
import type { CgroupTarget } from '../spawn/cgroup.js';
import type { NetAccess } from '../net/net-access.js';
import { KEPT_READY, type PrepareSpec } from './prepared-sandbox.js';
import { isBwrap, wrapperArgv, type SandboxPlan } from '../sandbox/sandbox.js';

/** What the registry says a prepared sandbox is built from (undefined: none can be, e.g. no wb-exec). */
export interface PreparedSource {
  template(): Template | undefined;
  /** A fresh pids cgroup for the sandbox and the command it becomes (pids-limit.ts). */
  nextCgroup(): CgroupTarget | undefined;
}

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

/** What a command's start takes: the sandbox it may use, and the numbers of those built from other options. */
export interface Taken {
  ready?: { n: number; cgroup: CgroupTarget | undefined };
  stale: number[];
}

type Post = (m: { t: 'prepare'; n: number } & PrepareSpec) => void;

const keys = new WeakMap<Template, string>();
/** What tells two templates apart; the source hands out the same template object while nothing changed. */
function keyOf(t: Template): string {
  let k = keys.get(t);
  if (k === undefined) keys.set(t, (k = [t.cwd, t.seccomp ?? '', ...t.argv].join('\0')));
  return k;
}

export class PreparedPool {
  /** Asked for, oldest first; the helper holds them in the same order. */
  private asked: Asked[] = [];
  /** A command found none ready since the last quiet moment: each start asks for the next. */
  private burst = false;

  constructor(private readonly source: PreparedSource) {}

  /** The prepared sandbox a command may use now, taken (it is never offered twice), and the stale ones dropped. */
  take(): Taken {
    const t = this.source.template();
    const key = t && keyOf(t);
    const stale = this.asked.filter((a) => a.key !== key).map((a) => a.n);
    if (stale.length) this.asked = this.asked.filter((a) => a.key === key);
    const a = this.asked.shift();
    if (!a && t) this.burst = true;
    return { ...(a ? { ready: { n: a.n, cgroup: a.cgroup } } : {}), stale };
  }

  /** In a quiet moment (or when the helper came up): ask for as many as make KEPT_READY; the burst is over. */
  fill(n: () => number, post: Post): void {
    this.burst = false;
    while (this.asked.length < KEPT_READY && this.ask(n, post));
  }

  /** After a start: in a burst, ask for the next when none is left. */
  afterStart(n: () => number, post: Post): void {
    if (this.burst && this.asked.length === 0) this.ask(n, post);
  }

  /** Asks for one; false when none can be built (no template). */
  private ask(n: () => number, post: Post): boolean {
    const t = this.source.template();
    if (!t) return false;
    const a: Asked = { n: n(), key: keyOf(t), cgroup: this.source.nextCgroup() };
    this.asked.push(a);
    post({ t: 'prepare', n: a.n, ...t, cgroup: a.cgroup });
    return true;
  }

  /** How many are asked for and not taken. */
  get size(): number {
    return this.asked.length;
  }

  /** Whether a fill has anything to do: a burst to end, or fewer than KEPT_READY asked for where one can be built. */
  wants(): boolean {
    return this.burst || (this.asked.length < KEPT_READY && this.source.template() !== undefined);
  }

  /** The helper went away (its sandboxes die with it): forget those asked for; their cgroups, to clean up. */
  forget(): CgroupTarget[] {
    const cgs = this.asked.flatMap((a) => (a.cgroup ? [a.cgroup] : []));
    this.asked = [];
    this.burst = false;
    return cgs;
  }
}
