// search_text: ripgrep when available, the JS engine otherwise, with the same results (workspace/search).
// One entry per matching line, sorted by path and line; previews cut at max_preview_bytes. A result is one page
// of at most max_results matches and PAGE_BYTES of JSON (core/page.ts); `after` ("path:line" of the last match
// shown, from next_action) continues with the matches after it.
import { closeSync } from 'node:fs';
import * as z from 'zod';
import { fileKind, openRegularForTool } from '../../workspace/confined-fs.js';
import { compileGlobs } from '../../workspace/glob.js';
import type { SearchCursor, SearchOutcome, SearchRequest } from '../../workspace/search/types.js';
import { ToolError } from '../../core/tool-error.js';
import { NEXT_ACTION } from '../schema.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';
import { callText, lean } from '../result.js';
import {
  explicitArgs,
  globList,
  includeHiddenArg,
  includeIgnoredArg,
  pathArg,
  resolveExisting,
  type Existing,
} from '../common.js';

export const MAX_RESULTS_LIMIT = 10_000;
const MAX_QUERY_BYTES = 65_536;

const input = z.object({
  query: z.string().min(1),
  path: pathArg().default('.'),
  regex: z.boolean().default(false),
  case_sensitive: z.boolean().optional().describe('Default: smart case.'),
  include_globs: globList(),
  glob: z.string().optional(),
  exclude_globs: globList(),
  context_lines: z.number().int().min(0).max(5).default(0),
  max_results: z.number().int().min(1).max(MAX_RESULTS_LIMIT).default(1000),
  max_preview_bytes: z.number().int().min(16).max(4096).default(512),
  include_hidden: includeHiddenArg,
  include_ignored: includeIgnoredArg,
  after: z.string().optional(),
});

const matchShape = z.object({
  path: z.string(),
  line: z.number(),
  column: z.number(),
  preview: z.string(),
  before: z.array(z.string()).optional(),
  after: z.array(z.string()).optional(),
});

/** total_matches only when not all matches are listed; engine only when it is not ripgrep. */
const output = z.object({
  matches: z.array(matchShape).optional(),
  total_matches: z.number().optional(),
  total_is_lower_bound: z.boolean().optional(),
  truncated: z.boolean().optional(),
  engine: z.literal('js').optional(),
  next_action: NEXT_ACTION.optional(),
});

/** `after` is "path:line" (the path may itself contain colons). */
function parseAfter(after: string | undefined): SearchCursor | undefined {
  if (after === undefined) return undefined;
  const m = /^(.+):(\d+)$/s.exec(after);
  if (!m)
    throw new ToolError(
      'INVALID_ARGUMENT',
      'after must be "path:line" of a match, as next_action gives it',
      { argument: 'after' },
      { suggestion: 'Send next_action back as it came, or leave after out to start from the first match.' },
    );
  return { path: m[1] as string, line: Number(m[2]) };
}

type Args = z.output<typeof input>;

/** Text files hold no NUL (files with one are binary and skipped), and no argv can carry one to ripgrep; nor
 *  one argument over 128 KiB (E2BIG): a query that long is refused, never an internal error. */
function checkQuery(query: string): void {
  if (query.includes('\0'))
    throw new ToolError(
      'INVALID_ARGUMENT',
      'query contains a NUL character; searched files never do (files with NUL bytes are binary and skipped)',
      { argument: 'query' },
      { suggestion: 'Remove the NUL character from query.' },
    );
  if (query.length > MAX_QUERY_BYTES / 4 && Buffer.byteLength(query) > MAX_QUERY_BYTES)
    throw new ToolError(
      'INVALID_ARGUMENT',
      `query is longer than ${MAX_QUERY_BYTES} bytes`,
      { argument: 'query', max_bytes: MAX_QUERY_BYTES },
      { suggestion: 'Search for a shorter, distinctive part of the text.' },
    );
}

/** The file or directory searched. A single file is opened (and verified) first, so an unreadable one is an
 *  error, not "no matches". */
function searchBase(ctx: ToolContext<'root'>, at: string): Existing {
  const base = resolveExisting(ctx, at);
  if (!base.stat.isDirectory() && !base.stat.isFile()) {
    const kind = fileKind(base.stat);
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${base.rel} is a ${kind}, neither a file nor a directory; search_text searches files and directories`,
      { path: base.rel, file_type: kind },
    );
  }
  if (base.stat.isFile()) closeSync(openRegularForTool(ctx.runtime.root.real, base.real, base.rel).fd);
  return base;
}

function searchRequest(args: Args, base: Existing): SearchRequest {
  const includeGlobs = [...(args.include_globs ?? []), ...(args.glob ? [args.glob] : [])];
  const excludeGlobs = args.exclude_globs ?? [];
  return {
    query: args.query,
    regex: args.regex,
    caseSensitive: args.case_sensitive,
    baseAbs: base.abs,
    baseReal: base.real,
    baseRel: base.rel,
    baseIsFile: base.stat.isFile(),
    includeGlobs,
    excludeGlobs,
    include: compileGlobs(includeGlobs),
    exclude: compileGlobs(excludeGlobs),
    contextLines: args.context_lines,
    maxResults: args.max_results,
    maxPreviewBytes: args.max_preview_bytes,
    includeHidden: args.include_hidden,
    includeIgnored: args.include_ignored,
    after: parseAfter(args.after),
  };
}

/** The matches as grep shows them: `path:line: text`, context lines `path-line- text`, `--` between groups. */
function matchLines(matches: SearchOutcome['matches'], contextLines: number): string[] {
  const lines: string[] = [];
  for (const m of matches) {
    m.before.forEach((t, i) => lines.push(`${m.path}-${m.line - m.before.length + i}- ${t}`));
    lines.push(`${m.path}:${m.line}: ${m.preview}`);
    m.after.forEach((t, i) => lines.push(`${m.path}-${m.line + 1 + i}- ${t}`));
    if (contextLines > 0) lines.push('--');
  }
  return lines;
}

export const searchTextTool = defineTool({
  name: 'search_text',
  title: 'Search text',
  description:
    'Search file contents (ripgrep), one entry per matching line. Hidden, binary and git-ignored files are ' +
    'skipped unless asked.',
  uses: ['root', 'search'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    checkQuery(args.query);
    const base = searchBase(ctx, args.path);
    const r = await ctx.runtime.search.search(ctx.runtime.root, searchRequest(args, base));
    const lines = matchLines(r.matches, args.context_lines);
    if (r.matches.length === 0)
      lines.push(
        `No ${args.after ? 'more ' : ''}matches for ${JSON.stringify(args.query)} in ${base.rel}${args.include_ignored ? '' : ' (git-ignored and hidden files were skipped)'}.`,
      );
    if (r.note) lines.push(`[${r.note}]`);
    let more: Record<string, unknown> | undefined;
    if (r.truncated) {
      const total = `${r.totalIsLowerBound ? 'more than ' : ''}${r.totalMatches}`;
      let hint = 'narrow it with path or include_globs';
      if (r.next) {
        more = { ...explicitArgs(input, args), after: `${r.next.path}:${r.next.line}` };
        hint += `, or continue with ${callText('search_text', more)}`;
      }
      lines.push(`[${r.matches.length} of ${total} matching lines shown; ${hint}]`);
    }
    const structured: z.output<typeof output> = lean(
      {
        matches: r.matches,
        ...(r.truncated
          ? { total_matches: r.totalMatches, total_is_lower_bound: r.totalIsLowerBound, truncated: true }
          : {}),
        engine: r.engine === 'js' ? ('js' as const) : undefined,
        next_action: more && { tool: 'search_text', arguments: more },
      },
      // a match's path, line and column are never empty or 0; an empty preview is kept
      ['preview', 'path', 'line', 'column'],
    );
    return { structured, text: lines.join('\n') };
  },
});
