// git_status (tool-contract "Git"): the branch and the changed, conflicted and untracked paths of the repository
// that contains `path`, limited to that directory, from `git status --porcelain=v2 -z`. Text is the short
// format a model knows (`M  src/a.ts`); paths in results are workspace-relative. Outside a repository:
// is_repo false, not an error.
import { z } from 'zod';
import { runGit, gitFailed } from '../../git/run.js';
import { parseStatusV2, shortCode, type StatusBranch, type StatusEntry } from '../../git/parse-status.js';
import { baselineChanges } from '../../git/baseline.js';
import { NEXT_ACTION } from '../schema.js';
import { callText } from '../result.js';
import { defineTool, READ_ONLY } from '../define.js';
import {
  gitPathArg,
  missingNote,
  pathScope,
  repoFor,
  repoRootRel,
  scopeName,
  scopeSpec,
  showPath,
  wsPath,
} from './shared.js';

export const DEFAULT_STATUS_ENTRIES = 500;
export const MAX_STATUS_ENTRIES = 10_000;

const input = z.object({
  path: gitPathArg,
  include_untracked: z
    .boolean()
    .default(true)
    .describe('List untracked files (a new directory is listed once, as "dir/", as git does).'),
  max_entries: z
    .number()
    .int()
    .min(1)
    .max(MAX_STATUS_ENTRIES)
    .default(DEFAULT_STATUS_ENTRIES)
    .describe(`Most entries to return (≤ ${MAX_STATUS_ENTRIES}).`),
});

const ENTRY = z.object({
  path: z.string().describe('Workspace-relative; an untracked directory ends with "/".'),
  orig_path: z.string().nullable().describe('Source of a rename or copy.'),
  code: z.string().describe('Two-letter short status: index then worktree (" M", "M ", "R ", "UU", "??").'),
  kind: z.enum(['changed', 'renamed', 'copied', 'unmerged', 'untracked', 'ignored']),
  staged: z.boolean(),
  unstaged: z.boolean(),
  submodule: z.boolean(),
});

const BRANCH = z.object({
  head: z.string().nullable().describe('Branch name; null when HEAD is detached.'),
  oid: z.string().nullable().describe('Commit id of HEAD; null before the first commit.'),
  upstream: z.string().nullable(),
  ahead: z.number().nullable(),
  behind: z.number().nullable(),
});

const output = z.object({
  is_repo: z.boolean(),
  path: z.string(),
  repo_root: z.string().nullable().describe('Workspace-relative top of the work tree.'),
  reason: z.string().optional(),
  branch: BRANCH.nullable(),
  entries: z.array(ENTRY),
  total_entries: z.number(),
  truncated: z.boolean(),
  counts: z.object({
    staged: z.number(),
    unstaged: z.number(),
    untracked: z.number(),
    conflicted: z.number(),
  }),
  clean: z.boolean(),
  next_action: NEXT_ACTION.optional(),
});

type Entry = z.infer<typeof ENTRY>;

function toEntry(e: StatusEntry, conv: (p: string) => string): Entry {
  const changedLetter = (c: string) => c !== '.' && c !== '?' && c !== '!';
  const unmerged = e.kind === 'unmerged';
  return {
    path: conv(e.path),
    orig_path: e.origPath === undefined ? null : conv(e.origPath),
    code: e.kind === 'untracked' ? '??' : e.kind === 'ignored' ? '!!' : shortCode(e),
    kind: e.kind,
    staged: !unmerged && changedLetter(e.x),
    unstaged: !unmerged && changedLetter(e.y),
    submodule: e.submodule,
  };
}

function branchLine(b: StatusBranch): string {
  if (b.oid === null) return `## No commits yet on ${b.head ?? 'HEAD'}`;
  if (b.head === null) return `## HEAD (detached at ${b.oid.slice(0, 12)})`;
  let s = `## ${b.head}`;
  if (b.upstream) s += `...${b.upstream}`;
  const ab: string[] = [];
  if (b.ahead) ab.push(`ahead ${b.ahead}`);
  if (b.behind) ab.push(`behind ${b.behind}`);
  if (ab.length) s += ` [${ab.join(', ')}]`;
  return s;
}

export const gitStatusTool = defineTool({
  name: 'git_status',
  title: 'Git status',
  description:
    'Show the branch and the staged, unstaged, conflicted and untracked files of the git repository that contains ' +
    'path (a workspace directory or file, default "."), limited to it. Text uses the short format ("M  src/a.ts" ' +
    'staged, " M" unstaged, "??" untracked, "?? dir/" an untracked directory, "UU" conflicted). Read-only: git runs with hooks, fsmonitor, filters ' +
    'and external programs disabled. Outside a repository the result says is_repo: false.',
  input,
  output,
  annotations: READ_ONLY,
  async handler(args, ctx) {
    const dir = pathScope(ctx, args.path);
    const found = await repoFor(ctx, dir.lookup);
    if (!found.repo) {
      const changed = baselineChanges(ctx.runtime, { dirRel: dir.rel, context: 0 }).length;
      const note = changed
        ? ` ${changed} file(s) were changed through apply_patch since start-up; git_diff ${JSON.stringify({ path: dir.rel })} shows them.`
        : '';
      return {
        structured: {
          is_repo: false,
          path: dir.rel,
          repo_root: null,
          reason: found.reason,
          branch: null,
          entries: [],
          total_entries: 0,
          truncated: false,
          counts: { staged: 0, unstaged: 0, untracked: 0, conflicted: 0 },
          clean: true,
        },
        text: `${dir.rel} is not in a git repository (${found.reason}).${note}`,
      };
    }
    const repo = found.repo;
    const argv = ['status', '--porcelain=v2', '-z', '--branch', '--renames', '--ignore-submodules=dirty'];
    argv.push(args.include_untracked ? '--untracked-files=normal' : '--untracked-files=no');
    const spec = scopeSpec(repo, dir);
    if (spec.length) argv.push('--', ...spec);
    const r = await runGit(ctx.runtime, argv, {
      cwd: repo.cwd,
      pin: repo.pin,
      filterArgs: repo.filterArgs,
      signal: ctx.signal,
    });
    if (r.code !== 0 && !r.truncated) throw gitFailed('status', r);
    const parsed = parseStatusV2(r.stdout, !r.truncated);
    const conv = (p: string) => wsPath(ctx, repo.top, p);
    const all = parsed.entries.map((e) => toEntry(e, conv));
    const entries = all.slice(0, args.max_entries);
    const truncated = all.length > entries.length || parsed.cut;
    const counts = {
      staged: all.filter((e) => e.staged).length,
      unstaged: all.filter((e) => e.unstaged).length,
      untracked: all.filter((e) => e.kind === 'untracked').length,
      conflicted: all.filter((e) => e.kind === 'unmerged').length,
    };
    const structured: Record<string, unknown> = {
      is_repo: true,
      path: dir.rel,
      repo_root: repoRootRel(ctx, repo),
      branch: parsed.branch,
      entries,
      total_entries: all.length,
      truncated,
      counts,
      clean: all.length === 0,
    };
    const lines: string[] = [];
    if (parsed.branch) lines.push(branchLine(parsed.branch));
    if (spec.length) lines.push(`[limited to ${scopeName(dir)}]`);
    for (const e of entries) {
      lines.push(
        e.orig_path !== null
          ? `${e.code} ${showPath(e.orig_path)} -> ${showPath(e.path)}`
          : `${e.code} ${showPath(e.path)}`,
      );
    }
    if (all.length === 0)
      lines.push(
        (args.include_untracked
          ? 'nothing to commit, working tree clean'
          : 'no changes to tracked files (untracked files not listed)') + missingNote(dir),
      );
    if (truncated) {
      let next: Record<string, unknown> | null = null;
      if (args.max_entries < MAX_STATUS_ENTRIES)
        next = { path: dir.rel, include_untracked: args.include_untracked, max_entries: MAX_STATUS_ENTRIES };
      else if (args.include_untracked)
        next = { path: dir.rel, include_untracked: false, max_entries: args.max_entries };
      const total = parsed.cut ? `at least ${all.length}` : String(all.length);
      let note = `[showing ${entries.length} of ${total} entries`;
      if (next) {
        structured.next_action = { tool: 'git_status', arguments: next };
        note += `; more: ${callText('git_status', next)}`;
      } else note += '; narrow path to see the rest';
      lines.push(note + ']');
    }
    return { structured, text: lines.join('\n') };
  },
});
