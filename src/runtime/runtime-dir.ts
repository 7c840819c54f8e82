// The per-instance runtime directory (decisions.md 26): <SERVICE_RUNTIME_ROOT or tmp>/workbench-mcp/<hash of
// workspace>/<pid>/ with home/, tmp/ and cache/ for children (HOME, TMPDIR, XDG_CACHE_HOME). It is never inside
// the workspace. At start, siblings left by dead instances of the same workspace are removed; at shutdown,
// this instance's directory is removed.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pidAlive as alive } from '../core/pid.js';
import { isInside } from '../workspace/paths.js';

export interface RuntimeDirs {
  root: string;
  home: string;
  tmp: string;
  cache: string;
}

export class RuntimeDirError extends Error {}

/** Runtimes created by this process so far: the first gets `<pid>/`, later ones `<pid>-<n>/`. */
let instances = 0;

export function createRuntimeDirs(
  runtimeRoot: string | undefined,
  workspaceReal: string,
  pid = process.pid,
): RuntimeDirs {
  const parent = path.resolve(runtimeRoot ?? tmpdir());
  let parentReal: string;
  try {
    mkdirSync(parent, { recursive: true });
    parentReal = realpathSync(parent);
  } catch (e) {
    throw new RuntimeDirError(
      `SERVICE_RUNTIME_ROOT ${parent} cannot be created (${(e as NodeJS.ErrnoException).code})`,
    );
  }
  if (isInside(workspaceReal, parentReal)) {
    throw new RuntimeDirError(
      `SERVICE_RUNTIME_ROOT ${parent} is inside the workspace; choose a directory outside it`,
    );
  }
  const hash = createHash('sha256').update(workspaceReal).digest('hex').slice(0, 16);
  const base = path.join(parentReal, 'workbench-mcp', hash);
  try {
    mkdirSync(base, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(base)) {
      const other = Number.parseInt(name, 10);
      if (Number.isInteger(other) && other !== pid && !alive(other))
        rmSync(path.join(base, name), { recursive: true, force: true });
    }
    instances++;
    const root = path.join(base, instances === 1 ? String(pid) : `${pid}-${instances}`);
    const dirs = {
      root,
      home: path.join(root, 'home'),
      tmp: path.join(root, 'tmp'),
      cache: path.join(root, 'cache'),
    };
    for (const d of [dirs.home, dirs.tmp, dirs.cache]) mkdirSync(d, { recursive: true, mode: 0o700 });
    return dirs;
  } catch (e) {
    throw new RuntimeDirError(
      `runtime directory under ${base} cannot be written (${(e as NodeJS.ErrnoException).code ?? e})`,
    );
  }
}

/** Removes this instance's directory; retried on ENOTEMPTY/EBUSY (a mount point vanishing late), never thrown. */
export function removeRuntimeDirs(dirs: RuntimeDirs): Error | undefined {
  try {
    rmSync(dirs.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    return undefined;
  } catch (e) {
    return e as Error;
  }
}
