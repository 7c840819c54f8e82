// list_dir: the entries of one directory, or a bounded tree of them (at most 20 levels). Everything is collected
// (at most COLLECT_CAP entries, kept compact) and sorted before a page is cut, so the subset shown is
// deterministic; a page holds max_entries entries or PAGE_BYTES of JSON (core/page.ts), and `offset`
// continues in the same order.
import * as z from 'zod';
import { sortSliced, TimeSlicer } from '../../core/slice.js';
import { comparePaths } from '../../workspace/path-order.js';
import type { WorkspaceRoot } from '../../workspace/paths.js';
import { walk, type EntryType } from '../../workspace/walk.js';
import { defineTool, READ_ONLY } from '../define.js';
import { callText, lean } from '../result.js';
import { NEXT_ACTION } from '../schema.js';
import { ByteBudget, jsonBytes } from '../../core/page.js';
import {
  explicitArgs,
  humanBytes,
  includeHiddenArg,
  includeIgnoredArg,
  isoTime,
  pathArg,
  requireDirectory,
  resolveExisting,
  type Existing,
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
  offset: z.number().int().min(0).optional(),
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
  next_action: NEXT_ACTION.optional(),
});

type Entry = z.infer<typeof entryShape>;

/** What is kept of each walked entry until the sort: no Stats objects. */
interface Found {
  path: string;
  type: EntryType;
  size: number;
  mtimeMs: number | undefined;
  target?: string;
}

const TYPE_ORDER: Record<string, number> = { directory: 0, file: 1, symlink: 2, other: 3 };

function order(sort: 'name' | 'type' | 'modified'): (a: Found, b: Found) => number {
  return (a, b) => {
    if (sort === 'type' && a.type !== b.type)
      return (TYPE_ORDER[a.type] as number) - (TYPE_ORDER[b.type] as number);
    if (sort === 'modified' && a.mtimeMs !== b.mtimeMs) return (b.mtimeMs ?? 0) - (a.mtimeMs ?? 0);
    return comparePaths(a.path, b.path);
  };
}

function toEntry(f: Found): Entry {
  return {
    path: f.path,
    type: f.type,
    size_bytes: f.size,
    modified: f.mtimeMs === undefined ? undefined : isoTime(f.mtimeMs),
    symlink_target: f.target,
  };
}

type Args = z.infer<typeof input>;

/** Every entry of the tree (at most COLLECT_CAP), compact. */
async function collect(
  root: WorkspaceRoot,
  dir: Existing,
  args: Args,
  slicer: TimeSlicer,
): Promise<{ found: Found[]; capped: boolean }> {
  const found: Found[] = [];
  let capped = false;
  const walkOpts = {
    includeHidden: args.include_hidden,
    includeIgnored: args.include_ignored,
    maxDepth: args.max_depth ?? (args.recursive ? 20 : 1),
    slicer,
  };
  await walk(root, dir, walkOpts, (e) => {
    if (found.length >= COLLECT_CAP) {
      capped = true;
      return false;
    }
    const st = e.stat;
    const f: Found = {
      path: e.rel,
      type: e.type,
      size: st && !st.isDirectory() ? st.size : 0,
      mtimeMs: st?.mtimeMs,
    };
    if (e.target)
      f.target = e.target.inside
        ? e.target.real.slice(root.real.length + 1) || '.'
        : '(outside the workspace)';
    found.push(f);
  });
  return { found, capped };
}

function line(e: Entry): string {
  if (e.type === 'directory') return `${e.path}/`;
  if (e.type === 'symlink') return `${e.path} -> ${e.symlink_target}`;
  return `${e.path} (${humanBytes(e.size_bytes ?? 0)})`;
}

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
    const slicer = new TimeSlicer();
    const { found, capped } = await collect(ctx.runtime.root, dir, args, slicer);
    const sorted = await sortSliced(found, order(args.sort), slicer);
    const offset = args.offset ?? 0;
    const shown: Entry[] = [];
    const budget = new ByteBudget();
    for (let i = offset; i < sorted.length && shown.length < args.max_entries; i++) {
      const e = toEntry(sorted[i] as Found);
      if (!budget.take(jsonBytes(lean(e)))) break;
      shown.push(e);
    }
    const end = offset + shown.length;
    const truncated = capped || end < sorted.length || offset > 0;
    const lines = shown.map(line);
    if (shown.length === 0)
      lines.push(
        offset > 0
          ? `(no entries past offset ${offset})`
          : `(${dir.rel} has no entries to show${args.include_hidden ? '' : '; hidden entries need include_hidden'})`,
      );
    const structured: Record<string, unknown> = {
      entries: shown,
      ...(truncated ? { total_entries: sorted.length, truncated } : {}),
    };
    if (end < sorted.length) {
      const next = { ...explicitArgs(input, args), offset: end };
      structured.next_action = { tool: 'list_dir', arguments: next };
      lines.push(
        `[entries ${offset + 1}-${end} of ${capped ? 'more than ' : ''}${sorted.length} shown; ` +
          `continue with ${callText('list_dir', next)}, or list a subdirectory]`,
      );
    } else if (capped)
      lines.push(`[only the first ${sorted.length} entries were collected; list a subdirectory]`);
    return { structured: lean(structured), text: lines.join('\n') };
  },
});
