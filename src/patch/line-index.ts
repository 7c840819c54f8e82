// The matcher's view of a file's lines under each fuzz tier. Per tier it builds, once and only when asked,
// the normalised lines joined by "\n" plus each line's start offset; a hunk is then found with the engine's
// native String#indexOf and a binary search, never by comparing lines one by one across the file. A map from
// line to positions exists only for the error path (nearest similar region).

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
  /** norm.join("\n"). */
  text: string;
  /** Offset in `text` where each line starts. */
  starts: Int32Array;
  positions?: Map<string, number[]>;
}

const NONE: readonly number[] = [];

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

  view(tier: Fuzz): TierView {
    let v = this.views[tier];
    if (!v) {
      const norm = tier === 0 ? this.lines : this.lines.map((l) => normalize(tier, l));
      const text = tier === 0 && this.joined !== undefined ? this.joined : norm.join('\n');
      const starts = new Int32Array(norm.length);
      for (let i = 0, at = 0; i < norm.length; i++) {
        starts[i] = at;
        at += (norm[i] as string).length + 1;
      }
      v = { norm, text, starts };
      this.views[tier] = v;
    }
    return v;
  }

  /** Positions of one normalised line (error path only: builds a map on first use). */
  positionsOf(tier: Fuzz, normalized: string): readonly number[] {
    const v = this.view(tier);
    if (!v.positions) {
      v.positions = new Map();
      for (let i = 0; i < v.norm.length; i++) {
        const key = v.norm[i] as string;
        const list = v.positions.get(key);
        if (list) list.push(i);
        else v.positions.set(key, [i]);
      }
    }
    return v.positions.get(normalized) ?? NONE;
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
    const needle = seq.map((l) => normalize(tier, l)).join('\n');
    if (needle === '') return this.findEmptyLines(v, lo, limit);
    const { text, starts } = v;
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

  /** A hunk whose old lines are a single empty line: indexOf("") would match at every offset. */
  private findEmptyLines(v: TierView, lo: number, limit: number): number[] {
    const out: number[] = [];
    for (let i = lo; i < v.norm.length && out.length < limit; i++) if (v.norm[i] === '') out.push(i);
    return out;
  }

  /** First line ≥ from equal to `text` under the lowest tier that has one. */
  findLine(text: string, from: number): { at: number; tier: Fuzz } | undefined {
    for (const tier of FUZZ_TIERS) {
      const [at] = this.findAll(tier, [text], from, 1);
      if (at !== undefined) return { at, tier };
    }
    return undefined;
  }
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
