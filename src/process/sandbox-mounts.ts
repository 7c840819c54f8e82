// The filesystem a sandboxed command sees (docs/security-model.md), as bwrap mount options in order: the
// system read-only; secret files masked with /dev/null and secret directories with an empty read-only tmpfs
// (a command may run as root without capabilities and still owns root's 0600 files); control sockets that
// hand out root-equivalent power masked; home directories, /var/tmp and /run/user emptied; /dev read-only
// with a small /dev/shm of the command's own; /tmp this instance's private directory — or, when the workspace
// or the runtime directory lies under /tmp, an empty read-only /tmp, so a write next to the workspace fails
// instead of landing in a directory nobody sees; then the workspace and the runtime directory's home/, tmp/
// and cache/ bound writable again. The runtime directory itself stays read-only: a command cannot replace
// what a later sandbox is built from (its tmp/ is bound at /tmp, its seccomp filter is read by bwrap). Last
// the emptied directories are remounted read-only, so a write outside the writable set fails with an error
// instead of landing in a tmpfs that vanishes.
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { PermissionMode, SandboxMode } from '../config/load.js';
import type { RuntimeDirs } from './runtime-dir.js';

/** What the sandbox is built from (sandbox.ts plans it). */
export interface SandboxContext {
  mode: PermissionMode;
  requested: SandboxMode;
  pathVar: string | undefined;
  workspaceReal: string;
  dirs: RuntimeDirs;
  /** Files of the server's own secrets (token file, audit log): masked inside the sandbox. */
  privateFiles: readonly string[];
  /** The seccomp filter (seccomp.ts) bwrap loads from fd 3, or undefined where none can be built. */
  seccompFile: string | undefined;
  /** `safe`/`trusted`: the filtering proxy's socket and the bridge program (net-access.ts), or why not. */
  net?: NetMounts | { unavailable: string };
}

/** A directory of the runtime directory (which commands cannot write), bound read-only at its own path. */
export interface NetMounts {
  /** Holds the proxy's socket, a copy of the bridge and one of wb-exec (when built). */
  dir: string;
  socket: string;
  bridgeAt: string;
  /** native/wb-exec, the end of a sandbox prepared ahead (prepared-sandbox.ts). */
  starterAt?: string;
}

/** Emptied and made read-only: where users and other programs keep their own files. */
const EMPTIED_DIRS = ['/home', '/root', '/run/user', '/var/tmp', '/run/secrets'];

/** Files whose contents are secrets even on a read-only system. */
const SECRET_FILES = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
  '/etc/krb5.keytab',
  '/etc/ipsec.secrets',
  '/var/backups/shadow.bak',
  '/var/backups/gshadow.bak',
];

/** Directories of private keys and credentials. */
const SECRET_DIRS = [
  '/etc/ssl/private',
  '/etc/pki/tls/private',
  '/etc/letsencrypt',
  '/etc/wireguard',
  '/etc/ipsec.d/private',
  '/etc/NetworkManager/system-connections',
];

/** Unix sockets that hand out root-equivalent power (container engines, init, the system bus, …). */
const CONTROL_SOCKETS = [
  '/run/docker.sock',
  '/run/containerd/containerd.sock',
  '/run/containerd/containerd.sock.ttrpc',
  '/run/crio/crio.sock',
  '/run/podman/podman.sock',
  '/run/buildkit/buildkitd.sock',
  '/run/k3s/containerd/containerd.sock',
  '/run/dbus/system_bus_socket',
  '/run/systemd/private',
  '/run/snapd.socket',
  '/run/snapd-snap.socket',
  '/run/libvirt/libvirt-sock',
  '/var/snap/lxd/common/lxd/unix.socket',
  '/var/lib/lxd/unix.socket',
  '/var/lib/incus/unix.socket',
];

/** Bytes of the /dev/shm each command gets (POSIX shared memory, semaphores); gone when the command ends. */
export const SHM_BYTES = 64 * 1024 * 1024;

/** Mount options up to the namespace options (computed once per plan and refreshed now and then). */
export function mountArgs(ctx: SandboxContext): string[] {
  const d = ctx.dirs;
  const writable = [ctx.workspaceReal, d.home, d.tmp, d.cache];
  // A directory that contains a writable one is hidden and they are bound back into it; one that is one of
  // them, or lies inside one, is left alone (hiding it would hide their files).
  const mayHide = (x: string) => !writable.some((w) => w === x || isInside(w, x));
  const a = ['--ro-bind', '/', '/', '--dev', '/dev', '--perms', '1777', '--size', String(SHM_BYTES)];
  a.push('--tmpfs', '/dev/shm', '--proc', '/proc');
  const emptied: string[] = [];
  for (const dir of [...EMPTIED_DIRS, ...SECRET_DIRS]) {
    const real = realDir(dir);
    if (real && mayHide(real) && !emptied.includes(real)) {
      emptied.push(real);
      a.push('--tmpfs', real);
    }
  }
  for (const f of [...SECRET_FILES, ...sshHostKeys(), ...ctx.privateFiles, ...CONTROL_SOCKETS]) {
    const real = realFile(f);
    if (real && !emptied.some((e) => isInside(e, real)) && mayHide(real))
      a.push('--ro-bind', '/dev/null', real);
  }
  const tmp = isDir('/tmp') ? '/tmp' : undefined;
  if (tmp && mayHide(tmp)) {
    const underTmp = [ctx.workspaceReal, d.root].some((w) => isInside(tmp, w));
    if (underTmp) {
      a.push('--tmpfs', tmp);
      emptied.push(tmp);
    } else a.push('--bind', d.tmp, tmp);
  }
  // Other instances' directories (and this one's seccomp filter) are out of sight, unless already hidden above.
  const base = realDir(d.base);
  if (base && mayHide(base) && !emptied.some((e) => e === base || isInside(e, base))) {
    emptied.push(base);
    a.push('--tmpfs', base);
  }
  for (const w of writable) a.push('--bind', w, w);
  // The proxy's socket and the bridge, under the (hidden) runtime directory: the only way out of `safe` and
  // `trusted`.
  if (ctx.net && 'socket' in ctx.net) a.push('--ro-bind', ctx.net.dir, ctx.net.dir);
  for (const e of emptied) a.push('--remount-ro', e);
  a.push('--remount-ro', '/dev');
  return a;
}

/**
 * What the mounts above hide, as real paths, for the Landlock sandbox (sandbox-landlock.ts), which cannot
 * mount and denies access to them instead: the emptied and secret directories, /tmp, every instance's runtime
 * directories, the secret files, the server's own files and the control sockets.
 */
export function maskedPaths(ctx: SandboxContext): string[] {
  const dirs = [...EMPTIED_DIRS, ...SECRET_DIRS, '/tmp', ctx.dirs.base].map(realDir);
  const files = [...SECRET_FILES, ...sshHostKeys(), ...ctx.privateFiles, ...CONTROL_SOCKETS].map(realFile);
  return [...new Set([...dirs, ...files].filter((p) => p !== undefined))];
}

function sshHostKeys(): string[] {
  try {
    return readdirSync('/etc/ssh')
      .filter((n) => /^ssh_host_.*_key$/.test(n))
      .map((n) => `/etc/ssh/${n}`);
  } catch {
    return [];
  }
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The real path of a directory (a symlinked /home hides its target), or undefined. */
function realDir(p: string): string | undefined {
  try {
    const r = realpathSync(p);
    return lstatSync(r).isDirectory() ? r : undefined;
  } catch {
    return undefined;
  }
}

/** The real path of an existing non-directory, or undefined. */
function realFile(p: string): string | undefined {
  try {
    const r = realpathSync(p);
    return lstatSync(r).isDirectory() ? undefined : r;
  } catch {
    return undefined;
  }
}

/** The server's own secret files (token file, audit log), hidden from commands and from the tool jail. */
export function privateFilesOf(c: { authTokenFile?: string; auditLog?: string }): string[] {
  return [c.authTokenFile, c.auditLog].filter((f) => f !== undefined).map((f) => path.resolve(f));
}
