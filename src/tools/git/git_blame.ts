// git_blame (docs/tools.md#git): who last changed each line of one file, for a line range of at most
// max_lines, from `git blame --line-porcelain` (textconv off; the working-tree copy goes through no filter,
// since every filter driver is disabled). next_action continues with the following range.
import { statSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { gitPath, validateRev } from '../../git/args.js';
import { parseBlamePorcelain, type BlameLine } from '../../git/parse-blame.js';
import { gitFailed, isUnknownRevision, runGit } from '../../git/run.js';
import { notFound } from '../../workspace/paths.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY } from '../define.js';
import { pathArg } from '../common.js';
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
  content: z.string(),
});

/** Each commit's details once, however many lines it last changed. */
const COMMIT_INFO = z.object({
  author: z.string(),
  author_email: z.string(),
  author_time: z.string(),
  summary: z.string(),
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

/** Lines and the commits they name, each commit once. */
function blameOut(lines: BlameLine[]): { lines: unknown[]; commits: Record<string, unknown> } {
  const commits: Record<string, unknown> = {};
  const out = lines.map((l) => {
    commits[l.commit] ??= lean({
      author: l.author,
      author_email: l.author_email,
      author_time: l.author_time,
      summary: l.summary,
      boundary: l.boundary,
      uncommitted: l.uncommitted,
    });
    return lean(
      {
        line: l.line,
        commit: l.commit,
        orig_line: l.orig_line === l.line ? undefined : l.orig_line,
        orig_path: l.orig_path,
        content: l.content,
      },
      ['content'],
    );
  });
  return { lines: out, commits };
}

function nearestDir(p: string, root: string): string {
  for (let d = path.dirname(p); ; d = path.dirname(d)) {
    try {
      if (statSync(d).isDirectory()) return d;
    } catch {
      // missing in the working tree (the file exists only in history): try the parent
    }
    if (d === root || d === path.dirname(d)) return root;
  }
}

export const gitBlameTool = defineTool({
  name: 'git_blame',
  title: 'Git blame',
  description: 'Show who last changed each line of a file, and in which commit (next_action continues).',
  input,
  output,
  annotations: READ_ONLY,
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
    const file = gitPath(ctx.runtime.root, args.path, 'path');
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
    const found = await repoFor(ctx, nearestDir(file.spec, ctx.runtime.root.real));
    if (!found.repo) {
      return {
        structured: { path: file.rel, ...repoFields(ctx, found) },
        text: `${file.rel} is not in a git repository (${found.reason}); there is no history to blame.`,
      };
    }
    const repo = found.repo;
    const limit = args.start_line + args.max_lines - 1;
    const end = Math.min(args.end_line ?? Infinity, limit);
    // One line past the range tells whether more follows (git clamps a range that runs past the end).
    const askEnd = args.end_line !== undefined && args.end_line <= limit ? end : end + 1;
    const argv = [
      'blame',
      '--line-porcelain',
      '--no-textconv',
      // blame.ignoreRevsFile may name any file; an empty -c value cannot reset it (the list is sorted)
      '--no-ignore-revs-file',
      `-L${args.start_line},${askEnd}`,
      ...(rev ? [rev] : []),
      '--',
      file.spec,
    ];
    const r = await runGit(ctx.runtime, argv, {
      cwd: repo.cwd,
      pin: repo.pin,
      filterArgs: repo.filterArgs,
      signal: ctx.signal,
    });
    const structured: z.output<typeof output> = { path: file.rel, ...repoFields(ctx, found) };
    if (r.code !== 0) {
      const only = /has only (\d+) lines?/.exec(r.stderr);
      if (only) {
        const total = Number(only[1]);
        if (total === 0 || args.start_line === 1) {
          return { structured, text: `${file.rel} is empty` };
        }
        const retry = {
          path: file.rel,
          ...(rev ? { rev } : {}),
          start_line: Math.max(1, total - args.max_lines + 1),
        };
        throw new ToolError(
          'INVALID_ARGUMENT',
          `start_line ${args.start_line} is past the end of ${file.rel} (${total} lines)`,
          { total_lines: total },
          {
            retry: callText('git_blame', retry),
          },
        );
      }
      if (/no such path/i.test(r.stderr)) {
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
      if (rev !== null && isUnknownRevision(r.stderr)) {
        throw new ToolError(
          'NOT_FOUND',
          `revision ${JSON.stringify(rev)} not found`,
          { rev },
          { suggestion: 'git_log lists commits.' },
        );
      }
      throw gitFailed('blame', r);
    }
    const blamedPath = path.relative(repo.top, file.spec).split(path.sep).join('/');
    const all = parseBlamePorcelain(r.stdout, blamedPath);
    const want = end - args.start_line + 1;
    const lines = all.slice(0, want);
    const hasMore = all.length > want;
    const last = lines.length ? lines[lines.length - 1]!.line : args.start_line - 1;
    Object.assign(
      structured,
      lean({ start_line: args.start_line, end_line: last, ...blameOut(lines), has_more: hasMore }),
    );
    const width = String(last).length;
    const text = lines.map((l) => {
      const who = l.uncommitted ? 'Not Committed Yet' : l.author;
      return `${l.commit.slice(0, 10)} (${who} ${l.author_time.slice(0, 10)} ${String(l.line).padStart(width)}) ${l.content}`;
    });
    if (lines.length === 0) text.push('(no lines)');
    if (hasMore) {
      const next: Record<string, unknown> = { path: file.rel, ...(rev ? { rev } : {}), start_line: last + 1 };
      if (args.end_line !== undefined) next.end_line = args.end_line;
      if (args.max_lines !== DEFAULT_BLAME_LINES) next.max_lines = args.max_lines;
      structured.next_action = { tool: 'git_blame', arguments: next };
      text.push(`[lines ${args.start_line}-${last}; more: ${callText('git_blame', next)}]`);
    }
    return { structured, text: text.join('\n') };
  },
});
