// The pages of list_files (list_files.ts): which files a walk yields, with their sizes (and times when asked),
// cut at PAGE_BYTES of JSON (core/page.ts). Sizes and times come from batch lstats (process/stat-batch.ts:
// requests to native/wb-stat) sent while the walk goes on and answered beside it; where no batch can be had,
// from an lstat per file taken as the walk passes it (walk.ts). Path order streams and stops when the page is
// full; newest-first keeps only the newest page's worth of files (a bounded heap) while it walks everything.
import { MaxHeap } from '../../core/max-heap.js';
import { ByteBudget, jsonBytes, PAGE_BYTES } from '../../core/page.js';
import { comparePaths } from '../../workspace/path-order.js';
import type { WorkspaceRoot } from '../../workspace/paths.js';
import type { BriefStat, StatBatch } from '../../process/stat-batch.js';
import { walk, type WalkEntry, type WalkOptions } from '../../workspace/walk.js';
import type { Existing } from '../common.js';
import { isoTime } from '../common.js';

/** A listed file, lean (core/lean.ts: no field at its default). */
export interface FileEntry {
  path: string;
  type?: 'symlink';
  size_bytes?: number;
  modified?: string;
}

export interface PageRequest {
  root: WorkspaceRoot;
  dir: Existing;
  walk: WalkOptions;
  /** Include globs, matched against the path below `dir`. */
  include: ((relBase: string) => boolean) | undefined;
  /** `modified` on every entry (asked, or sorting by it). */
  times: boolean;
  maxResults: number;
  after: string | undefined;
  /** The batch lstat; undefined or failing: each file is stat'ed as the walk passes it. */
  stats: StatBatch | undefined;
}

export interface Page {
  files: FileEntry[];
  more: boolean;
  /** What `after` continues from. */
  cursor?: string;
  depthLimited?: string;
}

/** The smallest JSON a file entry can have: bounds how many newest files are worth keeping for one page. */
const MIN_ENTRY_BYTES = 40;
/** What a size adds to an entry's JSON, reckoned before it is known (`,"size_bytes":12345`); trimmed after. */
const SIZE_GUESS_BYTES = 19;
/** What a time adds (`,"modified":"2026-11-26T03:10:34.123Z"`). */
const TIME_BYTES = 38;
/** Files stat'ed per batch while newest-first walks everything. */
export const NEWEST_BATCH = 4096;

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

/** A walk entry that is listed: a file, or a symlink to a file inside the workspace, matching the globs. */
function listed(e: WalkEntry, include: PageRequest['include']): FileEntry | undefined {
  if (include && !include(e.relBase)) return undefined;
  if (e.type === 'file') return { path: e.rel };
  if (e.type === 'symlink' && e.target?.inside === true && e.target.type === 'file')
    return { path: e.rel, type: 'symlink' };
  return undefined;
}

/** Adds what an lstat says to an entry: the size (not 0) and, when asked, the time. */
function withStat(
  f: FileEntry,
  st: { size: number; mtimeMs: number } | undefined,
  times: boolean,
): FileEntry {
  if (st?.size) f.size_bytes = st.size;
  if (times && st) f.modified = isoTime(st.mtimeMs);
  return f;
}

/** Stats a batch of entries in place; false when no batch could be had (nothing is changed then). */
async function statBatch(files: FileEntry[], req: PageRequest): Promise<boolean> {
  if (!req.stats || files.length === 0) return files.length === 0;
  let got: Array<BriefStat | undefined>;
  try {
    got = await req.stats.stat(files.map((f) => f.path));
  } catch {
    return false;
  }
  files.forEach((f, i) => {
    const st = got[i];
    withStat(f, st && (st.kind === 'file' || st.kind === 'symlink') ? st : undefined, req.times);
  });
  return true;
}

const batchable = (req: PageRequest) => req.stats !== undefined && req.stats.unavailable === undefined;

/** Files per request while a path-order page is walked: sent as the walk goes on, answered meanwhile. */
const PATH_BATCH = 256;

/** Path order: streams, and stops at the first file that does not fit. */
export async function pathPage(req: PageRequest): Promise<Page> {
  const batched = batchable(req);
  const guess = SIZE_GUESS_BYTES + (req.times ? TIME_BYTES : 0);
  const files: FileEntry[] = [];
  /** Batched: each entry's bytes before its size and time were known. */
  const sizeless: number[] = [];
  const asked: Array<Promise<boolean>> = [];
  let sent = 0;
  const send = () => {
    asked.push(statBatch(files.slice(sent), req));
    sent = files.length;
  };
  const budget = new ByteBudget();
  let more = false;
  // The walk skips what sorts before `after`, but yields `after` itself: compared until one file is past it.
  let after = req.after;
  const s = await walk(req.root, req.dir, { ...req.walk, from: after }, (e) => {
    const f = listed(e, req.include);
    if (!f) return;
    if (after !== undefined) {
      if (comparePaths(f.path, after) <= 0) return;
      after = undefined;
    }
    // Batched, the size is not known yet: reckoned, and the page trimmed to the truth once it is.
    const bytes = batched ? entryBytes(f) : entryBytes(withStat(f, e.stat, req.times));
    if (files.length >= req.maxResults || !budget.take(batched ? bytes + guess : bytes)) {
      more = true;
      return false;
    }
    files.push(f);
    sizeless.push(bytes);
    if (batched && files.length - sent >= PATH_BATCH) send();
  });
  if (batched) {
    if (sent < files.length) send();
    // The entries are stat'ed in place (the slices hold the same objects); any batch refused: no batches.
    if ((await Promise.all(asked)).includes(false)) return pathPage({ ...req, stats: undefined });
  }
  const fit = batched ? fitting(files, sizeless) : files.length;
  if (fit < files.length) {
    files.length = fit;
    more = true;
  }
  return { files, more, cursor: files[files.length - 1]?.path, depthLimited: s.depthLimited };
}

/** How many entries, from the first, fit in a page, now that their sizes (and times) are known. */
function fitting(files: readonly FileEntry[], sizeless: readonly number[]): number {
  const budget = new ByteBudget();
  let n = 0;
  for (; n < files.length; n++) {
    const f = files[n] as FileEntry;
    let bytes = sizeless[n] as number;
    if (f.size_bytes !== undefined) bytes += 14 + String(f.size_bytes).length;
    if (f.modified !== undefined) bytes += 12 + stringBytes(f.modified);
    if (!budget.take(bytes)) break;
  }
  return n;
}

/** Newest first, then path; `after` is "<modified> <path>" of the last file shown. */
export function newestOrder(a: FileEntry, b: FileEntry): number {
  const am = a.modified ?? '';
  const bm = b.modified ?? '';
  return am === bm ? comparePaths(a.path, b.path) : am < bm ? 1 : -1;
}

/** Newest first: every file is looked at; only a page's worth is kept. `cursor`: the last one shown before. */
export async function newestPage(req: PageRequest, cursor: FileEntry | undefined): Promise<Page> {
  const keep = Math.min(req.maxResults, Math.ceil(PAGE_BYTES / MIN_ENTRY_BYTES));
  const heap = new MaxHeap<FileEntry>(newestOrder);
  let more = false;
  const offer = (f: FileEntry) => {
    if (cursor && newestOrder(f, cursor) <= 0) return;
    heap.push(f);
    if (heap.size > keep) {
      heap.pop();
      more = true;
    }
  };
  const batched = batchable(req);
  let failed = false;
  let waiting: FileEntry[] = [];
  /** The batch sent last and not yet looked at: one is stat'ed while the walk gathers the next. */
  let inFlight: Promise<boolean> | undefined;
  const send = async (): Promise<boolean> => {
    const earlier = inFlight;
    const batch = waiting;
    waiting = [];
    inFlight = statBatch(batch, req).then((ok) => {
      if (ok) batch.forEach(offer);
      return ok;
    });
    return earlier === undefined || (await earlier);
  };
  const s = await walk(req.root, req.dir, req.walk, async (e) => {
    const f = listed(e, req.include);
    if (!f) return;
    if (!batched) return offer(withStat(f, e.stat, req.times));
    waiting.push(f);
    if (waiting.length >= NEWEST_BATCH && !(await send())) {
      failed = true;
      return false;
    }
  });
  // No batch could be had after all: the walk again, stat'ing as it goes.
  if (batched && (failed || !(await send()) || !(await inFlight)))
    return newestPage({ ...req, stats: undefined }, cursor);
  const sorted = heap.drainAscending();
  const budget = new ByteBudget();
  const files: FileEntry[] = [];
  for (const f of sorted) {
    if (!budget.take(entryBytes(f))) break;
    files.push(f);
  }
  if (files.length < sorted.length) more = true;
  const last = files[files.length - 1];
  return { files, more, cursor: last && `${last.modified ?? ''} ${last.path}`, depthLimited: s.depthLimited };
}
