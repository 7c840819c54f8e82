// list_dir: the entries of one directory, or a bounded tree of them. Everything is collected and sorted before
// the max_entries cut, so the subset shown is deterministic.
import * as z from 'zod';
import { walk, type WalkEntry } from '../../workspace/walk.js';
import { defineTool, READ_ONLY } from '../define.js';
import { lean } from '../result.js';
import {
  humanBytes,
  includeHiddenArg,
  includeIgnoredArg,
  isoTime,
  pathArg,
  requireDirectory,
  resolveExisting,
} from '../common.js';

const COLLECT_CAP = 200_000;

const input = z.object({
  path: pathArg().default('.'),
  recursive: z.boolean().default(false).describe('max_depth then defaults to 20.'),
  max_depth: z.number().int().min(1).max(20).optional().describe('1 = this directory only.'),
  max_entries: z.number().int().min(1).max(100_000).default(1000),
  include_hidden: includeHiddenArg,
  include_ignored: includeIgnoredArg,
  sort: z.enum(['name', 'type', 'modified']).default('name').describe('modified: newest first.'),
});

const entryShape = z.object({
  path: z.string(),
  type: z.enum(['file', 'directory', 'symlink', 'other']),
  size_bytes: z.number().optional(),
  modified: z.string().optional(),
  symlink_target: z.string().optional(),
});

/** total_entries only when not every entry is listed. */
const output = z.object({
  entries: z.array(entryShape).optional(),
  total_entries: z.number().optional(),
  truncated: z.boolean().optional(),
});

type Entry = z.infer<typeof entryShape>;

const TYPE_ORDER: Record<string, number> = { directory: 0, file: 1, symlink: 2, other: 3 };

export const listDirTool = defineTool({
  name: 'list_dir',
  title: 'List directory',
  description: 'List a directory or a tree of it. Hidden and git-ignored entries are skipped unless asked.',
  input,
  output,
  annotations: READ_ONLY,
  async handler(args, ctx) {
    const dir = resolveExisting(ctx, args.path);
    requireDirectory(dir, 'list_dir');
    const depth = args.max_depth ?? (args.recursive ? 20 : 1);
    const found: WalkEntry[] = [];
    let capped = false;
    await walk(
      ctx.runtime.root,
      dir,
      {
        includeHidden: args.include_hidden,
        includeIgnored: args.include_ignored,
        maxDepth: depth,
        stat: true,
      },
      (e) => {
        if (found.length >= COLLECT_CAP) {
          capped = true;
          return false;
        }
        found.push(e);
      },
    );
    const entries: Entry[] = found.map((e) => {
      const st = e.stat;
      const out: Entry = {
        path: e.rel,
        type: e.type,
        size_bytes: st && !st.isDirectory() ? st.size : 0,
        modified: st ? isoTime(st.mtimeMs) : undefined,
      };
      if (e.target)
        out.symlink_target = e.target.inside
          ? e.target.real.slice(ctx.runtime.root.real.length + 1) || '.'
          : '(outside the workspace)';
      return out;
    });
    entries.sort((a, b) => {
      if (args.sort === 'type' && a.type !== b.type)
        return (TYPE_ORDER[a.type] as number) - (TYPE_ORDER[b.type] as number);
      if (args.sort === 'modified' && a.modified !== b.modified)
        return (b.modified ?? '') < (a.modified ?? '') ? -1 : 1; // ISO times sort as text: newest first
      return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
    });
    const shown = entries.slice(0, args.max_entries);
    const truncated = capped || entries.length > shown.length;
    const lines = shown.map((e) =>
      e.type === 'directory'
        ? `${e.path}/`
        : e.type === 'symlink'
          ? `${e.path} -> ${e.symlink_target}`
          : `${e.path} (${humanBytes(e.size_bytes ?? 0)})`,
    );
    if (shown.length === 0)
      lines.push(
        `(${dir.rel} has no entries to show${args.include_hidden ? '' : '; hidden entries need include_hidden'})`,
      );
    if (truncated)
      lines.push(
        `[${shown.length} of ${capped ? 'more than ' : ''}${entries.length} entries shown; raise max_entries or list a subdirectory]`,
      );
    return {
      structured: lean({
        entries: shown,
        ...(truncated ? { total_entries: entries.length, truncated } : {}),
      }),
      text: lines.join('\n'),
    };
  },
});
