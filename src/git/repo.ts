// git/repo: which work tree a workspace directory belongs to, and the `-c` overrides its configuration needs
// (every filter driver it defines), found with `git rev-parse` and `git config` (git/run). The answer is
// cached per directory so a git tool costs one git process, but a cached answer is only used while nothing
// that decides which configuration git reads has changed: the `.git` entry of the top, `commondir`,
// `config`, `config.worktree` (same inode, size, mtime, ctime), and no new `.git` between the directory and
// the top. An answer is never cached when the configuration includes other files or when one of those
// files changed within the last STABLE_MS (timestamps are coarse, so a later same-size rewrite in the same
// tick would otherwise go unseen; ctime cannot be set back by a user). Git then always runs at the top, so
// discovery cannot pick up a repository created below it since.
import { existsSync, lstatSync, statSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import type { Runtime } from '../runtime/runtime.js';
import { discoverFilters, gitFailed, gitUnavailable, runGit } from './run.js';

export interface GitRepo {
  /** Real path of the work tree's top; every git process runs here. */
  top: string;
  cwd: string;
  /** The top lies above the workspace root (the workspace is a subdirectory of a repository). */
  topAboveWorkspace: boolean;
  /** Diff output paths are relative to this directory: the top, or the workspace root when the top is above it. */
  diffBase: string;
  /** `--relative=<workspace>/` when the top is above the workspace: diffs limited to it and relative to it. */
  relativeArgs: readonly string[];
  /** `-c` pairs disabling the repository's filter drivers. */
  filterArgs: readonly string[];
}

export type RepoLookup = { kind: 'repo'; repo: GitRepo } | { kind: 'not_repo'; reason: string };

export const STABLE_MS = 2000;
const MAX_CACHED = 64;

interface Entry {
  repo: GitRepo;
  sigs: Array<[string, string]>;
  /** Directories from the looked-up one up to (not including) the top: none may gain a `.git`. */
  between: string[];
}

const caches = new WeakMap<Runtime, Map<string, Entry>>();

const fileSig = (st: BigIntStats) =>
  // A directory (a `.git` directory) counts by identity only: its mtime moves with every index write.
  st.isDirectory()
    ? `d:${st.ino}:${st.mode}`
    : `f:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;

/** Identity (and, for files, size and timestamps) of a path and of a symlink's target; 'missing' when absent. */
function signature(p: string): string {
  try {
    const l = lstatSync(p, { bigint: true });
    return l.isSymbolicLink() ? `l:${fileSig(l)}>${fileSig(statSync(p, { bigint: true }))}` : fileSig(l);
  } catch {
    return 'missing';
  }
}

/** No file (or symlink) among `p` and its target changed after `before` (ms since the epoch). */
function settled(p: string, before: number): boolean {
  try {
    for (const st of [lstatSync(p), statSync(p)]) {
      if (!st.isDirectory() && (st.mtimeMs > before || st.ctimeMs > before)) return false;
    }
    return true;
  } catch {
    return true; // missing is a state like any other (its appearance changes the signature)
  }
}

function dirsBetween(dir: string, top: string): string[] {
  const out: string[] = [];
  for (let d = dir; d !== top && d.startsWith(top + path.sep); d = path.dirname(d)) out.push(d);
  return out;
}

/** The cached answer for `dirReal` when it is still valid (exported for tests). */
export function fromCache(runtime: Runtime, dirReal: string): GitRepo | null {
  const e = caches.get(runtime)?.get(dirReal);
  if (!e) return null;
  if (!e.sigs.every(([p, s]) => signature(p) === s)) return null;
  if (e.between.some((d) => existsSync(path.join(d, '.git')))) return null;
  return e.repo;
}

function remember(runtime: Runtime, dirReal: string, entry: Entry): void {
  let m = caches.get(runtime);
  if (!m) caches.set(runtime, (m = new Map()));
  m.delete(dirReal);
  m.set(dirReal, entry);
  if (m.size > MAX_CACHED) m.delete(m.keys().next().value as string);
}

/** Finds the work tree that contains `dirReal` (a real directory inside the workspace). */
export async function openRepo(runtime: Runtime, dirReal: string, signal?: AbortSignal): Promise<RepoLookup> {
  const cached = fromCache(runtime, dirReal);
  if (cached) return { kind: 'repo', repo: cached };
  const started = Date.now();
  const revParse = ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-path', 'commondir'];
  revParse.push('--git-path', 'config', '--git-path', 'config.worktree');
  const [rp, filters] = await Promise.all([
    runGit(runtime, revParse, { cwd: dirReal, filterArgs: [], maxStdoutBytes: 64 * 1024, signal }),
    discoverFilters(runtime, dirReal, signal),
  ]);
  if (rp.spawnError) throw gitUnavailable(rp.spawnError);
  if (rp.code !== 0) {
    const msg = rp.stderr.trim();
    if (/not a git repository/i.test(msg)) return { kind: 'not_repo', reason: 'not inside a git repository' };
    if (/must be run in a work tree/i.test(msg)) {
      return { kind: 'not_repo', reason: 'inside a git directory or a bare repository, not a work tree' };
    }
    throw gitFailed('rev-parse', rp);
  }
  const [top, , commondir, config, configWorktree] = rp.stdout
    .toString('utf8')
    .split('\n')
    .map((l) => path.resolve(dirReal, l)) as [string, string, string, string, string];
  const ws = runtime.root.real;
  const above = ws.startsWith(top + path.sep);
  if (!above && !(top === ws || top.startsWith(ws + path.sep))) {
    // core.worktree (or a gitfile) can point the work tree anywhere: never list files outside the workspace.
    throw new ToolError(
      'GIT_ERROR',
      'the work tree of this repository lies outside the workspace, so the git tools do not read it',
      { work_tree: top },
      {
        suggestion:
          'Check core.worktree in .git/config (read_file shows it); the git tools only read work trees inside or around the workspace.',
      },
    );
  }
  const repo: GitRepo = {
    top,
    cwd: top,
    topAboveWorkspace: above,
    diffBase: above ? ws : top,
    relativeArgs: above ? [`--relative=${path.relative(top, ws).split(path.sep).join('/')}/`] : [],
    filterArgs: filters.filterArgs,
  };
  // Not the git directory itself: its mtime moves with every index write.
  const watched = [path.join(top, '.git'), commondir, config, configWorktree];
  const before = started - STABLE_MS;
  if (!filters.hasIncludes && watched.every((p) => settled(p, before))) {
    remember(runtime, dirReal, {
      repo,
      sigs: watched.map((p) => [p, signature(p)]),
      between: dirsBetween(dirReal, top),
    });
  }
  return { kind: 'repo', repo };
}
