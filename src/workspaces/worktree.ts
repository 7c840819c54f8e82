// A worktree per task (docs/security-model.md#several-workspaces): `git clone --shared --no-checkout` of the
// source repository into a directory the server owns (under its state directory), then a new branch from the
// base checked out there. Not `git worktree add`: a linked worktree needs the source's common `.git` writable,
// so a command in it could rewrite every branch of the source and every other worktree; a clone writes only
// its own `.git`, and borrows the source's objects through `objects/info/alternates`, which its sandbox and
// jail show read-only. `origin` stays the source, so the operator's merge fetches from the clone.
// Every git run goes through a jail (docs/security-model.md, rule A): the source read-only, and only the
// new clone's directory writable while it is made.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/load.js';
import { ToolError } from '../core/tool-error.js';
import {
  buildGitArgv,
  filterOverrides,
  gitEnv,
  parseFilterNames,
  stderrSummary,
  GIT_TIMEOUT_MS,
} from '../git/run.js';
import { runArgv, type ArgvResult } from '../process/jail/argv.js';
import { ToolJail } from '../process/jail/jail.js';
import type { RuntimeDirs } from '../process/runtime-dir.js';
import { privateFilesOf, sealedDirsOf } from '../process/sandbox/sandbox-mounts.js';

/** What making and checking worktrees needs of the server. */
export interface WorktreeHost {
  readonly config: Config;
  /** The server's own runtime directories (the jail's seccomp filter and scratch live there). */
  readonly dirs: RuntimeDirs;
  readonly signal: AbortSignal;
}

export interface MadeWorktree {
  branch: string;
  /** The commit the branch starts from. */
  base: string;
  /** The base as a branch of the source (`main`), or the commit when the base was not a branch. */
  baseRef: string;
  /** The source's object directory (the clone's alternate). */
  objects: string;
  /** The source checkout had uncommitted changes, which the worktree does not carry. */
  dirty: boolean;
}

function jailFor(
  h: WorktreeHost,
  workspaceReal: string,
  more: { read?: string[]; write?: string[] },
): ToolJail {
  const c = h.config;
  return new ToolJail({
    requested: c.sandbox,
    pathVar: c.env.PATH,
    workspaceReal,
    dirs: h.dirs,
    privateFiles: privateFilesOf(c),
    sealed: sealedDirsOf(c),
    readAllow: c.readAllow ?? [],
    alsoRead: more.read ?? [],
    alsoWrite: more.write ?? [],
  });
}

/**
 * One hardened git run in `jail`, in `cwd`; local clones need the file transport, which is allowed alone.
 * `status` first reads which filter drivers the repository's config names (a worktree's config is written by
 * its commands) and turns each off, as the git tools do (git/run.ts).
 */
async function git(h: WorktreeHost, jail: ToolJail, cwd: string, args: string[]): Promise<ArgvResult> {
  const host = { root: { real: cwd, lexical: cwd }, config: h.config, dirs: h.dirs, signal: h.signal, jail };
  const env = { ...gitEnv(host), GIT_ALLOW_PROTOCOL: 'file', GIT_CEILING_DIRECTORIES: path.dirname(cwd) };
  let filters: string[] = [];
  if (args[0] === 'status') {
    const names = await git(h, jail, cwd, ['config', '-z', '--get-regexp', '^filter\\..+\\.']);
    filters = names.code === 0 ? filterOverrides(parseFilterNames(names.stdout)) : [];
  }
  const argv = buildGitArgv(['-c', 'protocol.file.allow=always', ...filters], args);
  return runArgv('git', argv, {
    cwd,
    env,
    timeoutMs: GIT_TIMEOUT_MS * 4,
    maxStdoutBytes: 1024 * 1024,
    signal: h.signal,
    jail,
  });
}

function failed(what: string, r: ArgvResult, hint: string): ToolError {
  const why = r.spawnError ?? (stderrSummary(r.stderr) || `exit ${r.code ?? r.signal}`);
  return new ToolError('GIT_ERROR', `${what}: ${why}`, {}, { suggestion: hint });
}

const out = (r: ArgvResult) => r.stdout.toString('utf8').trim();

/** The source repository's facts: its top, object directory, base commit and whether it is dirty. */
async function inspect(h: WorktreeHost, source: string, baseRef: string) {
  const jail = jailFor(h, source, {});
  const top = await git(h, jail, source, ['rev-parse', '--show-toplevel', '--git-common-dir']);
  const hint =
    'open_workspace with mode "worktree" needs the top directory of a git repository with a commit; use mode "checkout" otherwise.';
  if (top.code !== 0) throw failed(`${source} is not a git repository`, top, hint);
  const [topDir, common] = out(top).split('\n');
  if (topDir !== source)
    throw new ToolError(
      'GIT_ERROR',
      `${source} is not the top of its repository (${topDir})`,
      {},
      { suggestion: hint },
    );
  const base = await git(h, jail, source, [
    'rev-parse',
    '--verify',
    '--end-of-options',
    `${baseRef}^{commit}`,
  ]);
  if (base.code !== 0) throw failed(`base_ref ${JSON.stringify(baseRef)} names no commit`, base, hint);
  const named = await git(h, jail, source, ['rev-parse', '--abbrev-ref', baseRef]);
  const status = await git(h, jail, source, ['status', '--porcelain', '-z', '--untracked-files=normal']);
  return {
    objects: path.resolve(source, common ?? '.git', 'objects'),
    base: out(base),
    baseRef: named.code === 0 && out(named) !== 'HEAD' && out(named) !== '' ? out(named) : out(base),
    dirty: status.code === 0 && status.stdout.length > 0,
  };
}

/** Clones `source` into `dest` (which must not exist) and checks out `branch` from `baseRef` there. */
export async function makeWorktree(
  h: WorktreeHost,
  source: string,
  dest: string,
  branch: string,
  baseRef: string,
): Promise<MadeWorktree> {
  if (baseRef.startsWith('-'))
    throw new ToolError('INVALID_ARGUMENT', 'base_ref must not start with "-"', { field: 'base_ref' });
  const facts = await inspect(h, source, baseRef);
  mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
  try {
    mkdirSync(dest, { mode: 0o700 });
    const cloneJail = jailFor(h, source, { write: [dest] });
    const clone = await git(h, cloneJail, source, [
      'clone',
      '--quiet',
      '--shared',
      '--no-checkout',
      '--',
      source,
      dest,
    ]);
    if (clone.code !== 0)
      throw failed(
        'git clone --shared failed',
        clone,
        'Tell the operator; the source repository may be damaged.',
      );
    const inJail = jailFor(h, dest, { read: [facts.objects], write: [dest] });
    const co = await git(h, inJail, dest, ['checkout', '--quiet', '-b', branch, facts.base]);
    if (co.code !== 0) throw failed(`git checkout -b ${branch} failed`, co, 'Tell the operator.');
  } catch (e) {
    rmSync(dest, { recursive: true, force: true });
    throw e;
  }
  return { branch, ...facts };
}

/**
 * What a worktree holds that its base does not: uncommitted changes, and commits of its branch the source's
 * base branch does not contain. Undefined when there is none (it may then be removed without asking).
 */
export async function pendingWork(
  h: WorktreeHost,
  w: { path: string; source: string; baseRef: string; objects: string },
): Promise<string | undefined> {
  const jail = jailFor(h, w.path, { read: [w.objects] });
  const status = await git(h, jail, w.path, ['status', '--porcelain', '-z', '--untracked-files=normal']);
  if (status.code !== 0 || status.stdout.length > 0) return 'it has uncommitted changes';
  const tip = await git(h, jail, w.path, ['rev-parse', '--verify', 'HEAD^{commit}']);
  if (tip.code !== 0) return 'its branch cannot be read';
  const srcJail = jailFor(h, w.source, {});
  const merged = await git(h, srcJail, w.source, ['merge-base', '--is-ancestor', out(tip), w.baseRef]);
  return merged.code === 0
    ? undefined
    : `its branch has commits that ${w.baseRef} of ${w.source} does not contain`;
}
