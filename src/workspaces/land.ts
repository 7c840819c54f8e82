// The operator's side of a worktree (docs/console.md#workspaces, docs/security-model.md#landing-a-worktree):
// its diff against its base, Merge into the base branch of the main checkout, and Discard. Every git run goes
// through a jail (rule A) pinned to checked paths with the repository's filter drivers off (git/repo.ts), and
// nothing the worktree's commands could have written is trusted (rule B): the clone is only read, by the
// server's own git upload-pack under the hardening of git/run.ts (no hooks, no fsmonitor, no pack-objects
// hook, which git never takes from repository config), and the objects it hands over are checked
// (fetch.fsckObjects). The main checkout is writable only for the merge's own run.
// A merge refuses, changing nothing, when the main checkout has another branch checked out than the one the
// worktree started from (no merge without a checkout), when it has uncommitted changes or untracked files, or
// when the merge would conflict (found by `git merge-tree` before anything is touched).
import { buildGitArgv, gitEnv, stderrSummary, GIT_TIMEOUT_MS, type GitHost } from '../git/run.js';
import { openRepo, type GitRepo } from '../git/repo.js';
import { runArgv, type ArgvResult } from '../process/jail/argv.js';
import { ToolJail } from '../process/jail/jail.js';
import { privateFilesOf, sealedDirsOf } from '../process/sandbox/sandbox-mounts.js';
import type { ToolServices } from '../tools/define.js';
import type { WorkspaceRecord } from './registry.js';
import type { WorktreeHost } from './worktree.js';

/** Why a merge or a diff was refused: a closed family the console shows as it is. */
export type LandReason = 'not_worktree' | 'not_on_base' | 'dirty' | 'conflict' | 'git';

export class LandRefused extends Error {
  constructor(
    readonly reason: LandReason,
    message: string,
  ) {
    super(message);
  }
}

export interface Merged {
  /** The main checkout's HEAD after the merge. */
  commit: string;
  fastForward: boolean;
}

/** The most diff text the console is sent for one worktree. */
export const MAX_LAND_DIFF_BYTES = 512 * 1024;
/** The identity of a merge commit when the main checkout's repository names none. */
const OPERATOR_IDENTITY = { name: 'workbench-mcp operator', email: 'operator@workbench-mcp.invalid' };
const TEMP_REF = (id: string) => `refs/workbench/merge/${id}`;

interface Run {
  host: GitHost;
  repo: GitRepo;
}

function jailOf(h: WorktreeHost, source: string, more: { read?: string[]; write?: string[] }): ToolJail {
  const c = h.config;
  return new ToolJail({
    requested: c.sandbox,
    pathVar: c.env.PATH,
    workspaceReal: source,
    dirs: h.dirs,
    privateFiles: privateFilesOf(c),
    sealed: sealedDirsOf(c),
    readAllow: c.readAllow ?? [],
    alsoRead: more.read ?? [],
    alsoWrite: more.write ?? [],
  });
}

/** The main checkout as a git host in `jail`, its repository found and confined (git/repo.ts). */
async function sourceRun(h: WorktreeHost, source: string, jail: ToolJail): Promise<Run> {
  const host: GitHost = {
    root: { real: source, lexical: source },
    config: h.config,
    dirs: h.dirs,
    signal: h.signal,
    jail,
  };
  const found = await openRepo(host, source, h.signal);
  if (found.kind !== 'repo')
    throw new LandRefused('git', `${source} is no longer a git repository: ${found.reason}`);
  return { host, repo: found.repo };
}

async function git(
  r: Run,
  args: string[],
  o: { extra?: string[]; env?: Record<string, string>; max?: number } = {},
): Promise<ArgvResult> {
  return runArgv('git', buildGitArgv([...r.repo.filterArgs, ...(o.extra ?? [])], args), {
    cwd: r.repo.cwd,
    env: { ...gitEnv(r.host, r.repo.pin), ...(o.env ?? {}) },
    timeoutMs: GIT_TIMEOUT_MS * 4,
    maxStdoutBytes: o.max ?? 1024 * 1024,
    signal: r.host.signal,
    jail: r.host.jail,
  });
}

const out = (r: ArgvResult) => r.stdout.toString('utf8').trim();
const why = (r: ArgvResult) => r.spawnError ?? (stderrSummary(r.stderr) || `exit ${r.code ?? r.signal}`);

function worktreeOf(rec: WorkspaceRecord | undefined, id: string) {
  if (!rec || rec.mode !== 'worktree' || !rec.source || !rec.branch || !rec.baseRef || !rec.objects)
    throw new LandRefused(
      'not_worktree',
      `Workspace ${id} is not an open worktree; only a worktree can be merged.`,
    );
  if (/^[0-9a-f]{40,64}$/.test(rec.baseRef))
    throw new LandRefused(
      'not_on_base',
      `Workspace ${id} started from commit ${rec.baseRef.slice(0, 12)}, not from a branch, so there is no base branch to merge into; fetch ${rec.branch} from ${rec.path} by hand.`,
    );
  return { ...rec, source: rec.source, branch: rec.branch, baseRef: rec.baseRef };
}

/** Refuses unless the main checkout has the base branch checked out and nothing uncommitted or untracked. */
async function checkSource(r: Run, source: string, baseRef: string): Promise<string> {
  const head = await git(r, ['symbolic-ref', '--quiet', 'HEAD']);
  const current = out(head);
  if (current !== `refs/heads/${baseRef}`)
    throw new LandRefused(
      'not_on_base',
      `The main checkout ${source} has ${current ? current.replace(/^refs\/heads\//, '') : 'a detached HEAD'} checked out, not ${baseRef}, the branch this worktree started from. Check out ${baseRef} there (git switch ${baseRef}), then press Merge again.`,
    );
  const status = await git(r, ['status', '--porcelain', '-z', '--untracked-files=normal']);
  if (status.code !== 0) throw new LandRefused('git', `git status failed in ${source}: ${why(status)}`);
  const dirty = status.stdout.toString('utf8').split('\0').filter(Boolean);
  if (dirty.length)
    throw new LandRefused(
      'dirty',
      `The main checkout ${source} has uncommitted changes or untracked files (${dirty
        .slice(0, 5)
        .map((l) => l.slice(3))
        .join(
          ', ',
        )}${dirty.length > 5 ? ', …' : ''}). Commit, stash or remove them, then press Merge again; nothing was changed.`,
    );
  const tip = await git(r, ['rev-parse', '--verify', 'HEAD^{commit}']);
  if (tip.code !== 0) throw new LandRefused('git', `${source} has no commit on ${baseRef}: ${why(tip)}`);
  return out(tip);
}

/**
 * Fetches the worktree's branch into a ref of the main checkout's repository, reading the clone with the
 * server's own upload-pack; only the repository's git directory is writable.
 */
async function fetchBranch(h: WorktreeHost, w: { id: string; path: string; source: string; branch: string }) {
  const probe = await sourceRun(h, w.source, jailOf(h, w.source, {}));
  const r = await sourceRun(
    h,
    w.source,
    jailOf(h, w.source, { read: [w.path], write: [probe.repo.pin.commonDir] }),
  );
  const extra = [
    '-c',
    'protocol.file.allow=always',
    '-c',
    'fetch.fsckObjects=true',
    '-c',
    'transfer.fsckObjects=true',
  ];
  const env = { GIT_ALLOW_PROTOCOL: 'file' };
  const spec = `+refs/heads/${w.branch}:${TEMP_REF(w.id)}`;
  const f = await git(
    r,
    [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--upload-pack=git-upload-pack',
      '--',
      w.path,
      spec,
    ],
    { extra, env },
  );
  if (f.code !== 0) throw new LandRefused('git', `Fetching ${w.branch} from the worktree failed: ${why(f)}`);
  return r;
}

/** Conflicts the merge would have, found without touching the main checkout (objects only). */
async function conflicts(r: Run, ref: string): Promise<string[] | undefined> {
  const m = await git(r, ['merge-tree', '--write-tree', '--name-only', '--no-messages', 'HEAD', ref]);
  if (m.code === 0) return undefined;
  if (m.code !== 1) throw new LandRefused('git', `git merge-tree failed: ${why(m)}`);
  return out(m).split('\n').slice(1).filter(Boolean);
}

async function identity(r: Run): Promise<Record<string, string>> {
  const email = await git(r, ['config', '--get', 'user.email']);
  if (email.code === 0 && out(email)) return {};
  const { name, email: mail } = OPERATOR_IDENTITY;
  return {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: mail,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: mail,
  };
}

/** The merge itself, the only run with the main checkout writable; aborted (and checked) when it fails. */
async function mergeIn(h: WorktreeHost, w: { id: string; source: string; branch: string }, before: string) {
  const r = await sourceRun(h, w.source, jailOf(h, w.source, { write: [w.source] }));
  const env = await identity(r);
  const msg = `Merge workspace ${w.id} (${w.branch})`;
  const m = await git(r, ['merge', '--no-edit', '--no-verify', '--no-stat', '-m', msg, TEMP_REF(w.id)], {
    env,
  });
  if (m.code === 0) {
    const [after, ...parents] = out(await git(r, ['rev-list', '--parents', '-n', '1', 'HEAD'])).split(' ');
    return { commit: after ?? '', fastForward: !(parents.length === 2 && parents[0] === before) };
  }
  await git(r, ['merge', '--abort']);
  await git(r, ['reset', '--quiet', '--merge', before]);
  throw new LandRefused('git', `git merge failed and was undone: ${why(m)}`);
}

async function dropRef(h: WorktreeHost, source: string, id: string): Promise<void> {
  const probe = await sourceRun(h, source, jailOf(h, source, {}));
  const r = await sourceRun(h, source, jailOf(h, source, { write: [probe.repo.pin.commonDir] }));
  await git(r, ['update-ref', '-d', TEMP_REF(id)]);
}

/**
 * Merges worktree `rec` into the base branch of its main checkout, or throws LandRefused with the reason and
 * the operator's next step, the main checkout as it was.
 */
export async function mergeWorktree(
  h: WorktreeHost,
  rec: WorkspaceRecord | undefined,
  id: string,
): Promise<Merged> {
  const w = worktreeOf(rec, id);
  const before = await checkSource(
    await sourceRun(h, w.source, jailOf(h, w.source, {})),
    w.source,
    w.baseRef,
  );
  const r = await fetchBranch(h, { id, path: w.path, source: w.source, branch: w.branch });
  try {
    const clash = await conflicts(r, TEMP_REF(id));
    if (clash)
      throw new LandRefused(
        'conflict',
        `Merging ${w.branch} into ${w.baseRef} would conflict in ${clash.slice(0, 10).join(', ') || 'some files'}; nothing was changed. Ask the agent of workspace ${id} to merge ${w.baseRef} into its branch and resolve the conflict, or Discard it.`,
      );
    return await mergeIn(h, { id, source: w.source, branch: w.branch }, before);
  } finally {
    await dropRef(h, w.source, id);
  }
}

/**
 * What the worktree holds against the commit it started from: `git diff <base>` of its work tree (commits
 * and uncommitted changes), then its untracked files, run in that workspace's own jail.
 */
export async function worktreeDiff(
  s: ToolServices,
  rec: WorkspaceRecord | undefined,
  id: string,
): Promise<{ diff: string; untracked: string[]; truncated: boolean }> {
  if (!rec || rec.mode !== 'worktree' || !rec.base)
    throw new LandRefused('not_worktree', `Workspace ${id} is not an open worktree.`);
  const host: GitHost = {
    root: s.root,
    config: s.config,
    dirs: s.dirs,
    signal: s.signal,
    jail: s.jail,
    sharedObjects: s.sharedObjects,
  };
  const found = await openRepo(host, s.root.real, s.signal);
  if (found.kind !== 'repo')
    throw new LandRefused('git', `${rec.path} is no longer a git repository: ${found.reason}`);
  const r = { host, repo: found.repo };
  const d = await git(r, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', rec.base, '--'], {
    max: MAX_LAND_DIFF_BYTES,
  });
  if (d.code !== 0 && !d.truncated) throw new LandRefused('git', `git diff failed in ${rec.path}: ${why(d)}`);
  const u = await git(r, ['ls-files', '-z', '--others', '--exclude-standard']);
  const untracked = u.code === 0 ? u.stdout.toString('utf8').split('\0').filter(Boolean).slice(0, 200) : [];
  return { diff: d.stdout.toString('utf8'), untracked, truncated: d.truncated };
}

/** What Landing needs of the desk (desk.ts). */
export interface LandingDesk {
  record(id: string): WorkspaceRecord | undefined;
  servicesFor(id: string): ToolServices;
  close(id: string, remove: boolean): Promise<unknown>;
}

/** The console's Merge, Discard and diff of worktrees; merges run one at a time. */
export class Landing {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly desk: LandingDesk,
    private readonly host: WorktreeHost,
  ) {}

  merge(id: string): Promise<Merged> {
    return this.inTurn(() => mergeWorktree(this.host, this.desk.record(id), id));
  }

  private inTurn<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  diff(id: string): Promise<{ diff: string; untracked: string[]; truncated: boolean }> {
    const rec = this.desk.record(id);
    if (!rec || rec.mode !== 'worktree')
      return Promise.reject(new LandRefused('not_worktree', `Workspace ${id} is not an open worktree.`));
    return worktreeDiff(this.desk.servicesFor(id), rec, id);
  }

  /** The operator's Discard: the worktree's commands end, its directory (and with it its branch) is removed. */
  discard(id: string): Promise<void> {
    return this.inTurn(() => this.remove(id));
  }

  private async remove(id: string): Promise<void> {
    const rec = this.desk.record(id);
    if (!rec || rec.mode !== 'worktree')
      throw new LandRefused(
        'not_worktree',
        `Workspace ${id} is not an open worktree; a checkout is never deleted from here.`,
      );
    await this.desk.close(id, true);
  }
}
