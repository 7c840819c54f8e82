// The text side of edit_file (docs/tools.md#editing-files): a file as one string, the way a model quotes it
// (no BOM, each line ending as "\n", the final newline kept), every place old_string occurs in it, the near
// misses that differ only in whitespace, line endings or typographic punctuation, and the new bytes, spliced
// from the original buffer so everything outside the replaced ranges keeps its exact bytes. Pure: no file
// access.
import type { TimeSlicer } from '../core/slice.js';
import { foldPunctuation } from './line-index.js';
import { MAX_COMPARED_CHARS, type SearchCut } from './search-budget.js';
import type { TextDoc } from './text-doc.js';

/** A file's text as edit_file matches it, and where each line starts in it. */
export interface EditView {
  doc: TextDoc;
  /** doc.lines joined by "\n", plus the final "\n" when the file has one. */
  text: string;
  /** Offset in `text` where each line starts; lines.length + 1 entries, the last is text.length. */
  starts: Int32Array;
}

export function viewOf(doc: TextDoc): EditView {
  const n = doc.lines.length;
  const text = n > 0 && doc.finalNewline ? doc.joined + '\n' : doc.joined;
  const starts = new Int32Array(n + 1);
  for (let i = 0, at = 0; i < n; i++) {
    starts[i] = at;
    at += (doc.lines[i] as string).length + 1;
  }
  starts[n] = text.length;
  return { doc, text, starts };
}

/** 0-based line of `offset` in the view (an offset at a line's "\n" belongs to that line). */
export function lineOf(v: EditView, offset: number): number {
  let lo = 0;
  let hi = v.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((v.starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The most places one edit_file call replaces (or counts): past it, a sed through exec_command fits better. */
export const MAX_REPLACEMENTS = 100_000;

/**
 * Where `needle` (not empty) occurs in `text`, ascending, at most `limit` places. `overlapping`: every start,
 * so "aa" in "aaa" is two places (a single replacement must be unambiguous); otherwise left to right without
 * overlaps, as replace_all replaces them.
 */
export function occurrences(
  text: string,
  needle: string,
  overlapping: boolean,
  limit = MAX_REPLACEMENTS + 1,
): number[] {
  const out: number[] = [];
  const step = overlapping ? 1 : needle.length;
  for (let at = text.indexOf(needle); at !== -1 && out.length < limit; at = text.indexOf(needle, at + step))
    out.push(at);
  return out;
}

/** A model's line breaks as the view has them: "\r\n" → "\n" (a lone "\r" is an ordinary character). */
export function lfOnly(s: string): string {
  return s.includes('\r\n') ? s.replace(/\r\n/g, '\n') : s;
}

/** Byte offset in doc.buf of a view offset. */
function byteAt(v: EditView, offset: number): number {
  const line = lineOf(v, offset);
  const base = v.doc.byteStarts[line] as number;
  if (line >= v.doc.lines.length) return base;
  const col = offset - (v.starts[line] as number);
  return base + Buffer.byteLength((v.doc.lines[line] as string).slice(0, col), 'utf8');
}

/**
 * The new file: bytes outside the replaced ranges copied from the original (BOM, each line's own ending, the
 * final-newline state), and each replacement encoded with the file's majority line ending, as apply_patch
 * encodes added lines. `hits` ascend and do not overlap.
 */
export function renderEdit(
  v: EditView,
  hits: readonly number[],
  oldLen: number,
  replacement: string,
): Buffer {
  const eol = v.doc.eolCrlf ? '\r\n' : '\n';
  const middle = Buffer.from(eol === '\n' ? replacement : replacement.replace(/\n/g, eol), 'utf8');
  const pieces: Buffer[] = [];
  let pos = 0;
  for (const h of hits) {
    const from = byteAt(v, h);
    pieces.push(v.doc.buf.subarray(pos, from), middle);
    pos = byteAt(v, h + oldLen);
  }
  pieces.push(v.doc.buf.subarray(pos));
  return Buffer.concat(pieces);
}

/**
 * Lines added and removed, as a diff would count them: the whole lines each replacement touches (replacements
 * on one line counted once), minus the lines that stay equal at either end.
 */
export function lineTotals(
  v: EditView,
  hits: readonly number[],
  oldLen: number,
  replacement: string,
): { additions: number; removals: number } {
  let additions = 0;
  let removals = 0;
  const lineEnd = (line: number) =>
    line >= v.doc.lines.length
      ? v.text.length
      : (v.starts[line] as number) + (v.doc.lines[line] as string).length;
  for (let i = 0; i < hits.length;) {
    const from = v.starts[lineOf(v, hits[i] as number)] as number;
    let to = lineEnd(lineOf(v, (hits[i] as number) + oldLen));
    let j = i + 1;
    while (j < hits.length && (hits[j] as number) <= to) {
      to = Math.max(to, lineEnd(lineOf(v, (hits[j] as number) + oldLen)));
      j++;
    }
    let after = '';
    let pos = from;
    for (let k = i; k < j; k++) {
      after += v.text.slice(pos, hits[k]) + replacement;
      pos = (hits[k] as number) + oldLen;
    }
    after += v.text.slice(pos, to);
    const d = changedLines(v.text.slice(from, to).split('\n'), after.split('\n'));
    additions += d.additions;
    removals += d.removals;
    i = j;
  }
  return { additions, removals };
}

function changedLines(a: readonly string[], b: readonly string[]): { additions: number; removals: number } {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  return { additions: b.length - head - tail, removals: a.length - head - tail };
}

/** Lines of a new file's text (a final "\n" ends the last line, it does not start another). */
export function countLines(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

// ---- near misses (EDIT_NOT_FOUND) ----

/**
 * What a near miss ignored, loosest last; each tier also ignores what the ones before it do: trailing
 * whitespace, then indentation too, then "\r\n" or "\r" against "\n", then typographic dashes, quotes and
 * spaces (the tiers apply_patch's matcher tries, plus line endings, which it needs not: patch lines carry none).
 */
export const NEAR_MISS_KINDS = ['trailing_whitespace', 'whitespace', 'line_endings', 'punctuation'] as const;
export type NearMissKind = (typeof NEAR_MISS_KINDS)[number];

export const NEAR_MISS_NAMES: Record<NearMissKind, string> = {
  trailing_whitespace: 'trailing whitespace',
  whitespace: 'indentation or other whitespace at the start or end of lines',
  line_endings: 'line endings (and whitespace at line ends)',
  punctuation: 'typographic quotes, dashes or spaces (and whitespace)',
};

/** Near misses are looked for in files up to this many characters (the error path builds offset maps). */
export const MAX_NEAR_MISS_CHARS = 4 * 1024 * 1024;

export interface NearMiss {
  kind: NearMissKind;
  /** View offsets of each near match (bounded by the caller's listing). */
  starts: number[];
  /** The file's own text at the near match, when every near match is the same text: old_string to send. */
  candidate?: string;
}

/** The text with each tier's differences removed, and for each character kept where it came from. */
interface Folded {
  text: string;
  from: Int32Array;
}

const SPACE = /[^\S\r\n]/;
const LF = 10;
const CR = 13;
/** Characters folded between two looks at the budget. */
const FOLD_BATCH = 64 * 1024;

/** Whitespace other than line breaks (JavaScript's \s without "\n" and "\r"). */
function isSpace(c: number): boolean {
  if (c === 32 || c === 9) return true;
  if (c < 0x80) return c === 11 || c === 12;
  return SPACE.test(String.fromCharCode(c));
}

function foldCode(c: number): number {
  return c < 0x80 ? c : foldPunctuation(String.fromCharCode(c)).charCodeAt(0);
}

/** End (exclusive) in `s` of the folded character at `k`: a "\r\n" break folded to "\n" spans two. */
function foldedEnd(s: string, f: Folded, k: number): number {
  const at = f.from[k] as number;
  const crlf = f.text.charCodeAt(k) === LF && s.charCodeAt(at) === CR && s.charCodeAt(at + 1) === LF;
  return at + (crlf ? 2 : 1);
}

/** Folds `s` for `tier`, pausing (yield) after about every FOLD_BATCH characters; the result goes to `out`. */
function* folding(s: string, tier: number, out: { folded?: Folded }): Generator<void> {
  const crAsBreak = tier >= 2;
  const codes = new Uint16Array(s.length);
  const from = new Int32Array(s.length);
  let n = 0;
  let work = 0;
  for (let i = 0; i <= s.length;) {
    // One line, [i, end), then its break, [end, next).
    let end = i;
    for (let c = s.charCodeAt(end); end < s.length && c !== LF && !(crAsBreak && c === CR);)
      c = s.charCodeAt(++end);
    let a = i;
    let b = end;
    if (tier >= 1) while (a < b && isSpace(s.charCodeAt(a))) a++;
    while (b > a && isSpace(s.charCodeAt(b - 1))) b--;
    for (let k = a; k < b; k++, n++) {
      codes[n] = tier >= 3 ? foldCode(s.charCodeAt(k)) : s.charCodeAt(k);
      from[n] = k;
    }
    if ((work += end - i + 1) >= FOLD_BATCH) {
      work = 0;
      yield;
    }
    if (end >= s.length) break;
    const next = s.charCodeAt(end) === CR && s.charCodeAt(end + 1) === LF ? end + 2 : end + 1;
    codes[n] = LF;
    from[n++] = end;
    i = next;
  }
  let text = '';
  for (let k = 0; k < n; k += 8192) {
    text += String.fromCharCode(...codes.subarray(k, Math.min(n, k + 8192)));
    if (k % FOLD_BATCH === 0) yield;
  }
  out.folded = { text, from: from.subarray(0, n) };
}

/** `s` folded for `tier`, yielding to the event loop as it goes; undefined when the budget ran out first. */
async function fold(s: string, tier: number, budget: TimeSlicer): Promise<Folded | undefined> {
  const out: { folded?: Folded } = {};
  for (const _ of folding(s, tier, out)) {
    if (!budget.due) continue;
    await budget.tick();
    if (budget.expired) return undefined;
  }
  return out.folded;
}

/** What the near-miss search found, or why it stopped before it could say (search-budget.ts). */
export interface NearMissSearch {
  near?: NearMiss;
  cut?: SearchCut;
}

/**
 * The loosest-first search for what old_string was probably meant to be: the first tier under which it occurs
 * in the file. The candidate is widened to whole leading or trailing whitespace runs when old_string had some
 * there, and offered only when it is the file's exact text of every near match and occurs exactly that often.
 * An old_string longer than MAX_COMPARED_CHARS is not looked for (cut: 'size'); a search out of time stops
 * (cut: 'time').
 */
export async function findNearMiss(
  v: EditView,
  old: string,
  replaceAll: boolean,
  budget: TimeSlicer,
): Promise<NearMissSearch> {
  if (v.text.length > MAX_NEAR_MISS_CHARS) return {};
  if (old.length > MAX_COMPARED_CHARS) return { cut: 'size' };
  for (let tier = 0; tier < NEAR_MISS_KINDS.length; tier++) {
    const needle = await fold(old, tier, budget);
    if (needle?.text === '') return {};
    const hay = needle && (await fold(v.text, tier, budget));
    if (!needle || !hay) return { cut: 'time' };
    const found = occurrences(hay.text, needle.text, !replaceAll);
    if (found.length === 0) continue;
    return { near: nearMissAt(v, old, replaceAll, tier, { needle, hay, found }) };
  }
  return {};
}

/** The near miss of `tier` from where the folded needle occurs in the folded file. */
function nearMissAt(
  v: EditView,
  old: string,
  replaceAll: boolean,
  tier: number,
  m: { needle: Folded; hay: Folded; found: number[] },
): NearMiss {
  const { needle, hay, found } = m;
  const leading = (needle.from[0] as number) > 0;
  const trailing = foldedEnd(old, needle, needle.text.length - 1) < old.length;
  const spans = found.map((at) =>
    widen(
      v.text,
      hay.from[at] as number,
      foldedEnd(v.text, hay, at + needle.text.length - 1),
      leading,
      trailing,
    ),
  );
  const texts = new Set(spans.map(([a, b]) => v.text.slice(a, b)));
  const kind = NEAR_MISS_KINDS[tier] as NearMissKind;
  const starts = spans.map(([a]) => a);
  const [only] = texts;
  if (texts.size !== 1 || only === undefined || (!replaceAll && found.length > 1)) return { kind, starts };
  const exact = occurrences(v.text, only, !replaceAll, found.length + 1).length;
  return exact === found.length ? { kind, starts, candidate: only } : { kind, starts };
}

function widen(text: string, a: number, b: number, leading: boolean, trailing: boolean): [number, number] {
  if (leading) while (a > 0 && isSpace(text.charCodeAt(a - 1))) a--;
  if (trailing) while (b < text.length && isSpace(text.charCodeAt(b))) b++;
  return [a, b];
}
