// The OS sandbox (docs/tools.md#permission-modes, docs/design-notes.md#command-arguments,
// docs/design-notes.md#sandbox-mounts, docs/security-model.md): a bubblewrap wrapper around a command's argv,
// so it composes with any argv (shell, PTY). Whoever runs the server, a sandboxed command has no capabilities
// (dropped, no-new-privileges, a user namespace of its own in which no further namespace can be made), its
// own PID namespace and /proc, a read-only system with secret files and control sockets masked — in `safe`
// only the allow-list of host-view.ts (sandbox-mounts.ts) —, the kept state and every instance's runtime
// directories out of sight, /home, /root, /run/user and /var/tmp empty and read-only, this instance's private
// /tmp, and the workspace and runtime directory writable; `safe` and `trusted` also get a network namespace
// with only lo, where the bridge (native/wb-netbridge.c) puts 127.0.0.1:3128 in the hands of the server's filtering proxy
// — and where any part of that path cannot start, the namespace stays and is empty: no command of `safe` or
// `trusted` ever runs in the host's network namespace (docs/security-model.md#network-per-mode). `dangerous`
// runs unsandboxed unless the operator required bwrap. Usability is probed once, by running bwrap with the
// real options. Where bubblewrap cannot run (a container's seccomp profile refusing user namespaces), the
// Landlock helper confines commands instead (sandbox-landlock.ts), when it was built and works here.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import type { SandboxMode } from '../../config/load.js';
import { LANDLOCK_NO_NETWORK, planLandlock } from './sandbox-landlock.js';
import { mountArgs, type SandboxContext } from './sandbox-mounts.js';

export type { SandboxContext };
import { findExecutable } from '../spawn/spawn.js';
import { systemClock } from '../../core/clock.js';

export interface SandboxStatus {
  requested: SandboxMode;
  in_use: 'bwrap' | 'landlock' | null;
  reason: string;
  /** Network as commands see it: `proxy` is HTTP(S) through the filtering proxy only (net-proxy.ts). */
  network: 'none' | 'host' | 'proxy';
  /** `safe`/`trusted` without a network because part of its path could not start: why, and the fix. */
  network_unavailable?: string;
}

export interface SandboxPlan {
  status: SandboxStatus;
  bwrap?: string;
  /** The Landlock helper (native/wb-landlock.c), when it confines commands instead of bwrap. */
  landlock?: string;
  /** A command's PATH as the sandbox lets it work (Landlock: without hidden directories). */
  pathFor?: (pathVar: string) => string;
  /** The seccomp filter to open on SECCOMP_FD for every sandboxed spawn. */
  seccomp?: string;
  /** bwrap options before `--chdir` (the helper's whole options with Landlock): refreshed now and then. */
  args?: () => string[];
}

export class SandboxUnavailableError extends Error {
  readonly code = 'SANDBOX_UNAVAILABLE';
}

/** The descriptor a sandboxed program's starter must open the seccomp filter on. */
export const SECCOMP_FD = 3;

/** What `safe`/`trusted` mean without a kernel sandbox, in the words every report uses. */
export const UNCONFINED_NOTE =
  'without an OS sandbox the permission mode only filters command lines: a script or program a command starts ' +
  'can still read, write and connect anywhere the server user can';

/** Namespace and privilege options; `userns` false where the host forbids a nested user namespace. */
function isolationArgs(ctx: SandboxContext, userns: boolean): string[] {
  const a = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent'];
  // A user namespace of its own (as root too) in which no further one may be created: no unshare, no mount.
  if (userns) a.push('--unshare-user', '--disable-userns');
  a.push('--cap-drop', 'ALL');
  if (netIsolated(ctx)) a.push('--unshare-net');
  if (ctx.seccompFile) a.push('--seccomp', String(SECCOMP_FD));
  return a;
}

/**
 * The bwrap options for one command; `cwd` must be inside the workspace. No `--new-session`, by choice: the
 * spawn already makes bwrap a session leader without a controlling terminal (pipes: setsid; a PTY: the
 * command's own new terminal), the sandbox's /dev has no host terminal to open, and without a controlling
 * terminal TIOCSTI has nothing to inject into — while a second setsid would move bwrap's init out of the
 * process group that one kill(-pgid) ends (bwrap's parent-death signal alone misses an init killed during
 * its set-up) and would break job control in a PTY.
 */
/** bwrap is the leader of its sandbox; the Landlock helper becomes the command itself (sandbox-landlock.ts). */
export function isBwrap(plan: SandboxPlan): boolean {
  return plan.status.in_use === 'bwrap';
}

export function bwrapArgs(plan: SandboxPlan, cwd: string): string[] {
  return [...(plan.args?.() ?? []), '--chdir', cwd, '--'];
}

/** The argv a sandboxed command's own argv follows: bwrap and its options, or the Landlock helper's. */
export function wrapperArgv(plan: SandboxPlan, cwd: string): string[] {
  if (plan.landlock) return [plan.landlock, ...(plan.args?.() ?? [])];
  return [plan.bwrap as string, ...bwrapArgs(plan, cwd)];
}

/**
 * `safe` and `trusted` always have a network namespace of their own, with or without the proxy as their way
 * out: a network path that could not start leaves them no network, never the host's (fail closed).
 */
function netIsolated(ctx: SandboxContext): boolean {
  return ctx.mode === 'safe' || ctx.mode === 'trusted';
}

/** Why a `safe`/`trusted` sandbox has no network, when part of the network path could not start. */
export function netUnavailable(ctx: SandboxContext): string | undefined {
  return ctx.mode !== 'dangerous' && ctx.net && 'unavailable' in ctx.net ? ctx.net.unavailable : undefined;
}

const PROBE_TIMEOUT_MS = 5000;
/** Masks are recomputed at most this often (a docker socket that appears later gets masked then). */
const ARGS_TTL_MS = 30_000;

/**
 * Decide whether commands run in bubblewrap. `bwrap` required but unusable throws SandboxUnavailableError
 * (the server must not start); `auto` falls back to running unsandboxed and says why.
 */
export function planSandbox(context: SandboxContext): SandboxPlan {
  let ctx = context;
  const requested = ctx.requested;
  const none = (reason: string): SandboxPlan => ({
    status: { requested, in_use: null, reason, network: 'host' },
  });
  if (requested === 'off') return none(`SERVICE_SANDBOX=off; ${UNCONFINED_NOTE}`);
  if (requested === 'auto' && ctx.mode === 'dangerous') {
    return none(
      'permission mode dangerous: commands run without an OS sandbox by design (SERVICE_SANDBOX=bwrap would still confine them)',
    );
  }
  if (requested === 'landlock') {
    const ll = landlock(ctx);
    if ('unavailable' in ll.status)
      throw new SandboxUnavailableError(`SERVICE_SANDBOX=landlock, but ${ll.status.unavailable}`);
    return ll as SandboxPlan;
  }
  const bwrap = findExecutable('bwrap', ctx.pathVar);
  const fail = (why: string): SandboxPlan => {
    if (requested === 'bwrap') throw new SandboxUnavailableError(`SERVICE_SANDBOX=bwrap, but ${why}`);
    const ll = landlock(ctx);
    if ('unavailable' in ll.status) return none(`${why}; ${ll.status.unavailable}; ${UNCONFINED_NOTE}`);
    return ll as SandboxPlan;
  };
  if (!bwrap) return fail('bwrap (bubblewrap) is not installed on PATH');
  // Hosts that forbid a nested user namespace still get every other layer (and say so).
  const bare = { ...ctx, net: undefined };
  const error = probe(bwrap, bare, true);
  const userns = !error;
  if (error && probe(bwrap, bare, false)) return fail(`bwrap cannot create its sandbox here (${error})`);
  // The proxy's bridge must run here too (a binary built for another machine would not): else no network.
  const net = ctx.net && 'socket' in ctx.net ? ctx.net : undefined;
  if (net) {
    const argv = [...mountArgs(ctx), ...isolationArgs(ctx, userns), '--chdir', ctx.workspaceReal, '--'];
    const why = probeRun(
      bwrap,
      [...argv, net.bridgeAt, '3128', net.socket, '--', 'true'],
      ctx.pathVar,
      ctx.seccompFile,
    );
    if (why) {
      const fix = 'fix: rebuild on this machine (`npm run build` with a C compiler)';
      ctx = { ...ctx, net: { unavailable: `the network bridge cannot run here (${why}); ${fix}` } };
    }
  }
  let cached: { at: number; args: string[] } | undefined;
  const args = () => {
    const now = systemClock.monotonic();
    if (!cached || now - cached.at > ARGS_TTL_MS)
      cached = { at: now, args: [...mountArgs(ctx), ...isolationArgs(ctx, userns)] };
    return cached.args;
  };
  return { status: { ...describe(ctx, userns), requested }, bwrap, args, seccomp: ctx.seccompFile };
}

/** The Landlock plan (sandbox-landlock.ts), or why there is none. */
function landlock(ctx: SandboxContext): SandboxPlan | { status: { unavailable: string } } {
  const p = planLandlock(ctx, SECCOMP_FD, (helper, argv, filter) =>
    probeRun(helper, argv, ctx.pathVar, filter),
  );
  if ('unavailable' in p) return { status: p };
  const unavailable = p.network === 'none' ? (netUnavailable(ctx) ?? LANDLOCK_NO_NETWORK) : undefined;
  const status: SandboxStatus = {
    requested: ctx.requested,
    in_use: 'landlock',
    reason: p.reason,
    network: p.network,
    ...(unavailable ? { network_unavailable: unavailable } : {}),
  };
  return { status, landlock: p.helper, args: p.args, seccomp: p.seccomp, pathFor: p.pathFor };
}

/** Run bwrap once with the real options; the first line of its complaint, or undefined when it works. */
function probe(bwrap: string, ctx: SandboxContext, userns: boolean): string | undefined {
  const argv = [...mountArgs(ctx), ...isolationArgs(ctx, userns), '--chdir', ctx.workspaceReal, '--', 'true'];
  return probeRun(bwrap, argv, ctx.pathVar, ctx.seccompFile);
}

/**
 * Run a bwrap argv once, with the seccomp filter on its descriptor (and `fds` on the ones after it); the first
 * line of its complaint, or undefined.
 */
export function probeRun(
  bwrap: string,
  argv: string[],
  pathVar: string | undefined,
  seccomp: string | undefined,
  fds: readonly number[] = [],
): string | undefined {
  const fd = seccomp ? openSync(seccomp, constants.O_RDONLY | constants.O_NOFOLLOW) : undefined;
  try {
    const r = spawnSync(bwrap, argv, {
      env: { PATH: pathVar || '/usr/bin:/bin' },
      timeout: PROBE_TIMEOUT_MS,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe', fd ?? 'ignore', ...fds],
    });
    if (!r.error && r.status === 0) return undefined;
    return (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function describe(ctx: SandboxContext, userns: boolean): Omit<SandboxStatus, 'requested'> {
  const net = netIsolated(ctx);
  const proxy = net && ctx.net !== undefined && 'socket' in ctx.net;
  const netText = proxy
    ? ctx.mode === 'trusted'
      ? "network: HTTP(S) to any public host, through the server's filtering proxy (own network namespace: host loopback and abstract sockets out of reach)"
      : "network: HTTP(S) only, through the server's filtering proxy (allow-list by host name; own network namespace)"
    : net
      ? `NO network (own network namespace, empty${netUnavailable(ctx) ? `; no proxy: ${netUnavailable(ctx)}` : ''})`
      : 'host network';
  const reason =
    'bubblewrap: no capabilities whoever runs the server (all dropped, no-new-privileges' +
    (userns
      ? ', own user namespace in which no namespace can be created, so no mount, umount, unshare or setns)'
      : '; nested user namespaces stay possible: this bwrap cannot combine --unshare-user with the rest here)') +
    `, ${netText}, ${ctx.mode === 'safe' ? 'read-only allow-list of the host (system programs and libraries, /etc, the install prefixes of PATH, SERVICE_READ_ALLOW)' : 'read-only system'} with secret files ` +
    '(/etc/shadow, SSH host keys, …) and control sockets masked, the kept state and other instances out of sight, /home /root /run/user /var/tmp empty and ' +
    'read-only, a private /tmp of this server kept across its commands, writable workspace and runtime directory, ' +
    "own PID namespace and /proc for each command (the server's and other commands' processes are out of sight; the whole tree ends with the command)" +
    (ctx.seccompFile
      ? ', a seccomp filter refusing setuid/setgid files, ptrace, pidfd_getfd, process_vm_* and io_uring'
      : ', no seccomp filter (unknown architecture)');
  const unavailable = proxy ? undefined : netUnavailable(ctx);
  return {
    in_use: 'bwrap',
    reason,
    network: proxy ? 'proxy' : net ? 'none' : 'host',
    ...(unavailable ? { network_unavailable: unavailable } : {}),
  };
}
