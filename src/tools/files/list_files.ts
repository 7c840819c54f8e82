// list_files: the files below a directory matching glob patterns (one glob meaning: workspace/glob.ts),
// with ignore rules and default excludes applied below `path`. Symlinks leading outside are dropped.
import type { Stats } from 'node:fs';
import * as z from 'zod';
import { compileGlobs } from '../../workspace/glob.js';
import { walk } from '../../workspace/walk.js';
import { defineTool, READ_ONLY } from '../define.js';
import { lean } from '../result.js';
import {
  globList,
  includeHiddenArg,
  includeIgnoredArg,
  isoTime,
  pathArg,
  requireDirectory,
  resolveExisting,
} from '../common.js';

const COLLECT_CAP = 500_000;

const input = z.object({
  path: pathArg().default('.'),
  patterns: globList('Globs to include ("*.ts" matches at any depth).'),
  glob: z.string().optional(),
  exclude_patterns: globList(),
  include_hidden: includeHiddenArg,
  include_ignored: includeIgnoredArg,
  max_results: z.number().int().min(1).max(100_000).default(5000),
  sort: z.enum(['path', 'modified']).default('path').describe('modified: newest first.'),
});

/** `type` only for a symlink (to a file inside the workspace); every other entry is a file. */
const fileShape = z.object({
  path: z.string(),
  type: z.literal('symlink').optional(),
  size_bytes: z.number().optional(),
  modified: z.string().optional(),
});
/** total_files only when not every file is listed. */
const output = z.object({
  files: z.array(fileShape).optional(),
  total_files: z.number().optional(),
  truncated: z.boolean().optional(),
});
type FileEntry = z.infer<typeof fileShape>;

export const listFilesTool = defineTool({
  name: 'list_files',
  title: 'List files',
  description:
    'List the files below a directory, optionally matching globs. Hidden and git-ignored files are skipped ' +
    'unless asked.',
  input,
  output,
  annotations: READ_ONLY,
  async handler(args, ctx) {
    const dir = resolveExisting(ctx, args.path);
    requireDirectory(dir, 'list_files');
    const include = compileGlobs([...(args.patterns ?? []), ...(args.glob ? [args.glob] : [])]);
    const exclude = compileGlobs(args.exclude_patterns);
    const found: Array<{ rel: string; type: 'file' | 'symlink'; st?: Stats }> = [];
    let capped = false;
    await walk(
      ctx.runtime.root,
      dir,
      { includeHidden: args.include_hidden, includeIgnored: args.include_ignored, exclude, stat: true },
      (e) => {
        const isFile =
          e.type === 'file' ||
          (e.type === 'symlink' && e.target?.inside === true && e.target.type === 'file');
        if (!isFile || (include && !include(e.relBase))) return;
        if (found.length >= COLLECT_CAP) {
          capped = true;
          return false;
        }
        found.push({ rel: e.rel, type: e.type === 'symlink' ? 'symlink' : 'file', st: e.stat });
      },
    );
    found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
    // Stats were taken during the walk, through each directory descriptor (no path is looked up twice).
    const toStat = args.sort === 'modified' ? found : found.slice(0, args.max_results);
    const files: FileEntry[] = toStat.map((f) => {
      const st = f.st;
      return {
        path: f.rel,
        type: f.type === 'symlink' ? 'symlink' : undefined,
        size_bytes: st?.size ?? 0,
        modified: st ? isoTime(st.mtimeMs) : undefined,
      };
    });
    if (args.sort === 'modified')
      files.sort((a, b) =>
        a.modified === b.modified
          ? a.path < b.path
            ? -1
            : 1
          : (a.modified ?? '') < (b.modified ?? '')
            ? 1
            : -1,
      );
    const shown = files.slice(0, args.max_results);
    const truncated = capped || found.length > shown.length;
    const lines = shown.map((f) => f.path);
    if (shown.length === 0) lines.push('(no files match)');
    if (truncated)
      lines.push(
        `[${shown.length} of ${capped ? 'more than ' : ''}${found.length} files shown; narrow with patterns or path, or raise max_results]`,
      );
    return {
      structured: lean({ files: shown, ...(truncated ? { total_files: found.length, truncated } : {}) }),
      text: lines.join('\n'),
    };
  },
});
