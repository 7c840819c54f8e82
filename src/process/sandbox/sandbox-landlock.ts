// The command sandbox where bubblewrap cannot run (docs/security-model.md#the-landlock-sandbox), typically a
// container whose seccomp profile refuses user namespaces: the helper native/wb-landlock.c (built by
// scripts/build-native.mjs when a C compiler exists) confines itself — no capabilities, no_new_privs, a
// Landlock ruleset, the seccomp filter of seccomp.ts — and execs the command, which keeps the helper's pid,
// process group and session (so the server signals it like an unsandboxed command). Writes are allowed only
// in the workspace, the runtime directory's home/, tmp/ and cache/ and the terminal devices (not /dev/shm,
// which would be shared with the host and every command, unlike bubblewrap's small private one); reads in
// `safe` only on the allow-list of host-view.ts and /proc, elsewhere everywhere; what the bubblewrap mounts
// hide (sandbox-mounts.ts, the kept state included) and every device but a few are unreadable; `safe` and
// `trusted` get no TCP (Landlock, ABI >= 4) and no AF_INET/AF_INET6 socket at all (seccomp, for UDP and older
// kernels): there is no network namespace to bridge the proxy into, and the host's network is never theirs; abstract
// unix sockets and signals stay inside the sandbox (ABI >= 6). Usability is probed once, by running the
// helper with the real options.
import { lstatSync, realpathSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { allowList, maskedPaths, type SandboxContext } from './sandbox-mounts.js';
import { writeSeccompFilter } from './seccomp.js';
import { placeProgram } from '../native.js';
import { systemClock } from '../../core/clock.js';

/** Devices a command may write (and use ioctls on): what bubblewrap's own /dev offers. */
const DEVICES_RW = ['/dev/null', '/dev/zero', '/dev/full', '/dev/tty', '/dev/ptmx', '/dev/pts'];
const DEVICES_RO = ['/dev/random', '/dev/urandom'];
const PROBE_TIMEOUT_MS = 5000;
/** The hidden paths are looked up at most this often (a control socket that appears later is hidden then). */
const MASKS_TTL_MS = 30_000;

export interface LandlockPlan {
  helper: string;
  /** The seccomp filter to open on the descriptor the options name. */
  seccomp: string | undefined;
  /** The helper's options, up to and including `--`. */
  args: () => string[];
  /** A command's PATH without the directories it cannot use here (visiblePath). */
  pathFor: (pathVar: string) => string;
  abi: number;
  reason: string;
  network: 'none' | 'host';
}

/**
 * The helper, as copied into the runtime directory's root (native.ts): it sets up each confinement, outside it,
 * so it never runs from dist/, which may lie in the workspace. Undefined when it was not built.
 */
export function landlockHelper(dirs: { root: string }): string | undefined {
  return placeProgram('wb-landlock', dirs.root);
}

/** The helper's options for this context (`fd`: where the seccomp filter is opened, when there is one). */
export function landlockArgs(ctx: SandboxContext, fd: number | undefined): string[] {
  const d = ctx.dirs;
  const a: string[] = [];
  for (const w of [ctx.workspaceReal, d.home, d.tmp, d.cache, ...DEVICES_RW]) a.push('--rw', w);
  for (const r of [...DEVICES_RO, ...(ctx.alsoRead ?? [])]) a.push('--ro', r);
  // `safe`: reads only on the allow-list (host-view.ts) and /proc; else everywhere but the hidden paths.
  const view = allowList(ctx);
  if (view) for (const r of [...view, '/proc']) a.push('--read', r);
  for (const h of [...maskedPaths(ctx), '/dev']) a.push('--hide', h);
  if (noInet(ctx)) a.push('--no-inet');
  if (fd !== undefined) a.push('--seccomp', String(fd));
  a.push('--');
  return a;
}

/**
 * Whether the Landlock helper can confine commands here: its plan, or why not (not built, no Landlock in the
 * kernel, or the probe run failed). `run` runs the helper once with an argv and the filter on `fd`.
 */
export function planLandlock(
  ctx: SandboxContext,
  fd: number,
  run: (helper: string, argv: string[], filter: string | undefined) => string | undefined,
): LandlockPlan | { unavailable: string } {
  const helper = landlockHelper(ctx.dirs);
  if (!helper)
    return {
      unavailable:
        'the Landlock helper dist/native/wb-landlock was not built (no C compiler when `npm run build` ran)',
    };
  const abi = probeLandlockAbi(helper);
  if (typeof abi === 'string') return { unavailable: abi };
  // No network namespace here: the filter also refuses internet sockets (UDP included).
  const seccomp =
    ctx.seccompFile && noInet(ctx) ? writeSeccompFilter(ctx.dirs.root, { noInet: true }) : ctx.seccompFile;
  const slot = seccomp ? fd : undefined;
  const why = run(helper, [...landlockArgs(ctx, slot), 'true'], seccomp);
  if (why) return { unavailable: `the Landlock helper cannot confine a command here (${why})` };
  let cached: { at: number; args: string[]; path: Map<string, string> } | undefined;
  const fresh = () => {
    const now = systemClock.monotonic();
    if (!cached || now - cached.at > MASKS_TTL_MS)
      cached = { at: now, args: landlockArgs(ctx, slot), path: new Map() };
    return cached;
  };
  const pathFor = (pathVar: string) => {
    const c = fresh();
    const p = c.path.get(pathVar) ?? visiblePath(pathVar, ctx);
    c.path.set(pathVar, p);
    return p;
  };
  return {
    helper,
    seccomp,
    abi,
    args: () => fresh().args,
    pathFor,
    reason: describe(ctx, abi, seccomp !== undefined),
    network: noInet(ctx) ? 'none' : 'host',
  };
}

/** `safe` and `trusted` have no network here (fail closed: never the host's); `dangerous` keeps it. */
function noInet(ctx: SandboxContext): boolean {
  return ctx.mode === 'safe' || ctx.mode === 'trusted';
}

/** Why `safe`/`trusted` have no network in this sandbox, and the fix (sandbox.ts network_unavailable). */
export const LANDLOCK_NO_NETWORK =
  'the Landlock sandbox has no network namespace to bridge the proxy into; fix: let bubblewrap run (allow unprivileged user namespaces), or --permission-mode dangerous';

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * PATH without the directories inside hidden ones (a root server's ~/.local/bin, ~/.cargo/bin, …) and, in
 * `safe`, those off the allow-list: bubblewrap empties or leaves them out, so a command's shell looks further;
 * here their programs would be found but could not run (EACCES).
 */
export function visiblePath(pathVar: string, ctx: SandboxContext): string {
  const d = ctx.dirs;
  const writable = [ctx.workspaceReal, d.home, d.tmp, d.cache];
  const hidden = maskedPaths(ctx);
  const view = allowList(ctx);
  const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
  const readable = (p: string) =>
    !hidden.some((h) => under(p, h)) && (!view || view.some((v) => under(realOr(p), v)));
  return pathVar
    .split(':')
    .filter((p) => writable.some((w) => under(p, w)) || readable(p))
    .join(':');
}

/** The kernel's Landlock ABI as the helper reports it, or why it cannot be used. */
export function probeLandlockAbi(helper: string): number | string {
  const r = spawnSync(helper, ['--abi'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  const abi = Number(r.stdout?.trim());
  if (r.error || r.status !== 0 || !Number.isInteger(abi))
    return `the Landlock helper does not run here (${r.error?.message ?? (r.stderr || `exit ${r.status}`).trim()})`;
  if (abi < 1) return 'the kernel offers no Landlock (not built in, or not in the lsm= boot list)';
  return abi;
}

/** The status text: what holds, and what this sandbox cannot give that bubblewrap gives. */
function describe(ctx: SandboxContext, abi: number, filtered: boolean): string {
  const sockets = maskedPaths(ctx).filter(isSocket);
  const parts = [
    `Landlock (ABI ${abi}; bubblewrap cannot run here): no capabilities, no-new-privileges, writes only in the ` +
      'workspace and the runtime directory (not /dev/shm), ' +
      (ctx.mode === 'safe'
        ? 'reads only on an allow-list of the host (system programs and libraries, /etc, the install prefixes of PATH, SERVICE_READ_ALLOW, /proc), '
        : '') +
      'secret files and directories, the kept state, /home, /root, /tmp and ' +
      "other devices unreadable (names stay listable), the server's and other commands' memory and " +
      'environment out of reach',
    noInet(ctx)
      ? `NO network (${filtered ? 'seccomp refuses internet sockets' : 'no seccomp filter: UDP stays open'}${abi >= 4 ? ', Landlock refuses TCP' : ''}; no proxy: there is no network namespace to bridge into)`
      : 'host network',
    abi >= 6
      ? 'signals and abstract unix sockets confined to the command'
      : `signals and abstract unix sockets NOT confined (kernel Landlock ABI ${abi} < 6)`,
    filtered
      ? 'a seccomp filter refusing setuid/setgid files, ptrace, pidfd_getfd, process_vm_* and io_uring'
      : 'no seccomp filter (unknown architecture)',
    'unlike bubblewrap: no PID namespace (other processes are listed in /proc), no private /tmp, unix sockets ' +
      `reachable by path${sockets.length ? ` (here: ${sockets.join(', ')})` : ''}`,
  ];
  return parts.join('; ');
}

function isSocket(p: string): boolean {
  try {
    return lstatSync(p).isSocket();
  } catch {
    return false;
  }
}
