// search_text: ripgrep when available, the JS engine otherwise, with the same results (workspace/search).
// One entry per matching line, sorted by path and line; previews cut at max_preview_bytes.
import { z } from 'zod';
import { compileGlobs } from '../../workspace/glob.js';
import type { SearchRequest } from '../../workspace/search/types.js';
import { ToolError } from '../../core/tool-error.js';
import { NEXT_ACTION } from '../schema.js';
import { defineTool, READ_ONLY } from '../define.js';
import { globList, includeHiddenArg, includeIgnoredArg, pathArg, resolveExisting } from '../common.js';

export const MAX_RESULTS_LIMIT = 10_000;

const input = z.object({
  query: z.string().min(1).describe('Text to find (a regular expression when regex is true).'),
  path: pathArg('File or directory to search').default('.'),
  regex: z.boolean().default(false).describe('Treat query as a regular expression (Rust/ripgrep syntax).'),
  case_sensitive: z
    .boolean()
    .optional()
    .describe('Omit for smart case: sensitive only when the query has an upper-case letter.'),
  include_globs: globList('Only search files matching these globs ("*.ts", "src/**/*.py").'),
  glob: z.string().optional().describe('One more include glob, added to include_globs.'),
  exclude_globs: globList('Skip files (or whole directories) matching these globs.'),
  context_lines: z
    .number()
    .int()
    .min(0)
    .max(5)
    .default(0)
    .describe('Lines of context before and after each match (≤ 5).'),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(MAX_RESULTS_LIMIT)
    .default(1000)
    .describe('Most matching lines to return.'),
  max_preview_bytes: z
    .number()
    .int()
    .min(16)
    .max(4096)
    .default(512)
    .describe('Longest preview per line, in bytes.'),
  include_hidden: includeHiddenArg,
  include_ignored: includeIgnoredArg,
});

const matchShape = z.object({
  path: z.string(),
  line: z.number(),
  column: z.number(),
  preview: z.string(),
  before: z.array(z.string()),
  after: z.array(z.string()),
});

const output = z.object({
  query: z.string(),
  path: z.string(),
  matches: z.array(matchShape),
  total_matches: z.number(),
  total_is_lower_bound: z.boolean(),
  truncated: z.boolean(),
  engine: z.enum(['ripgrep', 'js']),
  next_action: NEXT_ACTION.optional(),
});

export const searchTextTool = defineTool({
  name: 'search_text',
  title: 'Search text',
  description:
    'Search file contents in the workspace (ripgrep). Literal text by default, a regular expression with ' +
    'regex: true; smart case unless case_sensitive is given. Returns one entry per matching line with path, line, ' +
    'column and a preview, plus context lines on request. Skips binary, hidden and git-ignored files unless asked.',
  input,
  output,
  annotations: READ_ONLY,
  async handler(args, ctx) {
    const base = resolveExisting(ctx, args.path);
    if (!base.stat.isDirectory() && !base.stat.isFile()) {
      throw new ToolError('INVALID_ARGUMENT', `${base.rel} is neither a file nor a directory`, {
        path: base.rel,
      });
    }
    const includeGlobs = [...(args.include_globs ?? []), ...(args.glob ? [args.glob] : [])];
    const excludeGlobs = args.exclude_globs ?? [];
    const req: SearchRequest = {
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
    };
    const r = await ctx.runtime.search.search(ctx.runtime.root, req);
    const structured: Record<string, unknown> = {
      query: args.query,
      path: base.rel,
      matches: r.matches,
      total_matches: r.totalMatches,
      total_is_lower_bound: r.totalIsLowerBound,
      truncated: r.truncated,
      engine: r.engine,
    };
    const lines: string[] = [];
    for (const m of r.matches) {
      m.before.forEach((t, i) => lines.push(`${m.path}-${m.line - m.before.length + i}- ${t}`));
      lines.push(`${m.path}:${m.line}:${m.column}: ${m.preview}`);
      m.after.forEach((t, i) => lines.push(`${m.path}-${m.line + 1 + i}- ${t}`));
      if (args.context_lines > 0) lines.push('--');
    }
    if (r.matches.length === 0)
      lines.push(
        `No matches for ${JSON.stringify(args.query)} in ${base.rel}${args.include_ignored ? '' : ' (git-ignored and hidden files were skipped)'}.`,
      );
    if (r.truncated) {
      const total = `${r.totalIsLowerBound ? 'more than ' : ''}${r.totalMatches}`;
      let hint = 'narrow it with path or include_globs';
      if (args.max_results < MAX_RESULTS_LIMIT) {
        const more = { ...args, max_results: Math.min(MAX_RESULTS_LIMIT, args.max_results * 4) };
        structured.next_action = { tool: 'search_text', arguments: more };
        hint += `, or raise max_results to ${more.max_results}`;
      }
      lines.push(`[${r.matches.length} of ${total} matching lines shown; ${hint}]`);
    }
    return { structured, text: lines.join('\n') };
  },
});
