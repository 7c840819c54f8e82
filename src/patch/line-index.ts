// The matcher's view of a file's lines under each fuzz tier. Per tier it builds, once and only when asked (in
// slices that yield to the event loop: `prepare`), the normalised lines and a map from each line to where it
// occurs. A hunk is then found from the positions of its rarest line, each checked in place, so finding every
// hunk of a 10,000-hunk patch costs about its own size, not 10,000 scans of the file; where every line of a
// hunk is common, the engine's native String#indexOf over the lines joined by "\n" is used instead.
import type { TimeSlicer } from '../core/slice.js';

/** 0 exact · 1 trailing whitespace ignored · 2 surrounding whitespace ignored · 3 Unicode punctuation folded. */
export type Fuzz = 0 | 1 | 2 | 3;
export const FUZZ_TIERS: readonly Fuzz[] = [0, 1, 2, 3];
export const FUZZ_NAMES = [
  'exact',
  'trailing whitespace ignored',
  'surrounding whitespace ignored',
  'Unicode dashes, quotes and spaces folded',
] as const;

const DASHES = /[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]/g;
const SINGLE_QUOTES = /[\u2018-\u201b\u2032\u2035\uff07]/g;
const DOUBLE_QUOTES = /[\u201c-\u201f\u2033\u2036\uff02]/g;
const SPACES = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/g;
const NON_ASCII = /[\u0080-\uffff]/;

/** Folds typographic dashes, quotes and spaces to their ASCII forms (what models often type instead). */
export function foldPunctuation(s: string): string {
  if (!NON_ASCII.test(s)) return s;
  return s.replace(DASHES, '-').replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"').replace(SPACES, ' ');
}

export function normalize(tier: Fuzz, s: string): string {
  switch (tier) {
    case 0:
      return s;
    case 1:
      return s.trimEnd();
    case 2:
      return s.trim();
    case 3:
      return foldPunctuation(s).trim();
  }
}

interface TierView {
  norm: readonly string[];
  /** Every position of each normalised line, ascending. */
  positions: Map<string, number[]>;
  /** norm.join("\n") and where each line starts in it: built only for hunks made of common lines. */
  text?: string;
  starts?: Int32Array;
}

const NONE: readonly number[] = [];
/** Lines normalised or indexed between two ticks of a slicer. */
const PREPARE_BATCH = 2048;
/** A hunk whose rarest line occurs more often than this is searched with indexOf instead. */
const MAX_CANDIDATES = 4096;

export class LineIndex {
  private readonly views: Array<TierView | undefined> = [];

  /** `joined`, when the caller has it already, must equal lines.join("\n"). */
  constructor(
    readonly lines: readonly string[],
    private readonly joined?: string,
  ) {}

  get length(): number {
    return this.lines.length;
  }

  /** Builds the view of `tier` in slices (a file of millions of lines would hold the event loop otherwise). */
  async prepare(tier: Fuzz, slicer: TimeSlicer): Promise<void> {
    for (const _ of this.build(tier)) await slicer.tick();
  }

  view(tier: Fuzz): TierView {
    for (const _ of this.build(tier));
    return this.views[tier] as TierView;
  }

  /** Builds the view of `tier` (once), pausing after every PREPARE_BATCH lines. */
  private *build(tier: Fuzz): Generator<void> {
    if (this.views[tier]) return;
    const n = this.lines.length;
    const norm: string[] = tier === 0 ? (this.lines as string[]) : new Array<string>(n);
    const positions = new Map<string, number[]>();
    for (let i = 0; i < n; i++) {
      const key = tier === 0 ? (this.lines[i] as string) : normalize(tier, this.lines[i] as string);
      norm[i] = key;
      const list = positions.get(key);
      if (list) list.push(i);
      else positions.set(key, [i]);
      if (i % PREPARE_BATCH === PREPARE_BATCH - 1) yield;
    }
    this.views[tier] ??= { norm, positions };
  }

  /** Positions of one normalised line. */
  positionsOf(tier: Fuzz, normalized: string): readonly number[] {
    return this.view(tier).positions.get(normalized) ?? NONE;
  }

  /** Does `seq` (raw patch lines) match the file at `start` under `tier`? */
  matchesAt(tier: Fuzz, seq: readonly string[], start: number): boolean {
    if (start < 0 || start + seq.length > this.lines.length) return false;
    const norm = this.view(tier).norm;
    for (let k = 0; k < seq.length; k++) {
      if (norm[start + k] !== normalize(tier, seq[k] as string)) return false;
    }
    return true;
  }

  /** Every start line ≥ lo where `seq` matches under `tier`, ascending (at most `limit`). `seq` is not empty. */
  findAll(tier: Fuzz, seq: readonly string[], lo: number, limit = Infinity): number[] {
    const v = this.view(tier);
    const n = v.norm.length;
    const out: number[] = [];
    if (lo >= n || seq.length > n - lo) return out;
    const want = seq.map((l) => normalize(tier, l));
    let rarest = 0;
    let fewest = NONE;
    for (let k = 0; k < want.length; k++) {
      const list = v.positions.get(want[k] as string) ?? NONE;
      if (k === 0 || list.length < fewest.length) [rarest, fewest] = [k, list];
      if (list.length === 0) return out;
    }
    if (fewest.length > MAX_CANDIDATES) return this.scan(v, want, lo, limit);
    for (let i = firstAtLeast(fewest, lo + rarest); i < fewest.length && out.length < limit; i++) {
      const start = (fewest[i] as number) - rarest;
      if (start + want.length > n) break;
      let k = 0;
      while (k < want.length && v.norm[start + k] === want[k]) k++;
      if (k === want.length) out.push(start);
    }
    return out;
  }

  /** findAll by String#indexOf over the joined lines: for hunks whose every line is common. */
  private scan(v: TierView, want: readonly string[], lo: number, limit: number): number[] {
    if (!v.text || !v.starts) {
      v.text = v.norm === this.lines && this.joined !== undefined ? this.joined : v.norm.join('\n');
      v.starts = new Int32Array(v.norm.length);
      for (let i = 0, at = 0; i < v.norm.length; i++) {
        v.starts[i] = at;
        at += (v.norm[i] as string).length + 1;
      }
    }
    const { text, starts } = v;
    const needle = want.join('\n');
    const out: number[] = [];
    if (needle === '') {
      for (let i = lo; i < v.norm.length && out.length < limit; i++) if (v.norm[i] === '') out.push(i);
      return out;
    }
    for (
      let at = text.indexOf(needle, starts[lo]);
      at !== -1 && out.length < limit;
      at = text.indexOf(needle, at + 1)
    ) {
      const end = at + needle.length;
      if (at !== 0 && text.charCodeAt(at - 1) !== 10) continue;
      if (end !== text.length && text.charCodeAt(end) !== 10) continue;
      out.push(lineAt(starts, at));
    }
    return out;
  }

  /** First line ≥ from equal to `text` under the lowest tier that has one. */
  findLine(text: string, from: number): { at: number; tier: Fuzz } | undefined {
    for (const tier of FUZZ_TIERS) {
      const list = this.positionsOf(tier, normalize(tier, text));
      const i = firstAtLeast(list, from);
      if (i < list.length) return { at: list[i] as number, tier };
    }
    return undefined;
  }
}

/** Index of the first element ≥ x in an ascending list. */
function firstAtLeast(list: readonly number[], x: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The line whose start offset is `offset` (binary search; `offset` is known to be a line start). */
function lineAt(starts: Int32Array, offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
