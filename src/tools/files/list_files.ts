// list_files: the files below a directory matching glob patterns (one glob meaning: workspace/glob.ts),
// with ignore rules and default excludes applied below `path`. Symlinks leading outside are dropped.
// Results are pages of at most PAGE_BYTES of JSON (core/page.ts) continued by `after`: in path order the walk
// streams and stops when the page is full, so memory stays bounded whatever the tree; newest-first keeps only
// the newest page's worth of files (a bounded heap) while it walks everything.
import * as z from 'zod';
import { MaxHeap } from '../../core/max-heap.js';
import { ToolError } from '../../core/tool-error.js';
import { compileGlobs, type Matcher } from '../../workspace/glob.js';
import { comparePaths } from '../../workspace/path-order.js';
import type { WorkspaceRoot } from '../../workspace/paths.js';
import { MAX_WALK_DEPTH, walk, type WalkEntry, type WalkOptions } from '../../workspace/walk.js';
import type { Existing } from '../common.js';
import { defineTool, READ_ONLY } from '../define.js';
import { callText, lean } from '../result.js';
import { NEXT_ACTION } from '../schema.js';
import { ByteBudget, depthNote, jsonBytes, PAGE_BYTES } from '../../core/page.js';
import {
  explicitArgs,
  globList,
  includeHiddenArg,
  includeIgnoredArg,
  isoTime,
  pathArg,
  requireDirectory,
  resolveExisting,
} from '../common.js';

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
type FileEntry = z.infer<typeof fileShape>;
type Args = z.infer<typeof input>;

/** The smallest JSON a file entry can have: bounds how many newest files are worth keeping for one page. */
const MIN_ENTRY_BYTES = 40;

interface Page {
  files: FileEntry[];
  more: boolean;
  /** What `after` continues from. */
  cursor?: string;
  depthLimited?: string;
}

function fileEntry(e: WalkEntry, times: boolean): FileEntry | undefined {
  const isFile =
    e.type === 'file' || (e.type === 'symlink' && e.target?.inside === true && e.target.type === 'file');
  if (!isFile) return undefined;
  // Built lean (core/lean.ts: no field at its default), so a page's entries need no second pass.
  const st = e.stat;
  const f: FileEntry = { path: e.rel };
  if (e.type === 'symlink') f.type = 'symlink';
  if (st?.size) f.size_bytes = st.size;
  if (times && st) f.modified = isoTime(st.mtimeMs);
  return f;
}

/** Characters JSON writes as they are, one byte each: printable ASCII but `"` and `\`. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Bytes of a string as JSON (quotes included); the same as jsonBytes(s) - 1, without encoding plain ASCII. */
function stringBytes(s: string): number {
  return PLAIN_JSON.test(s) ? s.length + 2 : jsonBytes(s) - 1;
}

/** jsonBytes(f) for a lean file entry, counted field by field (a page counts ~1,000 of them). */
export function entryBytes(f: FileEntry): number {
  let n = 10 + stringBytes(f.path); // {"path":…} and the comma after it
  if (f.type) n += 17; // ,"type":"symlink"
  if (f.size_bytes !== undefined) n += 14 + String(f.size_bytes).length;
  if (f.modified !== undefined) n += 12 + stringBytes(f.modified);
  return n;
}

/** Path order: streams, and stops at the first file that does not fit. */
async function pathPage(dir: Existing, args: Args, walkOpts: WalkOptions, wanted: Wanted): Promise<Page> {
  const files: FileEntry[] = [];
  const budget = new ByteBudget();
  let more = false;
  const s = await walk(wanted.root, dir, { ...walkOpts, from: args.after }, (e) => {
    const f = wanted.file(e);
    if (!f || (args.after !== undefined && comparePaths(f.path, args.after) <= 0)) return;
    if (files.length >= args.max_results || !budget.take(entryBytes(f))) {
      more = true;
      return false;
    }
    files.push(f);
  });
  return { files, more, cursor: files[files.length - 1]?.path, depthLimited: s.depthLimited };
}

/** Newest first, then path; `after` is "<modified> <path>" of the last file shown. */
function newestOrder(a: FileEntry, b: FileEntry): number {
  const am = a.modified ?? '';
  const bm = b.modified ?? '';
  return am === bm ? comparePaths(a.path, b.path) : am < bm ? 1 : -1;
}

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

async function newestPage(dir: Existing, args: Args, walkOpts: WalkOptions, wanted: Wanted): Promise<Page> {
  const cursor = args.after === undefined ? undefined : parseNewestCursor(args.after);
  const keep = Math.min(args.max_results, Math.ceil(PAGE_BYTES / MIN_ENTRY_BYTES));
  const heap = new MaxHeap<FileEntry>(newestOrder);
  let more = false;
  const s = await walk(wanted.root, dir, walkOpts, (e) => {
    const f = wanted.file(e);
    if (!f || (cursor && newestOrder(f, cursor) <= 0)) return;
    heap.push(f);
    if (heap.size > keep) {
      heap.pop();
      more = true;
    }
  });
  const budget = new ByteBudget();
  const sorted = heap.drainAscending();
  const files: FileEntry[] = [];
  for (const f of sorted) {
    if (!budget.take(entryBytes(f))) break;
    files.push(f);
  }
  if (files.length < sorted.length) more = true;
  const last = files[files.length - 1];
  return { files, more, cursor: last && `${last.modified ?? ''} ${last.path}`, depthLimited: s.depthLimited };
}

/** The workspace and which walk entries are listed (files matching the include globs). */
interface Wanted {
  root: WorkspaceRoot;
  file: (e: WalkEntry) => FileEntry | undefined;
}

function wantedFiles(root: WorkspaceRoot, include: Matcher | undefined, times: boolean): Wanted {
  return { root, file: (e) => (include && !include(e.relBase) ? undefined : fileEntry(e, times)) };
}

export const listFilesTool = defineTool({
  name: 'list_files',
  title: 'List files',
  description:
    'List files below a directory, optionally matching globs (hidden and git-ignored ones only when asked).',
  input,
  output,
  annotations: READ_ONLY,
  async handler(args, ctx) {
    const dir = resolveExisting(ctx, args.path);
    requireDirectory(dir, 'list_files');
    const include = compileGlobs([...(args.patterns ?? []), ...(args.glob ? [args.glob] : [])]);
    const walkOpts: WalkOptions = {
      includeHidden: args.include_hidden,
      includeIgnored: args.include_ignored,
      exclude: compileGlobs(args.exclude_patterns),
    };
    const wanted = wantedFiles(ctx.runtime.root, include, args.times || args.sort === 'modified');
    const page =
      args.sort === 'modified'
        ? await newestPage(dir, args, walkOpts, wanted)
        : await pathPage(dir, args, walkOpts, wanted);
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
