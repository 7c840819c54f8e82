// git_status (docs/tools.md#git): the branch and the changed, conflicted and untracked paths of the
// repository that contains `path`, limited to that directory, from `git status --porcelain=v2 -z`. Text is
// the short format a model knows (`M  src/a.ts`); paths in results are workspace-relative. Outside a
// repository: `reason`, not an error.
import * as z from 'zod';
import { runGit, gitFailed } from '../../git/run.js';
import { parseStatusV2, shortCode, type StatusBranch, type StatusEntry } from '../../git/parse-status.js';
import { baselineChanges } from '../../git/baseline.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY } from '../define.js';
import { explicitArgs } from '../common.js';
import {
  gitPathArg,
  missingNote,
  pathScope,
  REPO_FIELDS,
  repoFields,
  repoFor,
  scopeName,
  scopeSpec,
  showPath,
  wsPath,
  type PathScope,
} from './shared.js';

export const DEFAULT_STATUS_ENTRIES = 500;
export const MAX_STATUS_ENTRIES = 10_000;

const input = z.object({
  path: gitPathArg,
  include_untracked: z.boolean().default(true),
  max_entries: z.number().int().min(1).max(MAX_STATUS_ENTRIES).default(DEFAULT_STATUS_ENTRIES),
});

/** code: git's two-letter short status, index then worktree (" M", "M ", "R ", "UU", "??"). */
const ENTRY = z.object({
  path: z.string(),
  orig_path: z.string().optional(),
  code: z.string(),
  submodule: z.boolean().optional(),
});

/** head absent: detached; oid absent: no commit yet. */
const BRANCH = z.object({
  head: z.string().optional(),
  oid: z.string().optional(),
  upstream: z.string().optional(),
  ahead: z.number().optional(),
  behind: z.number().optional(),
});

/** No entries: clean. total_entries and counts only when not every entry is listed. */
const output = z.object({
  ...REPO_FIELDS,
  branch: BRANCH.optional(),
  entries: z.array(ENTRY).optional(),
  total_entries: z.number().optional(),
  truncated: z.boolean().optional(),
  counts: z
    .object({
      staged: z.number().optional(),
      unstaged: z.number().optional(),
      untracked: z.number().optional(),
      conflicted: z.number().optional(),
    })
    .optional(),
  next_action: NEXT_ACTION.optional(),
});

interface Entry {
  path: string;
  orig_path: string | null;
  code: string;
  kind: StatusEntry['kind'];
  staged: boolean;
  unstaged: boolean;
  submodule: boolean;
}

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

type Args = z.output<typeof input>;

/** The text lines for the entries shown, or what an empty status means. */
function entryLines(entries: Entry[], args: Args, dir: PathScope, total: number): string[] {
  const lines = entries.map((e) =>
    e.orig_path !== null
      ? `${e.code} ${showPath(e.orig_path)} -> ${showPath(e.path)}`
      : `${e.code} ${showPath(e.path)}`,
  );
  if (total === 0)
    lines.push(
      (args.include_untracked
        ? 'nothing to commit, working tree clean'
        : 'no changes to tracked files (untracked files not listed)') + missingNote(dir),
    );
  return lines;
}

/** A cut status: the call that shows more (all entries, then tracked files only), if there is one. */
function nextCall(args: Args, dir: PathScope): Record<string, unknown> | null {
  const same = { path: dir.rel, include_untracked: args.include_untracked, max_entries: args.max_entries };
  if (args.max_entries < MAX_STATUS_ENTRIES)
    return explicitArgs(input, { ...same, max_entries: MAX_STATUS_ENTRIES });
  if (args.include_untracked) return explicitArgs(input, { ...same, include_untracked: false });
  return null;
}

export const gitStatusTool = defineTool({
  name: 'git_status',
  title: 'Git status',
  description: 'Show the branch and the changed, conflicted and untracked files (git status --short codes).',
  uses: ['root', 'config', 'dirs', 'signal', 'jail', 'sharedObjects', 'baseline', 'log'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const dir = pathScope(ctx, args.path);
    const found = await repoFor(ctx, dir.lookup);
    if (!found.repo) {
      const changed = baselineChanges(ctx.runtime, { dirRel: dir.rel, context: 0 }).length;
      const note = changed
        ? ` ${changed} file(s) were changed through apply_patch since start-up; git_diff ${JSON.stringify({ path: dir.rel })} shows them.`
        : '';
      return {
        structured: repoFields(ctx, found),
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
    const all = parsed.entries.map((e) => toEntry(e, (p) => wsPath(ctx, repo.top, p)));
    const entries = all.slice(0, args.max_entries);
    const truncated = all.length > entries.length || parsed.cut;
    const lines = parsed.branch ? [branchLine(parsed.branch)] : [];
    if (spec.length) lines.push(`[limited to ${scopeName(dir)}]`);
    lines.push(...entryLines(entries, args, dir, all.length));
    const next = truncated ? nextCall(args, dir) : null;
    if (truncated) {
      const total = parsed.cut ? `at least ${all.length}` : String(all.length);
      const more = next ? `; more: ${callText('git_status', next)}` : '; narrow path to see the rest';
      lines.push(`[showing ${entries.length} of ${total} entries${more}]`);
    }
    const structured: z.output<typeof output> = {
      ...lean(
        {
          ...repoFields(ctx, found),
          branch: parsed.branch,
          entries: entries.map((e) => ({
            path: e.path,
            orig_path: e.orig_path,
            code: e.code,
            submodule: e.submodule,
          })),
          ...(truncated ? { total_entries: all.length, truncated, counts: countsOf(all) } : {}),
        },
        ['path', 'code'],
      ),
      ...(next ? { next_action: { tool: 'git_status', arguments: next } } : {}),
    };
    return { structured, text: lines.join('\n') };
  },
});

function countsOf(all: Entry[]) {
  return {
    staged: all.filter((e) => e.staged).length,
    unstaged: all.filter((e) => e.unstaged).length,
    untracked: all.filter((e) => e.kind === 'untracked').length,
    conflicted: all.filter((e) => e.kind === 'unmerged').length,
  };
}
