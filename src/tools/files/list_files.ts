// list_files: the files below a directory matching glob patterns (one glob meaning: workspace/glob.ts),
// with ignore rules and default excludes applied below `path`. Symlinks leading outside are dropped.
// Results are pages of at most PAGE_BYTES of JSON (core/page.ts) continued by `after`, built by file-pages.ts:
// in path order the walk streams and stops when the page is full, so memory stays bounded whatever the tree;
// newest-first keeps only the newest page's worth of files (a bounded heap) while it walks everything.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { compileGlobs } from '../../workspace/glob.js';
import { MAX_WALK_DEPTH } from '../../workspace/walk.js';
import { defineTool, READ_ONLY } from '../define.js';
import { callText, lean } from '../result.js';
import { NEXT_ACTION } from '../schema.js';
import { depthNote } from '../../core/page.js';
import {
  explicitArgs,
  globList,
  includeHiddenArg,
  includeIgnoredArg,
  pathArg,
  requireDirectory,
  resolveExisting,
} from '../common.js';
import { newestPage, pathPage, type FileEntry, type PageRequest } from './file-pages.js';

const input = z.object({
  path: pathArg().default('.'),
  patterns: globList('Globs to include ("*.ts" matches at any depth).'),
  glob: z.string().optional(),
  exclude_patterns: globList(),
  include_hidden: includeHiddenArg,
  include_ignored: includeIgnoredArg,
  // No cap on the count: a page also ends at PAGE_BYTES of JSON.
  max_results: z.number().int().min(1).default(5000),
  sort: z.enum(['path', 'modified']).default('path').describe('modified: newest first.'),
  times: z.boolean().default(false),
  after: z.string().optional(),
});

/**
 * `type` only for a symlink (to a file inside the workspace); every other entry is a file. `modified` only when
 * sorting by it or asked (`times`): a model rarely needs it, and it doubled every entry.
 */
const fileShape = z.object({
  path: z.string(),
  type: z.literal('symlink').optional(),
  size_bytes: z.number().optional(),
  modified: z.string().optional(),
});
const output = z.object({
  files: z.array(fileShape).optional(),
  truncated: z.boolean().optional(),
  note: z.string().optional(),
  next_action: NEXT_ACTION.optional(),
});

function parseNewestCursor(after: string): FileEntry {
  const m = /^(\S+) (.+)$/s.exec(after);
  if (!m)
    throw new ToolError(
      'INVALID_ARGUMENT',
      'after is not a list_files cursor: with sort "modified" it is "<modified> <path>" from next_action',
      { argument: 'after' },
      { suggestion: 'Send next_action back as it came, or leave after out to start from the newest file.' },
    );
  return { path: m[2] as string, modified: m[1] as string };
}

export const listFilesTool = defineTool({
  name: 'list_files',
  title: 'List files',
  description:
    'List files below a directory, optionally matching globs (hidden and git-ignored ones only when asked).',
  uses: ['root', 'stats'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const dir = resolveExisting(ctx, args.path);
    requireDirectory(dir, 'list_files');
    const include = compileGlobs([...(args.patterns ?? []), ...(args.glob ? [args.glob] : [])]);
    const req: PageRequest = {
      root: ctx.runtime.root,
      dir,
      walk: {
        includeHidden: args.include_hidden,
        includeIgnored: args.include_ignored,
        exclude: compileGlobs(args.exclude_patterns),
      },
      include,
      times: args.times || args.sort === 'modified',
      maxResults: args.max_results,
      after: args.sort === 'modified' ? undefined : args.after,
      stats: ctx.runtime.stats,
    };
    const page =
      args.sort === 'modified'
        ? await newestPage(req, args.after === undefined ? undefined : parseNewestCursor(args.after))
        : await pathPage(req);
    const lines = page.files.map((f) => f.path);
    if (page.files.length === 0) lines.push(args.after ? '(no more files)' : '(no files match)');
    const structured: Omit<z.output<typeof output>, 'files'> = {};
    if (page.depthLimited) {
      const note = depthNote(page.depthLimited, MAX_WALK_DEPTH);
      structured.note = note;
      lines.push(`[${note}]`);
    }
    if (page.more && page.cursor !== undefined) {
      const next = { ...explicitArgs(input, args), after: page.cursor };
      structured.truncated = true;
      structured.next_action = { tool: 'list_files', arguments: next };
      lines.push(`[${page.files.length} files shown; more follow: ${callText('list_files', next)}]`);
    }
    // The entries are lean already: only the few other fields go through lean().
    const files = page.files.length ? { files: page.files } : {};
    return { structured: { ...files, ...lean(structured) }, text: lines.join('\n') };
  },
});
