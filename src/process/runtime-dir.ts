// The per-instance runtime directory: <runtime root>/workbench-mcp/<hash of workspace>/<pid>/ with home/,
// tmp/ and cache/ for children (HOME, TMPDIR, XDG_CACHE_HOME). It is never inside the workspace. The runtime
// root is SERVICE_RUNTIME_ROOT, else /run for a root server, else $XDG_RUNTIME_DIR, else the system temp
// directory. Nothing another user could have made is reused (docs/security-model.md): every directory from
// `workbench-mcp` down must be a real directory (not a symlink) owned by this server's user and writable by
// no one else, and the root itself must not let others rename what is in it (owned by us or root, or sticky
// like /tmp); otherwise the server refuses to start and names the path. At start, siblings left by dead
// instances of the same workspace are removed; at shutdown, this instance's directory is removed.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, realpathSync, rmdirSync, rmSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pidAlive as alive } from '../core/pid.js';

export interface RuntimeDirs {
  /** `<runtime root>/workbench-mcp`: every instance's directories; hidden from sandboxed commands. */
  base: string;
  root: string;
  home: string;
  tmp: string;
  cache: string;
}

export class RuntimeDirError extends Error {}

/** Runtimes created by this process so far: the first gets `<pid>/`, later ones `<pid>-<n>/`. */
let instances = 0;

export interface RuntimeRootChoice {
  /** SERVICE_RUNTIME_ROOT. */
  configured: string | undefined;
  /** $XDG_RUNTIME_DIR of the server's environment. */
  xdgRuntimeDir?: string;
}

const S_IWGRP_IWOTH = 0o022;

/**
 * `child` is `parent` or lies below it. Both must be absolute and normalized (real paths, or built from them
 * with path.join): a plain comparison of strings, for the runtime directories and the sandboxes' mount lists.
 */
export function within(parent: string, child: string): boolean {
  if (parent === '/') return child.startsWith('/');
  return child === parent || child.startsWith(`${parent}/`);
}
const S_ISVTX = 0o1000;

function euid(): number {
  return process.geteuid?.() ?? 0;
}

/** Where `workbench-mcp/` goes, and what it was chosen from (for messages). */
export function runtimeRoot(choice: RuntimeRootChoice, uid = euid()): { dir: string; from: string } {
  if (choice.configured) return { dir: path.resolve(choice.configured), from: 'SERVICE_RUNTIME_ROOT' };
  if (uid === 0) return { dir: '/run', from: 'the default for a root server' };
  const xdg = choice.xdgRuntimeDir;
  if (xdg && path.isAbsolute(xdg)) {
    const st = stat(xdg);
    if (st?.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0)
      return { dir: xdg, from: 'XDG_RUNTIME_DIR' };
  }
  return { dir: tmpdir(), from: 'the system temp directory' };
}

function stat(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

const FIX =
  'remove it (another user may have made it to tamper with this server), or set SERVICE_RUNTIME_ROOT to a directory only this user can write';

/** The root may be shared (/tmp), but then others must not be able to rename our entries in it. */
function checkRoot(dir: string, uid: number): void {
  const st = stat(dir);
  if (!st?.isDirectory()) throw new RuntimeDirError(`runtime root ${dir} is not a directory`);
  const others = (st.mode & S_IWGRP_IWOTH) !== 0;
  if (others && !(st.mode & S_ISVTX) && st.uid !== uid)
    throw new RuntimeDirError(
      `runtime root ${dir} is writable by other users and not sticky, so they could replace this server's directories in it; set SERVICE_RUNTIME_ROOT to a directory only this user can write`,
    );
}

/** Create `dir` (mode 0700) or accept it only when it is a real directory of ours that no one else can write. */
function ownDir(dir: string, uid: number): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) throw new RuntimeDirError(`runtime directory ${dir} is a symbolic link; ${FIX}`);
  if (!st.isDirectory()) throw new RuntimeDirError(`runtime directory ${dir} is not a directory; ${FIX}`);
  if (st.uid !== uid)
    throw new RuntimeDirError(
      `runtime directory ${dir} belongs to uid ${st.uid}, not to this server's user (uid ${uid}); ${FIX}`,
    );
  if (st.mode & S_IWGRP_IWOTH)
    throw new RuntimeDirError(
      `runtime directory ${dir} is writable by other users (mode ${(st.mode & 0o7777).toString(8)}); ${FIX}`,
    );
}

export function createRuntimeDirs(
  choice: RuntimeRootChoice,
  workspaceReal: string,
  pid = process.pid,
): RuntimeDirs {
  const uid = euid();
  const { dir: parent, from } = runtimeRoot(choice, uid);
  let parentReal: string;
  try {
    mkdirSync(parent, { recursive: true });
    parentReal = realpathSync(parent);
  } catch (e) {
    throw new RuntimeDirError(
      `runtime root ${parent} (${from}) cannot be created (${(e as NodeJS.ErrnoException).code})`,
    );
  }
  if (within(workspaceReal, parentReal)) {
    throw new RuntimeDirError(
      `SERVICE_RUNTIME_ROOT ${parent} is inside the workspace; choose a directory outside it`,
    );
  }
  checkRoot(parentReal, uid);
  const base = path.join(parentReal, 'workbench-mcp');
  const hashed = path.join(base, createHash('sha256').update(workspaceReal).digest('hex').slice(0, 16));
  // Another instance may remove an empty `workbench-mcp/` or `<hash>/` as it stops: then create them again.
  for (let attempt = 1; ; attempt++) {
    try {
      return instanceDirs(base, hashed, uid, pid);
    } catch (e) {
      if (e instanceof RuntimeDirError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && attempt < 5) continue;
      throw new RuntimeDirError(`runtime directory under ${hashed} cannot be written (${code ?? e})`);
    }
  }
}

function instanceDirs(base: string, hashed: string, uid: number, pid: number): RuntimeDirs {
  ownDir(base, uid);
  ownDir(hashed, uid);
  for (const name of readdirSync(hashed)) {
    const other = Number.parseInt(name, 10);
    if (Number.isInteger(other) && other !== pid && !alive(other))
      rmSync(path.join(hashed, name), { recursive: true, force: true });
  }
  instances++;
  const root = path.join(hashed, instances === 1 ? String(pid) : `${pid}-${instances}`);
  rmSync(root, { recursive: true, force: true }); // a dead instance that had the same pid
  const dirs = {
    base,
    root,
    home: path.join(root, 'home'),
    tmp: path.join(root, 'tmp'),
    cache: path.join(root, 'cache'),
  };
  ownDir(root, uid);
  for (const d of [dirs.home, dirs.tmp, dirs.cache]) ownDir(d, uid);
  return dirs;
}

/**
 * Removes this instance's directory, and the workspace's and `workbench-mcp/` above it when nothing else is
 * left in them; retried on ENOTEMPTY/EBUSY (a mount point vanishing late), never thrown.
 */
export function removeRuntimeDirs(dirs: RuntimeDirs): Error | undefined {
  try {
    rmSync(dirs.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  } catch (e) {
    return e as Error;
  }
  for (const d of [path.dirname(dirs.root), dirs.base]) {
    try {
      rmdirSync(d); // only when empty: another instance may be using it
    } catch {
      break;
    }
  }
  return undefined;
}
