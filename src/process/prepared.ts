// The server's side of sandboxes prepared ahead (docs/security-model.md, "A sandbox per command, prepared
// ahead"; the helper's side is prepared-sandbox.ts): after each command is handed to the spawner helper the
// next sandbox is asked for, so a command that follows finds bubblewrap already set up and only wb-exec's
// request left to write. A prepared sandbox is used only if it was built from exactly the options the command
// would get now (the masks are recomputed as the sandbox plan says), and only once.
import type { CgroupTarget } from './cgroup.js';
import { isBwrap } from './launch.js';
import type { NetAccess } from './net-access.js';
import type { PrepareSpec } from './prepared-sandbox.js';
import { wrapperArgv, type SandboxPlan } from './sandbox.js';

/** What the registry says a prepared sandbox is built from (undefined: none can be, e.g. no wb-exec). */
export interface PreparedSource {
  template(): Template | undefined;
  /** A fresh pids cgroup for the sandbox and the command it becomes (pids-limit.ts). */
  nextCgroup(): CgroupTarget | undefined;
}

type Template = Omit<PrepareSpec, 'cgroup'>;

/**
 * What a sandbox prepared ahead is built from: the options a command of this plan gets, started in the
 * workspace's root, the bridge, and wb-exec at the end. Only with bubblewrap and the proxy's directory bound
 * (where wb-exec is placed); undefined otherwise, and commands start the usual way.
 */
export function preparedTemplate(
  plan: SandboxPlan,
  net: Pick<NetAccess, 'mounts' | 'bridgePrefix'>,
  root: string,
): Template | undefined {
  if (!isBwrap(plan) || plan.status.network !== 'proxy') return undefined;
  const m = net.mounts();
  const bridge = net.bridgePrefix();
  if (!('starterAt' in m) || !m.starterAt || !bridge) return undefined;
  return { argv: [...wrapperArgv(plan, root), ...bridge, m.starterAt], cwd: root, seccomp: plan.seccomp };
}

interface Asked {
  n: number;
  key: string;
  cgroup: CgroupTarget | undefined;
}

const keyOf = (t: Template) => [t.cwd, t.seccomp ?? '', ...t.argv].join('\0');

export class PreparedPool {
  private asked: Asked | undefined;

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

  /** The helper went away (its sandboxes die with it): forget the one asked for; its cgroup, to clean up. */
  forget(): CgroupTarget | undefined {
    const cg = this.asked?.cgroup;
    this.asked = undefined;
    return cg;
  }
}
