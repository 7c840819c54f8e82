// The matcher's view of a file's lines under each fuzz tier: the normalised lines and a map from normalised
// line to its positions, both built lazily, once per tier per file. Searching picks the rarest line of the
// hunk as pivot, so a hunk costs (occurrences of that line × hunk length), never (file length × hunk length).

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
  positions: Map<string, number[]>;
}

const NONE: readonly number[] = [];

export class LineIndex {
  private readonly views: Array<TierView | undefined> = [];

  constructor(readonly lines: readonly string[]) {}

  get length(): number {
    return this.lines.length;
  }

  view(tier: Fuzz): TierView {
    let v = this.views[tier];
    if (!v) {
      const norm = tier === 0 ? this.lines : this.lines.map((l) => normalize(tier, l));
      const positions = new Map<string, number[]>();
      for (let i = 0; i < norm.length; i++) {
        const key = norm[i] as string;
        const list = positions.get(key);
        if (list) list.push(i);
        else positions.set(key, [i]);
      }
      v = { norm, positions };
      this.views[tier] = v;
    }
    return v;
  }

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

  /** Every start ≥ lo where `seq` matches under `tier`, ascending. `seq` must not be empty. */
  findAll(tier: Fuzz, seq: readonly string[], lo: number): number[] {
    const { norm } = this.view(tier);
    const want = seq.map((l) => normalize(tier, l));
    let pivot = -1;
    let pivotList: readonly number[] = NONE;
    for (let k = 0; k < want.length; k++) {
      const list = this.positionsOf(tier, want[k] as string);
      if (list.length === 0) return [];
      if (pivot < 0 || list.length < pivotList.length) {
        pivot = k;
        pivotList = list;
      }
    }
    const out: number[] = [];
    const last = norm.length - want.length;
    for (const p of pivotList) {
      const s = p - pivot;
      if (s < lo || s > last) continue;
      let k = 0;
      while (k < want.length && norm[s + k] === want[k]) k++;
      if (k === want.length) out.push(s);
    }
    return out;
  }

  /** First line ≥ from equal to `text` under some tier (tried in order), else -1. */
  findLine(text: string, from: number): { at: number; tier: Fuzz } | undefined {
    for (const tier of FUZZ_TIERS) {
      const list = this.positionsOf(tier, normalize(tier, text));
      const at = list.find((p) => p >= from);
      if (at !== undefined) return { at, tier };
    }
    return undefined;
  }
}
