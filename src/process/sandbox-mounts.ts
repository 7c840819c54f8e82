// The filesystem a sandboxed command sees (decision 27, issue 10), as bwrap mount options in order: the
// system read-only; secret files masked with /dev/null and secret directories with an empty read-only tmpfs
// (a command may run as root without capabilities and still owns root's 0600 files); control sockets that
// hand out root-equivalent power masked; home directories, /var/tmp and /run/user emptied; this instance's
// private directory bound at /tmp; then the workspace and the runtime directory bound writable again (so a
// workspace under /tmp or /home still works), and the sandbox helper's own files (Node, its scripts)
// read-only where an emptied directory or the private /tmp hid them; and last the emptied directories remounted read-only, so a
// write outside the writable set fails with an error instead of landing in a tmpfs that vanishes.
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { SandboxContext } from './sandbox.js';

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

/** Mount options up to the namespace options (computed once per plan and refreshed now and then). */
export function mountArgs(ctx: SandboxContext): string[] {
  const writable = [ctx.workspaceReal, ctx.dirs.root];
  // A directory that contains the workspace or the runtime directory is hidden and they are bound back into
  // it; one that is one of them, or lies inside one, is left alone (hiding it would hide their files).
  const mayHide = (d: string) => !writable.some((w) => w === d || isInside(w, d));
  const a = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  const emptied: string[] = [];
  for (const d of [...EMPTIED_DIRS, ...SECRET_DIRS]) {
    const real = realDir(d);
    if (real && mayHide(real) && !emptied.includes(real)) {
      emptied.push(real);
      a.push('--tmpfs', real);
    }
  }
  for (const f of [...SECRET_FILES, ...sshHostKeys(), ...ctx.privateFiles, ...CONTROL_SOCKETS]) {
    const real = realFile(f);
    if (real && !emptied.some((d) => isInside(d, real)) && mayHide(real))
      a.push('--ro-bind', '/dev/null', real);
  }
  const privateTmp = isDir('/tmp') && mayHide('/tmp');
  if (privateTmp) a.push('--bind', ctx.dirs.tmp, '/tmp');
  a.push('--bind', ctx.workspaceReal, ctx.workspaceReal, '--bind', ctx.dirs.root, ctx.dirs.root);
  for (const f of ctx.helperFiles) {
    const real = realAny(f);
    const hidden =
      emptied.some((d) => isInside(d, real ?? '')) || (privateTmp && isInside('/tmp', real ?? ''));
    // Where /tmp is the private one, binding them creates their mount points in it (removed at shutdown).
    if (real && hidden && !isInside(ctx.workspaceReal, real)) a.push('--ro-bind', real, real);
  }
  for (const d of emptied) a.push('--remount-ro', d);
  return a;
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

function realAny(p: string): string | undefined {
  try {
    return realpathSync(p);
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
