// git/repo: which work tree a workspace directory belongs to, found with `git rev-parse` under a ceiling at
// the workspace root (a workspace inside a larger repository is GIT_ERROR,
// docs/design-notes.md#git-hardening), checked by git/confine on every call, and the `-c` overrides its
// configuration needs (every filter driver it defines, from `git config` run pinned to the checked paths).
// The discovery is cached per directory, but only while nothing that decides which repository and
// configuration git reads has changed: the `.git` entry of the top, `commondir`, `config`, `config.worktree`
// (same inode, size, mtime, ctime), and no new `.git` between the directory and the top. It is never cached
// when the configuration includes other files or when one of those files changed too recently (git/settle:
// timestamps are coarse, so a later same-size rewrite in the same step would otherwise go unseen; ctime
// cannot be set back by a user). Git then runs pinned (git/run GitPin).
import { existsSync, lstatSync, statSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import type { GitHost } from './run.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import { confineRepo, explainUnseen, pinRepo, walkGitDirs, type RepoPaths } from './confine.js';
import { classifyGitFailure } from './failure.js';
import { discoverFilters, gitFailed, gitUnavailable, oweCheck, runGit, type GitPin } from './run.js';
import { systemClock } from '../core/clock.js';
import { stoodStill } from './settle.js';

export interface GitRepo {
  /** Real path of the work tree's top (inside the workspace); every git process runs here. */
  top: string;
  cwd: string;
  /** `-c` pairs disabling the repository's filter drivers. */
  filterArgs: readonly string[];
  /** The checked real paths every git process of this repository is pinned to (git/confine). */
  pin: GitPin;
}

export type RepoLookup = { kind: 'repo'; repo: GitRepo } | { kind: 'not_repo'; reason: string };

const MAX_CACHED = 64;

interface Entry {
  repo: Omit<GitRepo, 'pin'>;
  found: RepoPaths;
  sigs: Array<[string, string]>;
  /** Directories from the looked-up one up to (not including) the top: none may gain a `.git`. */
  between: string[];
}

/**
 * Each server's discoveries, keyed by the WorkspaceRoot its GitHost holds: the composition root makes that
 * value once per server, and every tool's narrow view of the server carries the same one (tools/registry.ts
 * `servicesFor`), so all git tools share the cache, which goes with the server and is never seen by another
 * (whose workspace and jail may differ), without every host type carrying a cache field.
 */
const caches = new WeakMap<WorkspaceRoot, Map<string, Entry>>();

const fileSig = (st: BigIntStats) =>
  // A directory (a `.git` directory) counts by identity only: its mtime moves with every index write.
  st.isDirectory()
    ? `d:${st.ino}:${st.mode}`
    : `f:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;

/** Identity (and, for files, size and timestamps) of a path and of a symlink's target; 'missing' when absent. */
function signature(p: string): string {
  try {
    // Most watched files are absent (commondir, config.worktree): no exception for those.
    const l = lstatSync(p, { bigint: true, throwIfNoEntry: false });
    if (!l) return 'missing';
    return l.isSymbolicLink() ? `l:${fileSig(l)}>${fileSig(statSync(p, { bigint: true }))}` : fileSig(l);
  } catch {
    return 'missing';
  }
}

/** No file (or symlink) among `p` and its target changed within its file system's wait before `started` (git/settle). */
function settled(p: string, started: number): boolean {
  try {
    for (const st of [lstatSync(p, { bigint: true }), statSync(p, { bigint: true })]) {
      if (!st.isDirectory() && !stoodStill(st, started)) return false;
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
export function fromCache(runtime: GitHost, dirReal: string): Entry | null {
  const e = caches.get(runtime.root)?.get(dirReal);
  if (!e) return null;
  if (!e.sigs.every(([p, s]) => signature(p) === s)) return null;
  if (e.between.some((d) => existsSync(path.join(d, '.git')))) return null;
  return e;
}

function remember(runtime: GitHost, dirReal: string, entry: Entry): void {
  let m = caches.get(runtime.root);
  if (!m) caches.set(runtime.root, (m = new Map()));
  m.delete(dirReal);
  m.set(dirReal, entry);
  if (m.size > MAX_CACHED) m.delete(m.keys().next().value as string);
}

/** The nearest directory above the workspace root that has a `.git` (the repository git would discover). */
function enclosingRepo(wsReal: string): string | null {
  for (let d = path.dirname(wsReal); ; d = path.dirname(d)) {
    if (existsSync(path.join(d, '.git'))) return d;
    if (d === path.dirname(d)) return null;
  }
}

function insideLargerRepo(top: string): ToolError {
  return new ToolError(
    'GIT_ERROR',
    `the workspace is a subdirectory of the git repository at ${top}, whose git directory lies outside the workspace, so the git tools do not read it`,
    { refused: 'enclosing_repository', repository: top },
    {
      suggestion:
        'Serve the top of that repository as the workspace to use the git tools; the file tools work as they are.',
    },
  );
}

/** Runs discovery from `dirReal`, which never looks above the workspace root (GIT_CEILING_DIRECTORIES). */
async function discover(
  runtime: GitHost,
  dirReal: string,
  signal?: AbortSignal,
): Promise<RepoPaths | RepoLookup> {
  const revParse = ['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir'];
  revParse.push('--git-common-dir');
  const rp = await runGit(runtime, revParse, {
    cwd: dirReal,
    pin: null,
    filterArgs: [],
    maxStdoutBytes: 64 * 1024,
    signal,
  });
  if (rp.spawnError) throw gitUnavailable(rp.spawnError);
  if (rp.code !== 0) {
    const failure = classifyGitFailure(rp).kind;
    explainUnseen(runtime.root.real, dirReal);
    if (failure === 'not_repository') {
      const above = enclosingRepo(runtime.root.real);
      if (above) throw insideLargerRepo(above);
      return { kind: 'not_repo', reason: 'not inside a git repository' };
    }
    if (failure === 'not_work_tree') {
      return { kind: 'not_repo', reason: 'inside a git directory or a bare repository, not a work tree' };
    }
    throw gitFailed('rev-parse', rp);
  }
  const [top, gitDir, commonDir] = rp.stdout
    .toString('utf8')
    .split('\n')
    .map((l) => path.resolve(dirReal, l)) as [string, string, string];
  return { top, gitDir, commonDir };
}

/**
 * Finds the work tree that contains `dirReal` (a real directory inside the workspace) and checks that
 * everything git would read of it lies inside the workspace (git/confine), on every call, cached or not.
 * `walkWithGit`: for a caller whose only use of the repository is git runs through git/run `runGit` (the git
 * tools): the walk of the git directories is left to the first of them, which does it while git runs in its
 * jail, and uses git's output only once it passed.
 */
export async function openRepo(
  runtime: GitHost,
  dirReal: string,
  signal?: AbortSignal,
  opts: { walkWithGit?: boolean } = {},
): Promise<RepoLookup> {
  const ws = runtime.root.real;
  const shared = runtime.sharedObjects ?? [];
  const confine = (found: RepoPaths): GitPin => {
    if (!opts.walkWithGit) return confineRepo(ws, found, shared);
    const pin = pinRepo(ws, found);
    oweCheck(pin, () => walkGitDirs(ws, pin, shared));
    return pin;
  };
  const cached = fromCache(runtime, dirReal);
  if (cached) return { kind: 'repo', repo: { ...cached.repo, pin: confine(cached.found) } };
  const started = systemClock.now();
  const found = await discover(runtime, dirReal, signal);
  if ('kind' in found) return found;
  const pin = confine(found);
  const filters = await discoverFilters(runtime, pin, signal);
  const top = pin.workTree;
  const repo: GitRepo = { top, cwd: top, filterArgs: filters.filterArgs, pin };
  // Not the git directory itself: its mtime moves with every index write.
  const watched = [
    path.join(top, '.git'),
    path.join(pin.gitDir, 'commondir'),
    path.join(pin.commonDir, 'config'),
    path.join(pin.gitDir, 'config.worktree'),
  ];
  if (!filters.hasIncludes && watched.every((p) => settled(p, started))) {
    remember(runtime, dirReal, {
      repo: { top, cwd: top, filterArgs: repo.filterArgs },
      found,
      sigs: watched.map((p) => [p, signature(p)]),
      between: dirsBetween(dirReal, top),
    });
  }
  return { kind: 'repo', repo };
}
