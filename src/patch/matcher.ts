// Places every hunk of one file and builds the new document (docs/tools.md#editing-files, Matching). Old
// lines must match exactly one place, tried tier by tier (exact → trailing whitespace → surrounding
// whitespace → Unicode punctuation folded); `@@ anchor` takes the first match after the anchor line; failures
// are values carrying the contract's codes. Context lines keep the file's own text, so fuzz never rewrites
// them. Hunks come in file order, so each is first looked for after the previous hunk's place (as Codex's
// apply-patch does): one place there is the match, even if the same lines occur earlier too; only a hunk
// found nowhere after it is looked for in the whole file (hunks out of order, overlaps). Matching yields to
// the event loop between hunks (core/slice.ts), so a 10,000-hunk patch never holds it (docs/tools.md#limits).
import { TimeSlicer } from '../core/slice.js';
import { LineIndex, FUZZ_TIERS, foldPunctuation, type Fuzz } from './line-index.js';
import { cutNote, oneSearchAtATime, searchBudgets, searchCuts } from './search-budget.js';
import { nearestRegion } from './similar.js';
import { UTF8_BOM, type TextDoc } from './text-doc.js';
import { newLines, oldLines, type Hunk } from './types.js';

export interface Placement {
  hunk: Hunk;
  /** 0-based first old line in the file (or the insertion point). */
  start: number;
  oldLen: number;
  fuzz: Fuzz;
}

export type MatchCode =
  'PATCH_CONTEXT_NOT_FOUND' | 'PATCH_CONTEXT_AMBIGUOUS' | 'PATCH_HUNKS_OVERLAP' | 'PATCH_ALREADY_APPLIED';

export interface MatchFailure {
  code: MatchCode;
  message: string;
  /** 1-based patch line of the hunk at fault. */
  line: number;
  details: Record<string, unknown>;
  /** 1-based file lines worth re-reading before the next attempt. */
  reread?: { start_line: number; end_line: number };
}

export type MatchResult =
  { ok: true; placements: Placement[]; fuzz: Fuzz } | { ok: false; failure: MatchFailure };

const MAX_LISTED_MATCHES = 10;

export async function placeHunks(
  doc: TextDoc,
  hunks: readonly Hunk[],
  slicer = new TimeSlicer(),
): Promise<MatchResult> {
  const idx = new LineIndex(doc.lines, doc.joined);
  await idx.prepare(0, slicer);
  const placements: Placement[] = [];
  let cursor = 0;
  let fuzz: Fuzz = 0;
  for (let i = 0; i < hunks.length; i++) {
    await slicer.tick();
    const r = await placeOne(idx, hunks[i] as Hunk, i + 1, cursor, slicer);
    if ('code' in r) return { ok: false, failure: r };
    placements.push(r);
    cursor = r.start + r.oldLen;
    if (r.fuzz > fuzz) fuzz = r.fuzz;
  }
  await slicer.tick();
  const overlap = findOverlap(placements);
  if (overlap) return { ok: false, failure: overlap };
  return { ok: true, placements, fuzz };
}

async function placeOne(
  idx: LineIndex,
  h: Hunk,
  n: number,
  cursor: number,
  slicer: TimeSlicer,
): Promise<Placement | MatchFailure> {
  const old = oldLines(h);
  let lo = 0;
  if (h.anchor !== undefined) {
    const a = findAnchor(idx, h.anchor, cursor);
    if (a < 0) return anchorMissing(h, n);
    lo = a + 1;
  }
  if (old.length === 0) {
    const start = h.eof
      ? idx.length
      : h.anchor !== undefined
        ? lo
        : h.hint !== undefined
          ? Math.min(h.hint, idx.length)
          : idx.length;
    return { hunk: h, start, oldLen: 0, fuzz: 0 };
  }
  for (const tier of FUZZ_TIERS) {
    await idx.prepare(tier, slicer);
    // After the previous hunk first (unless an anchor already says where), then anywhere from `lo`.
    for (const from of h.anchor === undefined && cursor > lo ? [cursor, lo] : [lo]) {
      const found = candidates(idx, h, old, tier, from, h.anchor !== undefined ? 1 : 2);
      if (found.length === 0) continue;
      if (h.anchor !== undefined || found.length === 1)
        return { hunk: h, start: found[0] as number, oldLen: old.length, fuzz: tier };
      if (h.hint !== undefined && h.hint >= from && idx.matchesAt(tier, old, h.hint))
        return { hunk: h, start: h.hint, oldLen: old.length, fuzz: tier };
      return ambiguous(h, n, candidates(idx, h, old, tier, from));
    }
  }
  if (looksApplied(idx, h, lo)) {
    return {
      code: 'PATCH_ALREADY_APPLIED',
      message: `hunk ${n} (patch line ${h.line}) looks already applied: its old lines are absent and its new lines are present`,
      line: h.line,
      details: { hunk: n },
    };
  }
  return notFound(idx, h, n, old, lo);
}

function candidates(
  idx: LineIndex,
  h: Hunk,
  old: readonly string[],
  tier: Fuzz,
  lo: number,
  limit = Infinity,
): number[] {
  if (!h.eof) return idx.findAll(tier, old, lo, limit);
  // At the end of the file, or followed only by blank lines (models rarely copy trailing blank lines).
  for (let end = idx.length; end >= old.length; end--) {
    const start = end - old.length;
    if (start >= lo && idx.matchesAt(tier, old, start)) return [start];
    if ((idx.lines[end - 1] as string).trim() !== '') break;
  }
  return [];
}

/** The anchor line: first at/after the previous hunk, else the first anywhere, else a line containing it. */
function findAnchor(idx: LineIndex, anchor: string, cursor: number): number {
  const hit = idx.findLine(anchor, cursor) ?? idx.findLine(anchor, 0);
  if (hit) return hit.at;
  const want = foldPunctuation(anchor).trim();
  for (const from of [cursor, 0]) {
    for (let i = from; i < idx.length; i++) {
      if (foldPunctuation(idx.lines[i] as string).includes(want)) return i;
    }
  }
  return -1;
}

/** New lines present where old ones are missing. A pure deletion counts only with context on both sides. */
function looksApplied(idx: LineIndex, h: Hunk, lo: number): boolean {
  const added = h.lines.some((l) => l.kind === '+');
  const removed = h.lines.some((l) => l.kind === '-');
  if (!added && !removed) return false;
  if (!added && (h.lines[0]?.kind !== ' ' || h.lines[h.lines.length - 1]?.kind !== ' ')) return false;
  const want = newLines(h);
  if (want.length === 0) return false;
  return FUZZ_TIERS.some((tier) => candidates(idx, h, want, tier, lo, 1).length > 0);
}

function anchorMissing(h: Hunk, n: number): MatchFailure {
  return {
    code: 'PATCH_CONTEXT_NOT_FOUND',
    message: `hunk ${n} (patch line ${h.line}): the anchor line "@@ ${h.anchor}" was not found in the file`,
    line: h.line,
    details: { hunk: n, anchor: h.anchor },
  };
}

function ambiguous(h: Hunk, n: number, found: number[]): MatchFailure {
  const lines = found.slice(0, MAX_LISTED_MATCHES).map((s) => s + 1);
  return {
    code: 'PATCH_CONTEXT_AMBIGUOUS',
    message:
      `hunk ${n} (patch line ${h.line}) matches ${found.length} places (starting at lines ${lines.join(', ')}` +
      `${found.length > lines.length ? ', …' : ''}); add more context lines or an "@@ <line above the change>" anchor`,
    line: h.line,
    details: { hunk: n, match_count: found.length, match_lines: lines },
  };
}

async function notFound(
  idx: LineIndex,
  h: Hunk,
  n: number,
  old: readonly string[],
  lo: number,
): Promise<MatchFailure> {
  const budget = searchBudgets().region;
  const { region: near, cut } = await oneSearchAtATime(() => nearestRegion(idx, old, lo, budget));
  const chars = old.reduce((sum, l) => sum + l.length + 1, 0);
  const cuts = searchCuts(chars, cut);
  const where = h.eof
    ? ' at the end of the file (*** End of File)'
    : h.anchor !== undefined
      ? ` after the anchor "@@ ${h.anchor}"`
      : '';
  const expected = old.slice(0, 5);
  const details: Record<string, unknown> = { hunk: n, expected_lines: expected };
  let message = `hunk ${n} (patch line ${h.line}): its ${old.length} old line(s) were not found${where}`;
  let reread: MatchFailure['reread'];
  if (near) {
    details.nearest = { start_line: near.start + 1, equal_lines: near.equal, lines: near.lines };
    message += `; the most similar region starts at line ${near.start + 1} (${near.equal} of ${old.length} lines equal)`;
    reread = { start_line: Math.max(1, near.start - 2), end_line: near.start + Math.max(old.length, 1) + 3 };
  } else {
    message += cuts.length ? '; no similar region was found' : '; no similar region exists in the file';
  }
  message += cutNote(cuts, "the hunk's old lines", chars);
  if (cuts.length) details.search_cut = cuts;
  return { code: 'PATCH_CONTEXT_NOT_FOUND', message, line: h.line, details, reread };
}

function findOverlap(placements: readonly Placement[]): MatchFailure | undefined {
  const order = placements
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.start - b.p.start || a.p.oldLen - b.p.oldLen || a.i - b.i);
  for (let k = 1; k < order.length; k++) {
    const prev = order[k - 1] as { p: Placement; i: number };
    const cur = order[k] as { p: Placement; i: number };
    if (cur.p.start < prev.p.start + prev.p.oldLen) {
      const [a, b] = [prev, cur].sort((x, y) => x.i - y.i) as [typeof prev, typeof prev];
      return {
        code: 'PATCH_HUNKS_OVERLAP',
        message:
          `hunks ${a.i + 1} (patch line ${a.p.hunk.line}) and ${b.i + 1} (patch line ${b.p.hunk.line}) change overlapping ` +
          `lines (file lines ${cur.p.start + 1}-${prev.p.start + prev.p.oldLen}); merge them into one hunk`,
        line: b.p.hunk.line,
        details: { hunks: [a.i + 1, b.i + 1], file_line: cur.p.start + 1 },
      };
    }
  }
  return undefined;
}

const LF = Buffer.from('\n');
const CRLF = Buffer.from('\r\n');

/**
 * The file's new bytes: unchanged ranges are copied from the original buffer (never re-encoded), context
 * lines keep their own bytes and endings, added lines get the file's majority ending. Placements must not
 * overlap (placeHunks checks). The final-newline state changes only through `\ No newline` markers.
 */
export function renderPlacements(doc: TextDoc, placements: readonly Placement[]): Buffer {
  const order = [...placements].sort((a, b) => a.start - b.start || a.oldLen - b.oldLen);
  const { buf, byteStarts, lines } = doc;
  const n = lines.length;
  const added = doc.eolCrlf ? CRLF : LF;
  const pieces: Buffer[] = [];
  let pos = 0;
  let rawLast = -1;
  let finalNewline = doc.finalNewline;
  const copy = (to: number) => {
    if (to <= pos) return;
    pieces.push(buf.subarray(byteStarts[pos], byteStarts[to]));
    if (to === n && !doc.finalNewline) rawLast = pieces.length - 1;
    pos = to;
  };
  for (const p of order) {
    copy(p.start);
    for (const l of p.hunk.lines) {
      if (l.kind === '+') pieces.push(Buffer.from(l.text, 'utf8'), added);
      else if (l.kind === ' ') copy(pos + 1);
      else pos++;
    }
    const h = p.hunk;
    if (p.start + p.oldLen === n && (h.oldNoEol || h.newNoEol)) finalNewline = !h.newNoEol;
  }
  copy(n);
  // The old last line had no newline but is no longer last: it needs one now.
  const lastEol = doc.crlf[n - 1] ? CRLF : LF;
  if (rawLast >= 0 && rawLast !== pieces.length - 1) pieces.splice(rawLast + 1, 0, lastEol);
  return finishNewline(
    pieces,
    finalNewline,
    rawLast >= 0 && rawLast === pieces.length - 1 ? lastEol : added,
    doc.bom,
  );
}

function finishNewline(pieces: Buffer[], finalNewline: boolean, eol: Buffer, bom: boolean): Buffer {
  while (pieces.length > 0 && (pieces[pieces.length - 1] as Buffer).length === 0) pieces.pop();
  const last = pieces[pieces.length - 1];
  if (last) {
    const endsNl = last[last.length - 1] === 10;
    if (finalNewline && !endsNl) pieces.push(eol);
    if (!finalNewline && endsNl) {
      const cut = last.length >= 2 && last[last.length - 2] === 13 ? 2 : 1;
      pieces[pieces.length - 1] = last.subarray(0, last.length - cut);
    }
  }
  if (bom) pieces.unshift(UTF8_BOM);
  return Buffer.concat(pieces);
}
