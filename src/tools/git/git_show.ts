// git_show (docs/tools.md#git): one commit (metadata, message, changed files with counts and, unless
// include_diff is false, the diff against its first parent, cut to max_bytes by whole files with next_action
// for the rest), or the contents of a blob or tree named like "HEAD~2:src/a.ts". The repository is the one
// that contains the first of `paths`, else the workspace root. External diff and textconv are off.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { gitPath, nearestDir, validateRev, type GitPath } from '../../git/args.js';
import { classifyGitFailure, isMissingRevision } from '../../git/failure.js';
import { parseNumstatZ } from '../../git/parse-diff.js';
import { LOG_FORMAT, parseLog, type LogCommit } from '../../git/parse-log.js';
import { gitFailed, runGit } from '../../git/run.js';
import type { GitRepo } from '../../git/repo.js';
import { looksBinary } from '../../workspace/text.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';
import {
  assembleDiff,
  COMMIT,
  COMMIT_KEEP,
  DEFAULT_DIFF_MAX_BYTES,
  DIFF_FILE,
  commitOut,
  diffFilesOut,
  fileLine,
  maxBytesArg,
  numstatFiles,
  pathsArg,
  REPO_FIELDS,
  repoFields,
  repoFor,
  wsPath,
  type AssembledDiff,
  type DiffFile,
  type GitServices,
} from './shared.js';

const input = z.object({
  rev: z.string().default('HEAD'),
  paths: pathsArg,
  include_diff: z.boolean().default(true),
  max_bytes: maxBytesArg,
});

/** content: a blob's or tree's text (type blob/tree). */
const output = z.object({
  ...REPO_FIELDS,
  type: z.enum(['commit', 'blob', 'tree']).optional(),
  commit: COMMIT.optional(),
  files: z.array(DIFF_FILE).optional(),
  diff: z.string().optional(),
  content: z.string().optional(),
  binary: z.boolean().optional(),
  truncated: z.boolean().optional(),
  next_action: NEXT_ACTION.optional(),
});

type Args = z.output<typeof input>;
type GitContext = ToolContext<GitServices>;

/** Where to look for the repository: the first path's directory (or nearest existing parent), else the root. */
function lookupDir(ctx: ToolContext<'root'>, first: GitPath | undefined): string {
  const root = ctx.runtime.root.real;
  return first ? nearestDir(first.spec, root) : root;
}

function notFoundRev(rev: string): ToolError {
  return new ToolError(
    'NOT_FOUND',
    `revision ${JSON.stringify(rev)} not found${rev === 'HEAD' ? ' (no commits yet?)' : ''}`,
    { rev },
    {
      suggestion:
        'git_log {"ref": "HEAD"} lists commits; a file at a commit is named like "HEAD~1:src/a.ts".',
    },
  );
}

async function objectType(ctx: GitContext, repo: GitRepo, rev: string): Promise<string> {
  const r = await runGit(ctx.runtime, ['cat-file', '-t', '--end-of-options', rev], {
    cwd: repo.cwd,
    pin: repo.pin,
    filterArgs: repo.filterArgs,
    maxStdoutBytes: 64,
    signal: ctx.signal,
  });
  if (r.code !== 0)
    throw isMissingRevision(classifyGitFailure(r)) ? notFoundRev(rev) : gitFailed('cat-file', r);
  return r.stdout.toString('utf8').trim();
}

function header(c: LogCommit): string {
  const lines = [`commit ${c.sha}${c.refs.length ? ` (${c.refs.join(', ')})` : ''}`];
  if (c.parents.length > 1)
    lines.push(`Merge: ${c.parents.map((p) => p.slice(0, 10)).join(' ')} (diff against the first parent)`);
  lines.push(`Author: ${c.author.name} <${c.author.email}>`, `Date:   ${c.author.date}`);
  if (c.committer.name !== c.author.name || c.committer.email !== c.author.email)
    lines.push(`Commit: ${c.committer.name} <${c.committer.email}>`);
  lines.push('', `    ${c.subject}`);
  if (c.body) lines.push('', ...c.body.split('\n').map((l) => (l ? `    ${l}` : '')));
  if (c.body_truncated) lines.push('    [message cut]');
  return lines.join('\n');
}

function nextCall(args: Args, rev: string, d: AssembledDiff): Record<string, unknown> | null {
  const rest = d.files.filter((f) => f.shown === 'omitted');
  if (rest.length === 0) {
    const partial = d.files.find((f) => f.shown === 'partial');
    if (!partial || args.max_bytes >= 4 * 1024 * 1024) return null;
    return { rev, paths: [partial.path], max_bytes: 4 * 1024 * 1024 };
  }
  const paths = [
    ...new Set(rest.flatMap((f) => (f.old_path && f.old_path !== f.path ? [f.old_path, f.path] : [f.path]))),
  ].slice(0, 1000);
  const next: Record<string, unknown> = { rev, paths };
  if (args.max_bytes !== DEFAULT_DIFF_MAX_BYTES) next.max_bytes = args.max_bytes;
  return next;
}

async function showCommit(ctx: GitContext, repo: GitRepo, args: Args, rev: string, specs: string[]) {
  const obj = `${rev}^{commit}`;
  const base = [
    'show',
    '--no-color',
    '--no-show-signature',
    '--no-ext-diff',
    '--no-textconv',
    '--diff-merges=first-parent',
    '-M',
  ];
  const tail = ['--end-of-options', obj, '--', ...specs];
  const opts = { cwd: repo.cwd, pin: repo.pin, filterArgs: repo.filterArgs, signal: ctx.signal };
  const [meta, patch] = await Promise.all([
    runGit(ctx.runtime, [...base, '-z', `--format=${LOG_FORMAT}`, '--numstat', ...tail], opts),
    args.include_diff
      ? runGit(ctx.runtime, [...base, '--format=', '--patch', ...tail], {
          ...opts,
          maxStdoutBytes: args.max_bytes + 1,
        })
      : null,
  ]);
  if (meta.code !== 0)
    throw classifyGitFailure(meta).kind === 'unknown_revision' ? notFoundRev(rev) : gitFailed('show', meta);
  if (patch && patch.code !== 0 && !patch.truncated) throw gitFailed('show', patch);
  let parsed = parseLog(meta.stdout, 1);
  // A commit that does not touch the given paths prints nothing under a pathspec: its header alone, no files.
  if (!parsed.commits[0] && specs.length > 0 && meta.stdout.length === 0) {
    const bare = await runGit(
      ctx.runtime,
      ['show', '-s', '-z', `--format=${LOG_FORMAT}`, '--end-of-options', obj],
      opts,
    );
    if (bare.code !== 0) throw gitFailed('show', bare);
    parsed = { ...parseLog(bare.stdout, 1), rest: 0 };
  }
  const commit = parsed.commits[0];
  if (!commit) throw gitFailed('show', { ...meta, stderr: 'unexpected output' });
  let rest = parsed.rest;
  const out = meta.stdout.toString('utf8');
  if (out[rest] === '\n') rest++;
  const toWs = (p: string) => wsPath(ctx, repo.top, p);
  const files = numstatFiles(parseNumstatZ(out, rest).entries, 'commit', toWs);
  const d = assembleDiff(
    [
      {
        section: 'commit',
        heading: '',
        files,
        patch: patch ? patch.stdout.toString('utf8') : null,
        patchCut: patch?.truncated ?? false,
        toWs,
      },
    ],
    args.max_bytes,
  );
  return { commit, d };
}

type Output = z.output<typeof output>;

/** A blob's or a tree's contents (a binary blob's are not shown), cut at max_bytes. */
async function showObject(ctx: GitContext, repo: GitRepo, args: Args, rev: string, type: 'blob' | 'tree') {
  const r = await runGit(ctx.runtime, ['show', '--no-color', '--no-textconv', '--end-of-options', rev], {
    cwd: repo.cwd,
    pin: repo.pin,
    filterArgs: repo.filterArgs,
    maxStdoutBytes: args.max_bytes + 1,
    signal: ctx.signal,
  });
  if (r.code !== 0 && !r.truncated) throw gitFailed('show', r);
  const binary = looksBinary(r.stdout);
  let content = binary ? '' : r.stdout.subarray(0, args.max_bytes).toString('utf8');
  if (!binary && r.truncated) content = content.replace(/\uFFFD$/, '');
  let text = binary ? `${rev} is a binary blob; its contents are not shown.` : content;
  if (r.truncated)
    text += `${text.endsWith('\n') ? '' : '\n'}[cut at max_bytes=${args.max_bytes}; read_file shows the working-tree copy in ranges]`;
  return { fields: lean({ type, content, binary, truncated: r.truncated }), text };
}

/** The model's text for a commit: its header, one line per file, the diff and how to continue it. */
function commitText(
  args: Args,
  commit: LogCommit,
  d: AssembledDiff,
  listed: boolean,
  next: Record<string, unknown> | null,
): string {
  const parts = [header(commit), ''];
  const mark = (f: DiffFile) =>
    f.shown === 'omitted' && args.include_diff ? '  [not shown]' : f.shown === 'partial' ? '  [cut]' : '';
  if (d.files.length) parts.push(...d.files.map((f) => fileLine(f) + mark(f)), '');
  else parts.push(listed ? '(no changes to the given paths)' : '(no file changes)', '');
  let text = parts.join('\n') + (args.include_diff ? d.text : '');
  if (d.truncated && args.include_diff) {
    let note = `[diff cut at max_bytes=${args.max_bytes}`;
    if (next) note += `; more: ${callText('git_show', next)}`;
    text += `${text.endsWith('\n') ? '' : '\n'}${note}]`;
  }
  return text;
}

export const gitShowTool = defineTool({
  name: 'git_show',
  title: 'Git show',
  description:
    'Show a commit (message, files, diff against its first parent cut to max_bytes; next_action continues), ' +
    'or a blob or tree such as "HEAD~2:src/a.ts".',
  uses: ['root', 'config', 'dirs', 'signal', 'jail', 'sharedObjects'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const rev = validateRev(args.rev, 'rev', 'git_show');
    const only = args.paths?.map((p, i) => gitPath(ctx.runtime.root, p, `paths[${i}]`));
    const found = await repoFor(ctx, lookupDir(ctx, only?.[0]));
    if (!found.repo) {
      return {
        structured: repoFields(ctx, found),
        text: `The workspace is not in a git repository (${found.reason}); there is no history to show.`,
      };
    }
    const repo = found.repo;
    const type = await objectType(ctx, repo, rev);
    if (type === 'blob' || type === 'tree') {
      const o = await showObject(ctx, repo, args, rev, type);
      return { structured: { ...repoFields(ctx, found), ...o.fields }, text: o.text };
    }
    if (type !== 'commit' && type !== 'tag') throw notFoundRev(rev);
    const { commit, d } = await showCommit(ctx, repo, args, rev, only?.map((p) => p.spec) ?? []);
    // pinned to the commit's id: HEAD may move between pages
    const next = d.truncated && args.include_diff ? nextCall(args, commit.sha, d) : null;
    const structured: Output = {
      ...repoFields(ctx, found),
      ...lean(
        {
          type: 'commit' as const,
          commit: commitOut(commit),
          files: diffFilesOut(d.files, false),
          diff: args.include_diff ? d.text : undefined,
          truncated: d.truncated,
        },
        [...COMMIT_KEEP, 'path'],
      ),
      ...(next ? { next_action: { tool: 'git_show', arguments: next } } : {}),
    };
    return { structured, text: commitText(args, commit, d, only !== undefined, next) };
  },
});
