// The OS sandbox (tool-contract "Permission modes", decision 27): a bubblewrap wrapper around a command's
// argv, so it composes with any argv (shell, PTY). `safe` gets a new network namespace (only lo); `safe`
// and `trusted` get a read-only system with /tmp, /var/tmp and the home directories hidden, and then the
// workspace and the runtime directory bound writable again (so a workspace under /tmp still works); every
// sandbox gets a PID namespace so the whole tree dies with it. `dangerous` runs unsandboxed unless the
// operator required bwrap. Whether bwrap is usable is probed once, by running it.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import type { PermissionMode, SandboxMode } from '../config/load.js';
import type { RuntimeDirs } from '../runtime/runtime-dir.js';
import { findExecutable } from './spawn.js';

export interface SandboxStatus {
  requested: SandboxMode;
  in_use: 'bwrap' | null;
  reason: string;
  /** Network as commands see it. */
  network: 'none' | 'host';
}

export interface SandboxPlan {
  status: SandboxStatus;
  bwrap?: string;
}

export class SandboxUnavailableError extends Error {
  readonly code = 'SANDBOX_UNAVAILABLE';
}

export interface SandboxContext {
  mode: PermissionMode;
  requested: SandboxMode;
  pathVar: string | undefined;
  workspaceReal: string;
  dirs: RuntimeDirs;
}

/** Unix sockets that hand out root-equivalent power; masked when present. */
const MASKED_SOCKETS = [
  '/run/docker.sock',
  '/run/containerd/containerd.sock',
  '/run/podman/podman.sock',
  '/run/dbus/system_bus_socket',
];

/** The bwrap options for one command; `cwd` must be inside the workspace. */
export function bwrapArgs(ctx: SandboxContext, cwd: string): string[] {
  const a = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const d of ['/tmp', '/var/tmp', '/home', '/root', '/run/user']) if (isDir(d)) a.push('--tmpfs', d);
  for (const s of MASKED_SOCKETS) if (exists(s)) a.push('--ro-bind', '/dev/null', s);
  a.push('--bind', ctx.workspaceReal, ctx.workspaceReal, '--bind', ctx.dirs.root, ctx.dirs.root);
  a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent');
  if (netIsolated(ctx)) a.push('--unshare-net');
  a.push('--chdir', cwd, '--');
  return a;
}

function netIsolated(ctx: SandboxContext): boolean {
  return ctx.mode === 'safe';
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function exists(p: string): boolean {
  try {
    return existsSync(p);
  } catch {
    return false;
  }
}

const PROBE_TIMEOUT_MS = 5000;

/**
 * Decide whether commands run in bubblewrap. `bwrap` required but unusable throws SandboxUnavailableError
 * (the server must not start); `auto` falls back to running unsandboxed and says why.
 */
export function planSandbox(ctx: SandboxContext): SandboxPlan {
  const requested = ctx.requested;
  const none = (reason: string): SandboxPlan => ({
    status: { requested, in_use: null, reason, network: 'host' },
  });
  if (requested === 'off')
    return none('SERVICE_SANDBOX=off: commands run without an OS sandbox; only the command policy applies');
  if (requested === 'auto' && ctx.mode === 'dangerous') {
    return none(
      'permission mode dangerous: commands run without an OS sandbox by design (SERVICE_SANDBOX=bwrap would still confine them)',
    );
  }
  const bwrap = findExecutable('bwrap', ctx.pathVar);
  const fail = (why: string): SandboxPlan => {
    if (requested === 'bwrap') throw new SandboxUnavailableError(`SERVICE_SANDBOX=bwrap, but ${why}`);
    return none(
      `${why}; commands run without an OS sandbox (network and writes outside the workspace are limited by the command policy only)`,
    );
  };
  if (!bwrap) return fail('bwrap (bubblewrap) is not installed on PATH');
  const probe = spawnSync(bwrap, [...bwrapArgs(ctx, ctx.workspaceReal), 'true'], {
    env: { PATH: ctx.pathVar || '/usr/bin:/bin' },
    timeout: PROBE_TIMEOUT_MS,
    encoding: 'utf8',
  });
  if (probe.error || probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim().split('\n')[0];
    return fail(`bwrap cannot create its sandbox here (${why})`);
  }
  const net = netIsolated(ctx);
  const reason =
    `bubblewrap: ${net ? 'no network (own network namespace)' : 'host network'}, read-only system, writable workspace and runtime directory, ` +
    '/tmp and home directories hidden, own PID namespace (the whole tree ends with the command)';
  return { status: { requested, in_use: 'bwrap', reason, network: net ? 'none' : 'host' }, bwrap };
}
