// The review points of a git workspace (docs/tools.md#review-points, docs/security-model.md#review-points): each
// point is a commit object of the whole working tree (tracked and untracked files, .gitignore and
// .git/info/exclude honoured) under refs/workbench/review/, kept in a private repository the server owns in its
// runtime directory, never in the workspace's .git (which the git jail shows read-only). The private
// repository borrows the workspace's objects (GIT_ALTERNATE_OBJECT_DIRECTORIES) and has its own index, so a
// snapshot writes only the blobs that are new; git runs in its jail as every git process does (rule A), with the
// private directory bound writable for that call alone. The user's configuration is not read: no filter driver
// can run, and nothing of the user's branches, tags or reflogs changes.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { ToolError } from '../core/tool-error.js';
import type { GitRepo } from './repo.js';
import { gitFailed, runGit, type GitHost } from './run.js';
import { parseNumstatZ, type NumstatEntry } from './parse-diff.js';

/** The namespace of the points' refs in the private repository. */
export const REVIEW_REF_PREFIX = 'refs/workbench/review/';
/** The tree of nothing, for a repository without a commit. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed';

export interface TreeChange {
  path: string;
  from?: string;
  status: ChangeStatus;
  /** null: binary. */
  added: number | null;
  removed: number | null;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'workbench-mcp',
  GIT_AUTHOR_EMAIL: 'review@workbench-mcp.invalid',
  GIT_COMMITTER_NAME: 'workbench-mcp',
  GIT_COMMITTER_EMAIL: 'review@workbench-mcp.invalid',
};

export class ReviewRepo {
  private ready = false;

  constructor(
    private readonly host: GitHost,
    private readonly repo: GitRepo,
    /** The private repository: a directory of the runtime directory (never inside the workspace). */
    readonly dir: string,
  ) {}

  /** Runs git on the private repository, the work tree being the workspace's; throws GIT_ERROR on failure. */
  async git(args: string[], what: string, opts: { maxBytes?: number; allowCode?: number } = {}) {
    this.init();
    const r = await runGit(this.host, args, {
      cwd: this.repo.top,
      pin: null,
      filterArgs: [
        ...this.repo.filterArgs,
        '-c',
        `core.excludesFile=${path.join(this.repo.pin.commonDir, 'info', 'exclude')}`,
        '-c',
        'core.autocrlf=false',
        // The private index remembers which directories had no new files (git's untracked cache).
        '-c',
        'core.untrackedCache=true',
      ],
      env: {
        GIT_DIR: this.dir,
        GIT_COMMON_DIR: this.dir,
        GIT_OBJECT_DIRECTORY: path.join(this.dir, 'objects'),
        GIT_ALTERNATE_OBJECT_DIRECTORIES: this.repo.pin.objectsDir,
        GIT_INDEX_FILE: path.join(this.dir, 'index'),
        GIT_WORK_TREE: this.repo.top,
        ...IDENTITY,
      },
      writable: this.dir,
      ...(opts.maxBytes ? { maxStdoutBytes: opts.maxBytes } : {}),
    });
    if (r.code !== 0 && r.code !== opts.allowCode) throw gitFailed(what, r);
    return r;
  }

  /** The private repository's skeleton, made by hand (git init would read the templates of the host). */
  private init(): void {
    if (this.ready) return;
    if (!existsSync(path.join(this.dir, 'HEAD'))) {
      for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags'])
        mkdirSync(path.join(this.dir, d), { recursive: true, mode: 0o700 });
      writeFileSync(path.join(this.dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
      writeFileSync(path.join(this.dir, 'HEAD'), 'ref: refs/heads/workbench-review\n');
    }
    this.ready = true;
  }

  /** The workspace's HEAD commit, or the empty tree when it has none yet. */
  async headOrEmpty(): Promise<string> {
    // The workspace's own repository (pinned as every git tool runs), not the private one.
    const r = await runGit(this.host, ['rev-parse', '-q', '--verify', 'HEAD^{commit}'], {
      cwd: this.repo.top,
      pin: this.repo.pin,
      filterArgs: this.repo.filterArgs,
    });
    const sha = r.stdout.toString('utf8').trim();
    if (r.code === 0 && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
    if (r.code === 1) return EMPTY_TREE;
    throw gitFailed('rev-parse', r);
  }

  /**
   * The tree of the working tree now (every file git would add with `git add -A`), through the private index:
   * seeded from `seed` the first time, so that only changed files are hashed later.
   */
  async snapshotTree(seed: string): Promise<string> {
    if (!existsSync(path.join(this.dir, 'index')) && seed !== EMPTY_TREE)
      await this.git(['read-tree', seed], 'read-tree');
    await this.git(['add', '-A', '--', '.'], 'add');
    const r = await this.git(['write-tree'], 'write-tree');
    return r.stdout.toString('utf8').trim();
  }

  /**
   * A commit of `tree` (parent `parent` when given), kept under the point's ref; returns its id. The commit
   * object and the ref are the server's own files in its own directory, so they are written here (a loose object
   * as git writes one, and a ref file) rather than by two more git processes.
   */
  keep(id: string, tree: string, parent: string | null, when: number): string {
    this.init();
    const secs = Math.floor(when / 1000);
    const who = `${IDENTITY.GIT_AUTHOR_NAME} <${IDENTITY.GIT_AUTHOR_EMAIL}> ${secs} +0000`;
    const body =
      `tree ${tree}\n${parent ? `parent ${parent}\n` : ''}author ${who}\ncommitter ${who}\n\n` +
      `review point ${id}\n`;
    const raw = Buffer.concat([Buffer.from(`commit ${Buffer.byteLength(body)}\0`), Buffer.from(body)]);
    const sha = createHash('sha1').update(raw).digest('hex');
    const dir = path.join(this.dir, 'objects', sha.slice(0, 2));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, sha.slice(2));
    if (!existsSync(file)) writeFileSync(file, deflateSync(raw), { mode: 0o444 });
    const ref = path.join(this.dir, REVIEW_REF_PREFIX, id);
    mkdirSync(path.dirname(ref), { recursive: true, mode: 0o700 });
    writeFileSync(ref, `${sha}\n`);
    return sha;
  }

  /** The changes from tree-ish `a` to `b`: status and line counts, renames found (-M). */
  async changes(a: string, b: string, renames = true): Promise<TreeChange[]> {
    const args = ['diff-tree', '-r', '-z', '--no-ext-diff', '--no-textconv', renames ? '-M' : '--no-renames'];
    // One process: the raw records (status and paths) of every file, then the numstat records in the same order.
    const out = (await this.git([...args, '--raw', '--numstat', a, b], 'diff-tree')).stdout.toString('utf8');
    return parseRawNumstat(out);
  }

  /** The unified diff from `a` to `b` (at most maxBytes of it, `cut` when there was more). */
  async patch(a: string, b: string, maxBytes: number): Promise<{ text: string; cut: boolean }> {
    const args = ['diff-tree', '-r', '-M', '-p', '--no-ext-diff', '--no-textconv', '--no-color', a, b];
    const r = await this.git(args, 'diff-tree', { maxBytes, allowCode: -1 });
    if (r.code !== 0 && !r.truncated) throw gitFailed('diff-tree', r);
    return { text: r.stdout.toString('utf8'), cut: r.truncated };
  }

  /** Each path's blob at tree-ish `at` with its mode, or null when it has none there. */
  async filesAt(at: string, paths: string[]): Promise<Map<string, { bytes: Buffer; mode: number } | null>> {
    const out = new Map<string, { bytes: Buffer; mode: number } | null>();
    for (const p of paths) {
      const ls = await this.git(['ls-tree', '-z', at, '--', p], 'ls-tree');
      const rec = ls.stdout.toString('utf8').split('\0')[0] ?? '';
      const m = /^(\d{6}) (blob|commit) ([0-9a-f]+)\t/.exec(rec);
      if (!m) {
        out.set(p, null);
        continue;
      }
      if (m[1] === '120000' || m[2] === 'commit')
        throw notRestorable(p, m[2] === 'commit' ? 'a submodule' : 'a symlink');
      const blob = await this.git(['cat-file', 'blob', m[3] as string], 'cat-file', { maxBytes: 256 << 20 });
      out.set(p, { bytes: blob.stdout, mode: m[1] === '100755' ? 0o755 : 0o644 });
    }
    return out;
  }
}

/**
 * `--raw --numstat -z` output: each raw record (`:mode mode sha sha STATUS\0path\0`, two paths for a rename),
 * then the numstat records of the same files in the same order (parse-diff.ts parseNumstatZ).
 */
export function parseRawNumstat(out: string): TreeChange[] {
  const parts = out.split('\0');
  const raw: string[] = [];
  let i = 0;
  while (i < parts.length && (parts[i] as string).startsWith(':')) {
    const code = (parts[i] as string).split(' ')[4] ?? '';
    const two = code.startsWith('R') || code.startsWith('C');
    raw.push(code, ...parts.slice(i + 1, i + (two ? 3 : 2)));
    i += two ? 3 : 2;
  }
  const counts = parseNumstatZ(parts.slice(i).join('\0')).entries;
  return joinChanges(raw, counts);
}

/** Raw records (status, then path or old and new path) joined with numstat's counts. */
function joinChanges(parts: string[], counts: NumstatEntry[]): TreeChange[] {
  const out: TreeChange[] = [];
  let i = 0;
  let k = 0;
  while (i < parts.length && parts[i]) {
    const code = (parts[i] as string)[0];
    const c = counts[k++];
    if (code === 'R' || code === 'C') {
      const from = parts[i + 1] as string;
      const to = parts[i + 2] as string;
      out.push({
        path: to,
        from,
        status: 'renamed',
        added: c ? c.additions : 0,
        removed: c ? c.deletions : 0,
      });
      i += 3;
      continue;
    }
    const status: ChangeStatus = code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified';
    out.push({
      path: parts[i + 1] as string,
      status,
      added: c ? c.additions : 0,
      removed: c ? c.deletions : 0,
    });
    i += 2;
  }
  return out;
}

/** A path a revert cannot write through the patch engine, which writes regular files only. */
function notRestorable(p: string, what: string): ToolError {
  return new ToolError(
    'PATCH_FAILED',
    `${p} is ${what} at the review point or now; a revert writes regular files only, so nothing was written`,
    { path: p, reason: 'not_a_regular_file' },
    { suggestion: 'Restore that path by hand (git checkout, ln -s) with exec_command, or tell the user.' },
  );
}

/** A point id that is not one of this workspace's. */
export function unknownPoint(id: string, known: readonly string[]): ToolError {
  const last = known[known.length - 1];
  return new ToolError(
    'REVIEW_POINT_UNKNOWN',
    `there is no review point ${JSON.stringify(id)} in this workspace` +
      (known.length ? ` (known: ${known.slice(-5).join(', ')})` : ' (none was made yet)'),
    { point: id, ...(last ? { latest: last } : {}) },
    {
      suggestion: known.length
        ? 'Use a point id from an earlier show_changes result, or call show_changes without since.'
        : 'Call show_changes without since: it makes the first review point.',
    },
  );
}
