// git_blame (docs/tools.md#git): who last changed each line of one file, for a line range of at most
// max_lines, from `git blame --line-porcelain` (textconv off; the working-tree copy goes through no filter,
// since every filter driver is disabled). next_action continues with the following range.
import { statSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { gitPath, nearestDir, validateRev, type GitPath } from '../../git/args.js';
import { classifyGitFailure } from '../../git/failure.js';
import { parseBlamePorcelain, type BlameLine } from '../../git/parse-blame.js';
import { gitFailed, runGit } from '../../git/run.js';
import type { ArgvResult } from '../../process/jail/argv.js';
import { notFound } from '../../workspace/paths.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY } from '../define.js';
import { pathArg } from '../common.js';
import type { ToolContext } from '../define.js';
import { repoFields, repoFor, REPO_FIELDS } from './shared.js';

export const MAX_BLAME_LINES = 2000;
export const DEFAULT_BLAME_LINES = 200;

const input = z.object({
  path: pathArg(),
  rev: z.string().optional().describe('Default: the working tree.'),
  start_line: z.number().int().min(1).default(1),
  end_line: z.number().int().min(1).optional().describe('Inclusive.'),
  max_lines: z.number().int().min(1).max(MAX_BLAME_LINES).default(DEFAULT_BLAME_LINES),
});

/** orig_line / orig_path: where the line was in its commit, when not the same line of the same path. */
const LINE = z.object({
  line: z.number(),
  commit: z.string(),
  orig_line: z.number().optional(),
  orig_path: z.string().optional(),
  content: z.string().optional(),
});

/** Each commit's details once, however many lines it last changed (an empty email or summary is left out). */
const COMMIT_INFO = z.object({
  author: z.string(),
  author_email: z.string().optional(),
  author_time: z.string(),
  summary: z.string().optional(),
  boundary: z.boolean().optional(),
  uncommitted: z.boolean().optional(),
});

/** end_line: the last line returned (start_line - 1 when none). */
const output = z.object({
  path: z.string(),
  ...REPO_FIELDS,
  start_line: z.number().optional(),
  end_line: z.number().optional(),
  lines: z.array(LINE).optional(),
  commits: z.record(z.string(), COMMIT_INFO).optional(),
  has_more: z.boolean().optional(),
  next_action: NEXT_ACTION.optional(),
});

type Args = z.output<typeof input>;

/**
 * Fields that are never empty (git refuses an empty author name; an uncommitted line's author is "Not Committed
 * Yet"), named so that their type says so. An empty line's `content` is left out like every empty field.
 */
const KEEP = ['line', 'commit', 'author', 'author_time'] as const;

/** Lines and the commits they name, each commit once (lean() leaves out what they leave empty). */
function blameOut(lines: BlameLine[]) {
  const commits: Record<
    string,
    Omit<BlameLine, 'line' | 'commit' | 'orig_line' | 'orig_path' | 'content'>
  > = {};
  const out = lines.map((l) => {
    commits[l.commit] ??= {
      author: l.author,
      author_email: l.author_email,
      author_time: l.author_time,
      summary: l.summary,
      boundary: l.boundary,
      uncommitted: l.uncommitted,
    };
    return {
      line: l.line,
      commit: l.commit,
      orig_line: l.orig_line === l.line ? undefined : l.orig_line,
      orig_path: l.orig_path,
      content: l.content,
    };
  });
  return { lines: out, commits };
}

/** The `path` argument: a file of the working tree or, with a revision, of history; a directory is refused. */
function blameTarget(ctx: ToolContext<'root'>, input: string, rev: string | null): GitPath {
  const file = gitPath(ctx.runtime.root, input, 'path');
  let isDir = false;
  try {
    isDir = file.exists && statSync(file.spec).isDirectory();
  } catch {
    isDir = false;
  }
  if (isDir) {
    throw new ToolError(
      'IS_DIRECTORY',
      `${file.rel} is a directory; git_blame takes a file`,
      { path: file.rel },
      {
        suggestion: 'Pass a file path; git_log {"path": "DIR"} lists the commits that touched a directory.',
      },
    );
  }
  if (!file.exists && rev === null) throw notFound(file.rel, 'file');
  return file;
}

/** What a failed blame means: `empty` for an empty file (an answer); every other failure throws. */
function blameFailure(r: ArgvResult, file: GitPath, rev: string | null, args: Args): 'empty' {
  const failure = classifyGitFailure(r);
  if (failure.kind === 'past_end') {
    const total = failure.totalLines;
    if (total === 0 || args.start_line === 1) return 'empty';
    const retry = {
      path: file.rel,
      ...(rev ? { rev } : {}),
      start_line: Math.max(1, total - args.max_lines + 1),
    };
    throw new ToolError(
      'INVALID_ARGUMENT',
      `start_line ${args.start_line} is past the end of ${file.rel} (${total} lines)`,
      { total_lines: total },
      { retry: callText('git_blame', retry) },
    );
  }
  if (failure.kind === 'no_such_path') {
    throw new ToolError(
      'NOT_FOUND',
      `${file.rel} does not exist in ${rev ?? 'HEAD'}`,
      { path: file.rel, rev },
      {
        suggestion:
          'git_log {"path": "DIR"} shows the commits that touched its directory; the file may have been renamed.',
      },
    );
  }
  if (rev !== null && failure.kind === 'unknown_revision') {
    throw new ToolError(
      'NOT_FOUND',
      `revision ${JSON.stringify(rev)} not found`,
      { rev },
      { suggestion: 'git_log lists commits.' },
    );
  }
  throw gitFailed('blame', r);
}

/** The blame's argv: one line past the range tells whether more follows (git clamps a range past the end). */
function blameArgv(args: Args, rev: string | null, spec: string, end: number, limit: number): string[] {
  const askEnd = args.end_line !== undefined && args.end_line <= limit ? end : end + 1;
  return [
    'blame',
    '--line-porcelain',
    '--no-textconv',
    // blame.ignoreRevsFile may name any file; an empty -c value cannot reset it (the list is sorted)
    '--no-ignore-revs-file',
    `-L${args.start_line},${askEnd}`,
    ...(rev ? [rev] : []),
    '--',
    spec,
  ];
}

/** The model's text: one line per blamed line, as `git blame` prints them. */
function blameText(lines: BlameLine[], last: number): string[] {
  const width = String(last).length;
  const text = lines.map((l) => {
    const who = l.uncommitted ? 'Not Committed Yet' : l.author;
    return `${l.commit.slice(0, 10)} (${who} ${l.author_time.slice(0, 10)} ${String(l.line).padStart(width)}) ${l.content}`;
  });
  if (lines.length === 0) text.push('(no lines)');
  return text;
}

export const gitBlameTool = defineTool({
  name: 'git_blame',
  title: 'Git blame',
  description: 'Show who last changed each line of a file, and in which commit (next_action continues).',
  uses: ['root', 'config', 'dirs', 'signal', 'jail', 'sharedObjects'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const rev = args.rev === undefined ? null : validateRev(args.rev, 'rev', 'git_blame');
    if (args.end_line !== undefined && args.end_line < args.start_line) {
      throw new ToolError(
        'INVALID_ARGUMENT',
        `end_line (${args.end_line}) is before start_line (${args.start_line})`,
        {},
        {
          suggestion: 'Pass end_line ≥ start_line, or leave end_line out.',
        },
      );
    }
    const file = blameTarget(ctx, args.path, rev);
    const found = await repoFor(ctx, nearestDir(path.dirname(file.spec), ctx.runtime.root.real));
    const base = { path: file.rel, ...repoFields(ctx, found) };
    if (!found.repo) {
      return {
        structured: base,
        text: `${file.rel} is not in a git repository (${found.reason}); there is no history to blame.`,
      };
    }
    const repo = found.repo;
    const limit = args.start_line + args.max_lines - 1;
    const end = Math.min(args.end_line ?? Infinity, limit);
    const r = await runGit(ctx.runtime, blameArgv(args, rev, file.spec, end, limit), {
      cwd: repo.cwd,
      pin: repo.pin,
      filterArgs: repo.filterArgs,
      signal: ctx.signal,
    });
    if (r.code !== 0 && blameFailure(r, file, rev, args) === 'empty')
      return { structured: base, text: `${file.rel} is empty` };
    const blamedPath = path.relative(repo.top, file.spec).split(path.sep).join('/');
    const all = parseBlamePorcelain(r.stdout, blamedPath);
    const want = end - args.start_line + 1;
    const lines = all.slice(0, want);
    const hasMore = all.length > want;
    const last = lines.length ? lines[lines.length - 1]!.line : args.start_line - 1;
    const text = blameText(lines, last);
    let next: Record<string, unknown> | undefined;
    if (hasMore) {
      next = { path: file.rel, ...(rev ? { rev } : {}), start_line: last + 1 };
      if (args.end_line !== undefined) next.end_line = args.end_line;
      if (args.max_lines !== DEFAULT_BLAME_LINES) next.max_lines = args.max_lines;
      text.push(`[lines ${args.start_line}-${last}; more: ${callText('git_blame', next)}]`);
    }
    const structured: z.output<typeof output> = {
      ...base,
      ...lean({ start_line: args.start_line, end_line: last, ...blameOut(lines), has_more: hasMore }, KEEP),
      ...(next ? { next_action: { tool: 'git_blame', arguments: next } } : {}),
    };
    return { structured, text: text.join('\n') };
  },
});
