// The "nearest similar region" for PATCH_CONTEXT_NOT_FOUND and EDIT_NOT_FOUND: where in the file the missing
// lines most probably were meant to go, so the model can re-read exactly those lines. Runs on the error path
// only, and is bounded (search-budget.ts): it compares at most MAX_COMPARED_CHARS of the missing lines, votes
// come from the line index, the fuzzy fallback scans a limited number of lines, and everything yields to the
// event loop and stops when the budget's time is up, answering the best start found by then.
import type { TimeSlicer } from '../core/slice.js';
import { normalize, type LineIndex } from './line-index.js';
import { comparedLines, type SearchCut } from './search-budget.js';

export interface Region {
  /** 0-based first line. */
  start: number;
  /** Old lines equal (under the loosest tier) to the file at this start. */
  equal: number;
  /** The file's lines there, shortened for the model. */
  lines: string[];
  /** Old lines compared (all of them unless the search was cut by size). */
  compared: number;
  /** Set when the search stopped early: the region is the best found within the limits. */
  cut?: SearchCut;
}

/** A search's answer: the region (if any line was similar enough) and why it stopped early, if it did. */
export interface RegionSearch {
  region?: Region;
  cut?: SearchCut;
}

/** Lines occurring more often than this carry no information about where a hunk belongs. */
const MAX_VOTING_OCCURRENCES = 64;
const MAX_FALLBACK_SCAN_LINES = 50_000;
const MIN_SIMILARITY = 0.5;
const MAX_REGION_LINES = 20;
const MAX_LINE_CHARS = 200;

export async function nearestRegion(
  idx: LineIndex,
  old: readonly string[],
  lo: number,
  budget: TimeSlicer,
): Promise<RegionSearch> {
  const n = idx.length;
  if (n === 0 || old.length === 0) return {};
  const compared = comparedLines(old);
  const sizeCut: SearchCut | undefined = compared.cut ? 'size' : undefined;
  await idx.prepare(3, budget);
  if (budget.expired) return { cut: 'time' };
  const want = compared.lines.map((l) => normalize(3, l));
  const votes = await byVotes(idx, want, lo, budget);
  const found = votes.start !== undefined ? votes : await bySimilarity(idx, want, lo, budget);
  const cut = votes.expired || found.expired ? 'time' : sizeCut;
  if (found.start === undefined) return { cut };
  const s = Math.min(Math.max(found.start, 0), n - 1);
  const norm = idx.view(3).norm;
  let equal = 0;
  for (let k = 0; k < want.length; k++) if (norm[s + k] === want[k]) equal++;
  const lines = idx.lines
    .slice(s, s + Math.min(Math.max(old.length, 1), MAX_REGION_LINES))
    .map((l) => (l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) + '…' : l));
  return { region: { start: s, equal, lines, compared: want.length, cut }, cut };
}

/** A start line found so far, and whether the budget ran out before the search was complete. */
interface Found {
  start?: number;
  expired: boolean;
}

/** The start position that the most distinctive old lines agree on. */
async function byVotes(
  idx: LineIndex,
  want: readonly string[],
  lo: number,
  budget: TimeSlicer,
): Promise<Found> {
  const votes = new Map<number, number>();
  let expired = false;
  for (let k = 0; k < want.length; k++) {
    if (budget.due) {
      await budget.tick();
      if ((expired = budget.expired)) break;
    }
    const w = want[k] as string;
    if (w === '') continue;
    const list = idx.positionsOf(3, w);
    if (list.length > MAX_VOTING_OCCURRENCES) continue;
    for (const p of list) {
      if (p < lo) continue;
      votes.set(p - k, (votes.get(p - k) ?? 0) + 1);
    }
  }
  let best: number | undefined;
  let bestVotes = 0;
  for (const [s, v] of votes) {
    if (v > bestVotes || (v === bestVotes && best !== undefined && s < best)) {
      best = s;
      bestVotes = v;
    }
  }
  return { start: best, expired };
}

/** No old line occurs verbatim: the file line most similar (bigram Dice) to the longest old line. */
async function bySimilarity(
  idx: LineIndex,
  want: readonly string[],
  lo: number,
  budget: TimeSlicer,
): Promise<Found> {
  let k = 0;
  for (let j = 1; j < want.length; j++) if ((want[j] as string).length > (want[k] as string).length) k = j;
  const target = want[k] as string;
  if (target.length < 2) return { expired: false };
  const grams = bigrams(target);
  const norm = idx.view(3).norm;
  const end = Math.min(norm.length, lo + MAX_FALLBACK_SCAN_LINES);
  let best: number | undefined;
  let bestScore = MIN_SIMILARITY;
  for (let p = lo; p < end; p++) {
    if (budget.due) {
      await budget.tick();
      if (budget.expired) return { start: best, expired: true };
    }
    const line = norm[p] as string;
    if (line.length < target.length / 2 || line.length > target.length * 2) continue;
    const score = dice(grams, target.length - 1, line);
    if (score > bestScore) {
      bestScore = score;
      best = p - k;
    }
  }
  return { start: best, expired: false };
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(grams: Map<string, number>, count: number, line: string): number {
  const left = new Map(grams);
  let common = 0;
  for (let i = 0; i + 1 < line.length; i++) {
    const g = line.slice(i, i + 2);
    const c = left.get(g);
    if (c) {
      common++;
      left.set(g, c - 1);
    }
  }
  return (2 * common) / (count + Math.max(line.length - 1, 0));
}
