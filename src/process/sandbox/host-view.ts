// What of the host an allow-list sandbox shows (docs/security-model.md#what-a-command-sees): the tool jail of
// git and ripgrep (jail.ts) and `safe` commands (sandbox-mounts.ts, sandbox-landlock.ts) read from here, so
// there is one list. The system's programs and libraries (/usr and the top-level /bin, /sbin, /lib* — symlinks
// into /usr on merged systems), the install prefixes of the PATH entries the server passes on (PATH has
// /opt/node/bin: /opt/node), and what SERVICE_READ_ALLOW adds. Never a prefix that would show a directory
// that is hidden on purpose — a home directory, /tmp, the kept state, the runtime directories — or the
// workspace's parent (its siblings): such a PATH entry shows only itself, or nothing.
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { within } from '../runtime-dir.js';

/** Top-level directories of the system that hold programs and libraries (symlinks on merged-/usr systems). */
export const SYSTEM_TOPS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Directories whose contents are never shown through a PATH prefix (their own sandbox rules decide). */
const NEVER_THROUGH_PATH = ['/home', '/root', '/run', '/tmp', '/var/tmp', '/proc', '/dev', '/sys'];

export interface HostViewInput {
  pathVar: string | undefined;
  /** SERVICE_READ_ALLOW, absolute paths. */
  readAllow: readonly string[];
  workspaceReal: string;
  /** Directories that must stay out of sight (the kept state, every instance's runtime directories). */
  sealed: readonly string[];
}

/** bwrap options showing /usr and the system's top-level directories read-only (symlinks kept as symlinks). */
export function systemBinds(): string[] {
  const a = ['--ro-bind', '/usr', '/usr'];
  for (const top of SYSTEM_TOPS) {
    try {
      const st = lstatSync(top);
      if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(top), top);
      else if (st.isDirectory()) a.push('--ro-bind', top, top);
    } catch {
      /* absent here */
    }
  }
  return a;
}

/** The real paths the system directories stand for (each top that exists, through its symlink). */
export function systemPaths(): string[] {
  return unique(['/usr', ...SYSTEM_TOPS].map(real).filter((p) => p !== undefined));
}

/**
 * The host paths beyond the system directories and /etc that an allow-list view shows, as real paths:
 * the PATH entries' install prefixes and SERVICE_READ_ALLOW, deduplicated, none inside another.
 */
export function extraReadPaths(v: HostViewInput): string[] {
  const shown = systemPaths();
  const out: string[] = [];
  for (const entry of (v.pathVar ?? '').split(':')) {
    const p = pathPrefix(entry, v);
    if (p && !shown.some((s) => within(s, p))) out.push(p);
  }
  for (const r of v.readAllow) {
    const p = real(r);
    if (p) out.push(p);
  }
  return outermost(unique(out));
}

/** The directory a PATH entry's programs are installed under, or the entry itself, or undefined. */
function pathPrefix(entry: string, v: HostViewInput): string | undefined {
  if (!path.isAbsolute(entry)) return undefined;
  const dir = real(entry);
  if (!dir || dir === '/') return undefined;
  const parent = path.dirname(dir);
  const prefix = /^s?bin$/.test(path.basename(dir)) && parent !== '/' ? parent : dir;
  for (const candidate of prefix === dir ? [dir] : [prefix, dir])
    if (showable(candidate, v)) return candidate;
  return undefined;
}

/** Not a hidden area, not in the workspace (shown anyway), not containing it (its siblings) or anything sealed. */
function showable(p: string, v: HostViewInput): boolean {
  if (NEVER_THROUGH_PATH.some((n) => within(n, p) || within(p, n))) return false;
  if (within(v.workspaceReal, p)) return false;
  return ![v.workspaceReal, ...v.sealed].some((s) => within(p, s));
}

function real(p: string): string | undefined {
  try {
    const r = realpathSync(p);
    lstatSync(r);
    return r;
  } catch {
    return undefined;
  }
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

/** Drops every path that lies inside another of the list. */
function outermost(list: string[]): string[] {
  return list.filter((p) => !list.some((q) => q !== p && within(q, p)));
}
