// The filesystem a sandboxed command sees (docs/security-model.md#what-a-command-sees), as bwrap mount options
// in order. `safe` starts from an allow-list (host-view.ts, shared with the tool jail): the system's programs
// and libraries, /etc, the install prefixes of PATH, SERVICE_READ_ALLOW and the workspace, on a read-only
// root of bubblewrap's own; `trusted` (and a confined `dangerous`) from the whole system read-only. Then, where
// shown: secret files masked with /dev/null and secret directories with an empty read-only tmpfs (a command
// may run as root without capabilities and still owns root's 0600 files); control sockets that hand out
// root-equivalent power masked; home directories, /var/tmp and /run/user emptied; /dev read-only with a small
// /dev/shm of the command's own; /tmp this instance's private directory — or, when the workspace or the
// runtime directory lies under /tmp, an empty read-only /tmp, so a write next to the workspace fails instead
// of landing in a directory nobody sees; every instance's runtime directories and the kept state of every
// instance (the state roots, sealedDirsOf) emptied; then the workspace and the runtime directory's home/,
// tmp/ and cache/ bound writable again. The runtime directory itself stays read-only: a command cannot replace
// what a later sandbox is built from (its tmp/ is bound at /tmp, its seccomp filter is read by bwrap). Last
// the emptied directories are remounted read-only, so a write outside the writable set fails with an error
// instead of landing in a tmpfs that vanishes.
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { defaultStateRoot, type Config, type PermissionMode, type SandboxMode } from '../../config/load.js';
import { extraReadPaths, systemBinds, systemPaths } from './host-view.js';
import { within, type RuntimeDirs } from '../runtime-dir.js';

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
  /** SERVICE_READ_ALLOW: more host paths `safe` commands may read. */
  readAllow?: readonly string[];
  /** Kept state of every instance (state roots, sealedDirsOf): hidden from every command and jail. */
  sealed?: readonly string[];
  /** Read-only even inside what is hidden: a worktree's source object directory (src/workspaces/). */
  alsoRead?: readonly string[];
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
  const view = allowList(ctx);
  const shown = (x: string) => !view || view.some((v) => v === x || isInside(v, x));
  const a = view ? viewArgs(view, ctx.workspaceReal) : ['--ro-bind', '/', '/'];
  a.push('--dev', '/dev', '--perms', '1777', '--size', String(SHM_BYTES));
  a.push('--tmpfs', '/dev/shm', '--proc', '/proc');
  const emptied: string[] = [];
  for (const dir of [...EMPTIED_DIRS, ...SECRET_DIRS]) {
    const real = realDir(dir);
    if (real && shown(real) && mayHide(real) && !emptied.includes(real)) {
      emptied.push(real);
      a.push('--tmpfs', real);
    }
  }
  for (const f of [...SECRET_FILES, ...sshHostKeys(), ...ctx.privateFiles, ...CONTROL_SOCKETS]) {
    const real = realFile(f);
    if (real && shown(real) && !emptied.some((e) => isInside(e, real)) && mayHide(real))
      a.push('--ro-bind', '/dev/null', real);
  }
  a.push(...tmpArgs(ctx, mayHide, emptied));
  // Every instance's runtime directories (and this one's seccomp filter) and the kept state of every
  // instance are out of sight, unless already hidden above.
  for (const dir of [d.base, ...(ctx.sealed ?? [])]) {
    const real = realDir(dir);
    if (real && shown(real) && mayHide(real) && !emptied.some((e) => e === real || isInside(e, real))) {
      emptied.push(real);
      a.push('--tmpfs', real);
    }
  }
  for (const w of writable) a.push('--bind', w, w);
  for (const r of ctx.alsoRead ?? []) a.push('--ro-bind', r, r);
  // The proxy's socket and the bridge, under the (hidden) runtime directory: the only way out of `safe` and
  // `trusted`.
  if (ctx.net && 'socket' in ctx.net) a.push('--ro-bind', ctx.net.dir, ctx.net.dir);
  for (const e of emptied) a.push('--remount-ro', e);
  a.push('--remount-ro', '/dev');
  // The allow-list view's own root is a tmpfs bubblewrap made: nothing may be written there either.
  if (view) a.push('--remount-ro', '/');
  return a;
}

/** /tmp: this instance's private one, or an empty read-only one when the workspace or runtime lies under it. */
function tmpArgs(ctx: SandboxContext, mayHide: (x: string) => boolean, emptied: string[]): string[] {
  const tmp = isDir('/tmp') ? '/tmp' : undefined;
  if (!tmp || !mayHide(tmp)) return [];
  if ([ctx.workspaceReal, ctx.dirs.root].some((w) => isInside(tmp, w))) {
    emptied.push(tmp);
    return ['--tmpfs', tmp];
  }
  return ['--bind', ctx.dirs.tmp, tmp];
}

/**
 * `safe`: the host paths a command may read (host-view.ts: the system, /etc, the PATH prefixes and
 * SERVICE_READ_ALLOW) and the workspace, as real paths; undefined for `trusted` and `dangerous`, which see
 * the whole host but what is masked.
 */
export function allowList(ctx: SandboxContext): string[] | undefined {
  if (ctx.mode !== 'safe') return undefined;
  const extra = extraReadPaths({
    pathVar: ctx.pathVar,
    readAllow: ctx.readAllow ?? [],
    workspaceReal: ctx.workspaceReal,
    sealed: [ctx.dirs.base, ...(ctx.sealed ?? [])],
  });
  const etc = realDir('/etc');
  return [...systemPaths(), ...(etc ? [etc] : []), ...extra, ctx.workspaceReal];
}

/** bwrap options that show the allow-list read-only (the workspace is bound writable later). */
function viewArgs(view: string[], workspaceReal: string): string[] {
  const system = new Set(systemPaths());
  const a = systemBinds();
  for (const p of view) if (!system.has(p) && p !== workspaceReal) a.push('--ro-bind', p, p);
  return a;
}

/**
 * What the mounts above hide, as real paths, for the Landlock sandbox (sandbox-landlock.ts), which cannot
 * mount and denies access to them instead: the emptied and secret directories, /tmp, every instance's runtime
 * directories, the secret files, the server's own files and the control sockets.
 */
export function maskedPaths(ctx: SandboxContext): string[] {
  const dirs = [...EMPTIED_DIRS, ...SECRET_DIRS, '/tmp', ctx.dirs.base, ...(ctx.sealed ?? [])].map(realDir);
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

/** `child` lies below `parent` (not `parent` itself); both real paths, as every path here is. */
function isInside(parent: string, child: string): boolean {
  return child !== parent && within(parent, child);
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

/**
 * The state roots to seal (docs/security-model.md#kept-state): this server's (SERVICE_STATE_DIR,
 * XDG_STATE_HOME or ~/.local/state) and the default one of its environment, where other instances keep theirs.
 */
export function sealedDirsOf(c: Pick<Config, 'stateDir' | 'env'>): string[] {
  const roots = [c.stateDir?.dir, defaultStateRoot(c.env)].filter((d) => d !== undefined);
  return [...new Set(roots.map((d) => path.resolve(d)))];
}

/** The server's own secret files (token file, audit log), hidden from commands and from the tool jail. */
export function privateFilesOf(c: { authTokenFile?: string; auditLog?: string }): string[] {
  return [c.authTokenFile, c.auditLog].filter((f) => f !== undefined).map((f) => path.resolve(f));
}
