// Which jail git and ripgrep get on this machine (jail.ts): bubblewrap when it can build its sandbox here
// (with a user namespace of its own, else without), else the Landlock helper (jail-landlock.ts), else none —
// and, for none, why. SERVICE_SANDBOX=bwrap or landlock asks for that one only; off for none. Each is probed
// by running `true` in it, once per server.
import type { SandboxMode } from '../../config/load.js';
import { baseMounts, isolation } from './bwrap-view.js';
import { LandlockJail, type LandlockJailContext } from './jail-landlock.js';
import { probeRun, SECCOMP_FD } from '../sandbox/sandbox.js';
import { writeSeccompFilter } from '../sandbox/seccomp.js';
import { findExecutable } from '../spawn/spawn.js';

/** bubblewrap's jail as probed: its program, the mounts and namespaces every jail starts from, the filter. */
export type BwrapPlan = { bwrap: string; base: string[]; isolation: string[]; seccomp?: string };

export type JailPlan = BwrapPlan | LandlockJail | null;

/** The jail this machine gives, and (when none) why not. */
export function planJail(c: LandlockJailContext & { requested: SandboxMode }): {
  plan: JailPlan;
  why: string;
} {
  if (c.requested === 'off') return { plan: null, why: 'SERVICE_SANDBOX=off' };
  const bwrap = c.requested === 'landlock' ? undefined : planBwrap(c);
  if (bwrap && !('why' in bwrap)) return { plan: bwrap, why: '' };
  if (c.requested === 'bwrap') return { plan: null, why: bwrap?.why ?? '' };
  const ll = LandlockJail.plan(
    {
      pathVar: c.pathVar,
      workspaceReal: c.workspaceReal,
      dirs: c.dirs,
      privateFiles: c.privateFiles,
      sealed: c.sealed ?? [],
      readAllow: c.readAllow ?? [],
      alsoRead: c.alsoRead ?? [],
      alsoWrite: c.alsoWrite ?? [],
    },
    SECCOMP_FD,
    (helper, argv, filter) => probeRun(helper, argv, c.pathVar, filter),
  );
  if (ll instanceof LandlockJail) return { plan: ll, why: '' };
  return { plan: null, why: bwrap?.why ? `${bwrap.why}; ${ll.unavailable}` : ll.unavailable };
}

function planBwrap(c: LandlockJailContext): BwrapPlan | { why: string } {
  const bwrap = findExecutable('bwrap', c.pathVar);
  if (!bwrap) return { why: 'bwrap (bubblewrap) is not installed on PATH' };
  const seccomp = writeSeccompFilter(c.dirs.root);
  const mounts = baseMounts(c.workspaceReal);
  for (const r of c.alsoRead ?? []) mounts.push('--ro-bind', r, r);
  for (const w of c.alsoWrite ?? []) mounts.push('--bind', w, w);
  let error = '';
  for (const userns of [true, false]) {
    const base = [...mounts, ...isolation(userns)];
    const probeArgs = [...base, '--chdir', '/', ...(seccomp ? ['--seccomp', String(SECCOMP_FD)] : [])];
    const e = probeRun(bwrap, [...probeArgs, '--', 'true'], c.pathVar, seccomp);
    if (!e) return { bwrap, base, isolation: isolation(userns), seccomp };
    error ||= e;
  }
  return { why: `bwrap cannot create its sandbox here (${error})` };
}
