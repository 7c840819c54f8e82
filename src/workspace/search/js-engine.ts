// The JS engine: used only where no ripgrep binary exists at all, built to return what the ripgrep engine
// returns (same walker rules and depth limit, smart case, per-line matching, binary files skipped, the same
// pages). Bounded (docs/tools.md#limits): files are read in chunks and matched line by line in path order
// (the walk's order), the event loop is yielded to every few milliseconds, matching is linear time
// (js-regex.ts), and a time budget ends the search with `truncated` and a note, continuing exactly where it
// stopped.
import { closeSync, readSync } from 'node:fs';
import { TimeSlicer } from '../../core/slice.js';
import { openRegular } from '../confined-fs.js';
import type { WorkspaceRoot } from '../paths.js';
import { codePointLength, truncateUtf8 } from '../text.js';
import { walk } from '../walk.js';
import { FileMatches } from './file-matches.js';
import { compileQuery, type LineMatcher } from './js-regex.js';
import { MatchPage, type PageResult } from './match-page.js';
import type { SearchCursor, SearchRequest } from './types.js';

/** Total time one JS-engine search may take (ripgrep's own limit is its timeout). */
export const JS_SEARCH_BUDGET_MS = 20_000;
const CHUNK_BYTES = 64 * 1024;
/** Lines are matched on their first this many bytes (a regex on a multi-megabyte line holds the loop). */
export const JS_MAX_LINE_BYTES = 256 * 1024;

/** 'stop': the page wants no more (the count passed its cap); 'expired': the time budget ran out in it. */
type FileEnd = 'done' | 'stop' | 'expired';

interface Scan {
  root: WorkspaceRoot;
  re: LineMatcher;
  req: SearchRequest;
  page: MatchPage;
  slicer: TimeSlicer;
}

/**
 * Searches one file line by line. `upTo`: every match up to this line was offered (what a cursor may continue
 * after): the last line, or when the budget ran out part-way, the last line whose context was complete.
 */
async function searchFile(s: Scan, abs: string, rel: string): Promise<{ end: FileEnd; upTo: number }> {
  let fd: number;
  try {
    fd = openRegular(s.root.real, abs).fd;
  } catch {
    return { end: 'done', upTo: 0 };
  }
  const fm = new FileMatches(rel, s.req.contextLines, s.page);
  const all = s.req.contextLines > 0;
  const cut = (t: string) => truncateUtf8(t, s.req.maxPreviewBytes).text;
  let no = 0;
  const onLine = (bytes: Buffer): boolean => {
    no++;
    let line = bytes.toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const at = s.page.wanted(rel, no) || all ? s.re(line) : -1;
    if (at < 0 && !all) return true;
    return fm.line(no, cut(line), at < 0 ? undefined : codePointLength(line.slice(0, at)) + 1);
  };
  try {
    const r = await readLines(fd, s.slicer, onLine);
    if (r === 'expired') return { end: 'expired', upTo: Math.max(0, no - s.req.contextLines - 1) };
    if (r === 'stop' || !fm.end()) return { end: 'stop', upTo: no };
    return { end: 'done', upTo: no };
  } finally {
    closeSync(fd);
  }
}

/**
 * Feeds the file's lines (without "\n") to `onLine`. A NUL in the first chunk makes the file binary (skipped);
 * a NUL later stops it there (as ripgrep stops a file that turns out binary). Long lines are cut at
 * JS_MAX_LINE_BYTES.
 */
async function readLines(
  fd: number,
  slicer: TimeSlicer,
  onLine: (b: Buffer) => boolean,
): Promise<'done' | 'stop' | 'binary' | 'expired'> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let partial: Buffer[] = [];
  let partialBytes = 0;
  for (let pos = 0; ;) {
    const n = readSync(fd, chunk, 0, CHUNK_BYTES, pos);
    if (n === 0) break;
    const data = chunk.subarray(0, n);
    const nul = data.indexOf(0);
    if (nul >= 0 && pos === 0) return 'binary';
    const usable = nul >= 0 ? data.subarray(0, nul) : data;
    let start = 0;
    for (let nl = usable.indexOf(10); nl !== -1; nl = usable.indexOf(10, start)) {
      const piece = usable.subarray(start, nl);
      const line = partial.length ? Buffer.concat([...partial, piece]) : piece;
      partial = [];
      partialBytes = 0;
      if (!onLine(line.subarray(0, JS_MAX_LINE_BYTES))) return 'stop';
      start = nl + 1;
    }
    if (nul >= 0) return 'done';
    if (start < usable.length && partialBytes < JS_MAX_LINE_BYTES) {
      partial.push(Buffer.from(usable.subarray(start)));
      partialBytes += usable.length - start;
    }
    pos += n;
    await slicer.tick();
    if (slicer.expired) return 'expired';
  }
  if (partial.length && !onLine(Buffer.concat(partial).subarray(0, JS_MAX_LINE_BYTES))) return 'stop';
  return 'done';
}

export async function searchJs(root: WorkspaceRoot, req: SearchRequest): Promise<PageResult> {
  const slicer = new TimeSlicer(JS_SEARCH_BUDGET_MS);
  const page = new MatchPage(req);
  const s: Scan = { root, re: compileQuery(req), req, page, slicer };
  let done: SearchCursor | undefined;
  let end: FileEnd = 'done';
  const file = async (abs: string, rel: string) => {
    const r = await searchFile(s, abs, rel);
    end = r.end;
    if (r.end !== 'stop' && (r.end === 'done' || r.upTo > 0)) done = { path: rel, line: Math.max(r.upTo, 1) };
    return r.end === 'done';
  };
  if (req.baseIsFile) await file(req.baseReal, req.baseRel);
  else {
    const w = await walk(
      root,
      { abs: req.baseAbs, real: req.baseReal, rel: req.baseRel },
      {
        includeHidden: req.includeHidden,
        includeIgnored: req.includeIgnored,
        exclude: req.exclude,
        from: req.after?.path,
        slicer,
      },
      (e) => (e.type === 'file' && (!req.include || req.include(e.relBase)) ? file(e.abs, e.rel) : undefined),
    );
    if (w.expired) end = 'expired';
  }
  if (end !== 'expired') return page.finish('js');
  const note = `the search stopped after its ${JS_SEARCH_BUDGET_MS / 1000} s budget; next_action continues it`;
  const at = done ?? req.after;
  return page.finish('js', { stoppedAt: at, incomplete: !at, note });
}
