// list_dir: the entries of one directory, or a tree of them (at most 20 levels), as lean as a model can use
// (docs/tools.md#what-the-model-reads): names relative to `path`, grouped by kind — `dirs`, `files` (name → size),
// `links` (name → target), `other` — and times only when sorting by them or asked (`times`). A page holds
// max_entries entries or PAGE_BYTES of JSON (core/page.ts) and `after` continues it. Sorted by name (the walk's
// own order) it streams and stops when the page is full; by type or time every entry must be looked at, so a
// bounded heap keeps the page's worth that come first and the text says the whole tree was read.
import * as z from 'zod';
import { MaxHeap } from '../../core/max-heap.js';
import { TimeSlicer } from '../../core/slice.js';
import { ToolError } from '../../core/tool-error.js';
import { comparePaths } from '../../workspace/path-order.js';
import type { WorkspaceRoot } from '../../workspace/paths.js';
import { walk, type EntryType, type WalkEntry } from '../../workspace/walk.js';
import { defineTool, READ_ONLY } from '../define.js';
import { callText } from '../result.js';
import { NEXT_ACTION } from '../schema.js';
import { ByteBudget, PAGE_BYTES } from '../../core/page.js';
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

/** The deepest tree list_dir walks (and its default with `recursive`). */
export const MAX_DEPTH = 20;

const input = z.object({
  path: pathArg().default('.'),
  recursive: z.boolean().default(false).describe(`Default max_depth ${MAX_DEPTH}.`),
  max_depth: z.number().int().min(1).max(MAX_DEPTH).optional(),
  // No cap on the count: a page also ends at PAGE_BYTES of JSON.
  max_entries: z.number().int().min(1).default(1000),
  include_hidden: includeHiddenArg,
  include_ignored: includeIgnoredArg,
  sort: z.enum(['name', 'type', 'modified']).default('name').describe('modified: newest first.'),
  times: z.boolean().default(false),
  after: z.string().optional(),
});

/** Names are relative to `path`; each map and list is in the listing's order. */
const output = z.object({
  dirs: z.array(z.string()).optional(),
  files: z.record(z.string(), z.number()).optional(),
  links: z.record(z.string(), z.string()).optional(),
  other: z.array(z.string()).optional(),
  modified: z.record(z.string(), z.string()).optional(),
  next_action: NEXT_ACTION.optional(),
});

type Args = z.infer<typeof input>;
type Sort = Args['sort'];

/** What is kept of each walked entry: no Stats objects. */
interface Found {
  /** Relative to the listed directory. */
  name: string;
  type: EntryType;
  size: number;
  /** ISO time, only when the sort or `times` needs it. */
  modified?: string;
  target?: string;
}

const TYPE_ORDER: Record<EntryType, number> = { directory: 0, file: 1, symlink: 2, other: 3 };
const TYPE_WORD: Record<EntryType, string> = {
  directory: 'dir',
  file: 'file',
  symlink: 'link',
  other: 'other',
};
const WORD_TYPE = new Map(Object.entries(TYPE_WORD).map(([t, w]) => [w, t as EntryType]));

function order(sort: Sort): (a: Found, b: Found) => number {
  return (a, b) => {
    if (sort === 'type' && a.type !== b.type) return TYPE_ORDER[a.type] - TYPE_ORDER[b.type];
    if (sort === 'modified' && a.modified !== b.modified)
      return (a.modified ?? '') < (b.modified ?? '') ? 1 : -1;
    return comparePaths(a.name, b.name);
  };
}

/** The `after` of the next page: the name, after "<type> " or "<modified> " when sorting by those. */
function cursorOf(f: Found, sort: Sort): string {
  if (sort === 'type') return `${TYPE_WORD[f.type]} ${f.name}`;
  if (sort === 'modified') return `${f.modified ?? ''} ${f.name}`;
  return f.name;
}

function parseCursor(after: string, sort: Sort): Found {
  if (sort === 'name') return { name: after, type: 'file', size: 0 };
  const m = /^(\S+) (.+)$/s.exec(after);
  const type = sort === 'type' ? WORD_TYPE.get(m?.[1] ?? '') : 'file';
  if (!m || !type)
    throw new ToolError(
      'INVALID_ARGUMENT',
      `after is not a list_dir cursor for sort "${sort}": send next_action back as it came`,
      { argument: 'after' },
      { suggestion: 'Leave after out to start from the first entry.' },
    );
  return { name: m[2] as string, type, size: 0, modified: sort === 'modified' ? m[1] : undefined };
}

/** An entry without what needs its lstat (the size, the time). */
function bare(root: WorkspaceRoot, e: WalkEntry): Found {
  const f: Found = { name: e.relBase, type: e.type, size: 0 };
  if (e.target)
    f.target = e.target.inside ? e.target.real.slice(root.real.length + 1) || '.' : '(outside the workspace)';
  return f;
}

/** Adds what needs the entry's lstat: a file's size, and the time when asked. */
function withStat(f: Found, e: WalkEntry, times: boolean): Found {
  if (e.type === 'file') f.size = e.stat?.size ?? 0;
  if (times) {
    const st = e.stat;
    if (st) f.modified = isoTime(st.mtimeMs);
  }
  return f;
}

/**
 * Bytes an entry adds to the result, for the page's byte ceiling: the larger of its JSON (name, value and
 * separators in its map or list) and its text line.
 */
function entryBytes(f: Found): number {
  const name = Buffer.byteLength(JSON.stringify(f.name));
  let json = name + 2;
  if (f.type === 'file') json += String(f.size).length + 1;
  else if (f.type === 'symlink') json += Buffer.byteLength(JSON.stringify(f.target ?? '')) + 1;
  if (f.modified !== undefined) json += name + f.modified.length + 4;
  return Math.max(json, Buffer.byteLength(line(f)) + 1);
}

interface Page {
  shown: Found[];
  more: boolean;
  /** Entries looked at when the sort needed the whole tree. */
  walked?: number;
}

/** The most a page can hold: bounds the heap of the sorts that need the whole tree. */
const MIN_ENTRY_BYTES = 6;

async function listPage(root: WorkspaceRoot, dir: Existing, args: Args): Promise<Page> {
  const sort = args.sort;
  const times = args.times || sort === 'modified';
  const cursor = args.after === undefined ? undefined : parseCursor(args.after, sort);
  const cmp = order(sort);
  const walkOpts = {
    includeHidden: args.include_hidden,
    includeIgnored: args.include_ignored,
    maxDepth: args.max_depth ?? (args.recursive ? MAX_DEPTH : 1),
    slicer: new TimeSlicer(),
  };
  const budget = new ByteBudget();
  if (sort === 'name') {
    // The walk's order is this sort's: stream from the cursor and stop when the page is full.
    const shown: Found[] = [];
    let more = false;
    const from = cursor && (dir.rel === '.' ? cursor.name : `${dir.rel}/${cursor.name}`);
    await walk(root, dir, { ...walkOpts, from }, (e) => {
      if (cursor && comparePaths(e.relBase, cursor.name) <= 0) return;
      const f = withStat(bare(root, e), e, times);
      if (shown.length >= args.max_entries || !budget.take(entryBytes(f))) {
        more = true;
        return false;
      }
      shown.push(f);
    });
    return { shown, more };
  }
  // Another order needs every entry: a bounded heap keeps the page's worth that come first after the cursor.
  const keep = Math.min(args.max_entries, Math.ceil(PAGE_BYTES / MIN_ENTRY_BYTES)) + 1;
  const heap = new MaxHeap<Found>(cmp);
  let walked = 0;
  await walk(root, dir, walkOpts, (e) => {
    walked++;
    // The time decides the order of sort=modified; otherwise an entry is stat'ed only if it may be shown.
    const f = sort === 'modified' ? withStat(bare(root, e), e, true) : bare(root, e);
    if (cursor && cmp(f, cursor) <= 0) return;
    const worst = heap.size >= keep ? heap.peek() : undefined;
    if (worst && cmp(f, worst) >= 0) return;
    if (sort !== 'modified') withStat(f, e, times);
    heap.push(f);
    if (heap.size > keep) heap.pop();
  });
  const sorted = heap.drainAscending();
  const shown: Found[] = [];
  for (const f of sorted) {
    if (shown.length >= args.max_entries || !budget.take(entryBytes(f))) break;
    shown.push(f);
  }
  return { shown, more: shown.length < sorted.length, walked };
}

function line(f: Found): string {
  const when = f.modified ? `  ${f.modified}` : '';
  if (f.type === 'directory') return `${f.name}/${when}`;
  if (f.type === 'symlink') return `${f.name} -> ${f.target}${when}`;
  if (f.type === 'other') return `${f.name} (not a file or directory)${when}`;
  return `${f.name} (${humanBytes(f.size)})${when}`;
}

/** The structured page: a map or list per kind, names relative to the listed directory, in page order. */
function structuredOf(shown: Found[]): z.output<typeof output> {
  const dirs: string[] = [];
  const other: string[] = [];
  // Null prototypes: a file named "__proto__" is a key like any other.
  const files: Record<string, number> = Object.create(null) as Record<string, number>;
  const links: Record<string, string> = Object.create(null) as Record<string, string>;
  const modified: Record<string, string> = Object.create(null) as Record<string, string>;
  let nFiles = 0;
  let nLinks = 0;
  let nTimes = 0;
  for (const f of shown) {
    if (f.type === 'directory') dirs.push(f.name);
    else if (f.type === 'file') {
      files[f.name] = f.size;
      nFiles++;
    } else if (f.type === 'symlink') {
      links[f.name] = f.target ?? '';
      nLinks++;
    } else other.push(f.name);
    if (f.modified !== undefined) {
      modified[f.name] = f.modified;
      nTimes++;
    }
  }
  const out: z.output<typeof output> = {};
  if (dirs.length) out.dirs = dirs;
  if (nFiles) out.files = files;
  if (nLinks) out.links = links;
  if (other.length) out.other = other;
  if (nTimes) out.modified = modified;
  return out;
}

export const listDirTool = defineTool({
  name: 'list_dir',
  title: 'List directory',
  description: 'List a directory or its tree (hidden and git-ignored entries only when asked).',
  uses: ['root'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const dir = resolveExisting(ctx, args.path);
    requireDirectory(dir, 'list_dir');
    const page = await listPage(ctx.runtime.root, dir, args);
    const { shown } = page;
    const lines = dir.rel === '.' ? [] : [`(in ${dir.rel}/)`];
    lines.push(...shown.map(line));
    if (shown.length === 0)
      lines.push(
        args.after !== undefined
          ? '(no more entries)'
          : `(${dir.rel} has no entries to show${args.include_hidden ? '' : '; hidden entries need include_hidden'})`,
      );
    const structured = structuredOf(shown);
    const last = shown[shown.length - 1];
    if (page.more && last) {
      const next = { ...explicitArgs(input, args), after: cursorOf(last, args.sort) };
      structured.next_action = { tool: 'list_dir', arguments: next };
      lines.push(`[${shown.length} entries shown; more follow: ${callText('list_dir', next)}]`);
    }
    if (page.walked !== undefined)
      lines.push(`[sorting by ${args.sort} read all ${page.walked} entries; sort by name reads only a page]`);
    return { structured, text: lines.join('\n') };
  },
});
