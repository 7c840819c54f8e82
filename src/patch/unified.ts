// Unified diffs as `git diff` (or `diff -u`) prints them, turned into the same operations as the envelope:
// `diff --git` headers (new/deleted file, rename from/to; mode-only changes are ignored), `--- a/` `+++ b/`
// with /dev/null for add/delete, C-quoted paths, `@@ -l,n +l,n @@` hunks, `\ No newline at end of file`.
// Hunk counts are used to disambiguate, not enforced: hand-written diffs often get them wrong.
import { hintFromRange, isBlank, ParseFailure, quote, UNIFIED_RANGE } from './parse-common.js';
import { isNoEolMarker, type Hunk, type PatchOp } from './types.js';

interface GitHeader {
  line: number;
  paths?: [string, string];
  isNew: boolean;
  isDelete: boolean;
  renameFrom?: string;
  renameTo?: string;
  renameLine?: number;
}

const IGNORED_HEADERS = ['index ', 'old mode ', 'new mode ', 'similarity index ', 'dissimilarity index '];

export function parseUnified(lines: string[], start: number, end: number): PatchOp[] {
  return new UnifiedParser(lines, start, end).run();
}

class UnifiedParser {
  private i: number;

  constructor(
    private readonly lines: string[],
    start: number,
    private readonly end: number,
  ) {
    this.i = start;
  }

  private at(i = this.i): string {
    return (this.lines[i] as string | undefined) ?? '';
  }

  private fileHeaderAt(i: number): boolean {
    return this.at(i).startsWith('--- ') && this.at(i + 1).startsWith('+++ ') && i + 1 < this.end;
  }

  run(): PatchOp[] {
    const ops: PatchOp[] = [];
    const first = this.i + 1;
    while (this.i < this.end) {
      const raw = this.at();
      if (isBlank(raw)) this.i++;
      else if (raw.startsWith('diff --git ')) ops.push(...this.gitFile());
      else if (raw.startsWith('Index: ')) {
        this.i++;
        if (this.at().startsWith('====')) this.i++;
      } else if (this.fileHeaderAt(this.i)) ops.push(...this.fileSection(undefined));
      else {
        throw new ParseFailure(
          this.i + 1,
          `expected "diff --git", "--- a/PATH" followed by "+++ b/PATH", or "@@", got ${quote(raw)}`,
        );
      }
    }
    if (ops.length === 0)
      throw new ParseFailure(first, 'the diff contains no changes that apply_patch can make');
    return ops;
  }

  private gitFile(): PatchOp[] {
    const h: GitHeader = { line: this.i + 1, isNew: false, isDelete: false };
    h.paths = gitHeaderPaths(this.at().slice('diff --git '.length));
    for (this.i++; this.i < this.end; this.i++) {
      const raw = this.at();
      if (raw.startsWith('@@') || raw.startsWith('diff --git ') || this.fileHeaderAt(this.i)) break;
      if (raw.startsWith('new file mode')) h.isNew = true;
      else if (raw.startsWith('deleted file mode')) h.isDelete = true;
      else if (raw.startsWith('rename from ')) h.renameFrom = diffPath(raw.slice(12), '', this.i + 1);
      else if (raw.startsWith('rename to ')) {
        h.renameTo = diffPath(raw.slice(10), '', this.i + 1);
        h.renameLine = this.i + 1;
      } else if (raw.startsWith('copy from ') || raw.startsWith('copy to ')) {
        throw new ParseFailure(
          this.i + 1,
          'copies are not supported; use "*** Add File:" with the full content',
        );
      } else if (raw.startsWith('Binary files ') || raw.startsWith('GIT binary patch')) {
        throw new ParseFailure(
          this.i + 1,
          'binary diffs are not supported; apply_patch changes text files only',
        );
      } else if (!isBlank(raw) && !IGNORED_HEADERS.some((p) => raw.startsWith(p))) {
        throw new ParseFailure(this.i + 1, `unexpected line in a "diff --git" header: ${quote(raw)}`);
      }
    }
    if (this.fileHeaderAt(this.i)) return this.fileSection(h);
    if (this.at().startsWith('@@'))
      throw new ParseFailure(this.i + 1, 'a hunk needs "--- a/PATH" and "+++ b/PATH" before it');
    return this.headerOnly(h);
  }

  /** A git section without ---/+++: a pure rename, an empty file added or deleted, or a mode change. */
  private headerOnly(h: GitHeader): PatchOp[] {
    if (h.renameFrom !== undefined && h.renameTo !== undefined) {
      return [
        {
          kind: 'update',
          path: h.renameFrom,
          line: h.line,
          moveTo: h.renameTo,
          moveLine: h.renameLine,
          hunks: [],
        },
      ];
    }
    if (!h.isNew && !h.isDelete) return [];
    if (!h.paths)
      throw new ParseFailure(
        h.line,
        'cannot read the file path from this "diff --git" line; quote it or use ---/+++',
      );
    if (h.isNew) return [{ kind: 'add', path: h.paths[1], line: h.line, lines: [], noEol: false }];
    return [{ kind: 'delete', path: h.paths[0], line: h.line }];
  }

  private fileSection(h: GitHeader | undefined): PatchOp[] {
    const headerLine = this.i + 1;
    const line = h?.line ?? headerLine;
    const oldPath = diffPath(this.at().slice(4), 'a/', headerLine);
    const newPath = diffPath(this.at(this.i + 1).slice(4), 'b/', headerLine + 1);
    this.i += 2;
    const hunks: Hunk[] = [];
    while (this.i < this.end && this.at().startsWith('@@')) hunks.push(this.hunk());
    if (oldPath === null && newPath === null)
      throw new ParseFailure(headerLine, 'both sides of this diff are /dev/null');
    if (oldPath === null) return [addFromHunks(newPath as string, line, hunks)];
    if (newPath === null) return [{ kind: 'delete', path: oldPath, line }];
    const path = h?.renameFrom ?? oldPath;
    const dest = h?.renameTo ?? newPath;
    if (hunks.length === 0 && dest === path)
      throw new ParseFailure(headerLine, `the diff for ${path} has no "@@" hunks`);
    const moveTo = dest === path ? undefined : dest;
    return [
      {
        kind: 'update',
        path,
        line,
        moveTo,
        moveLine: moveTo ? (h?.renameLine ?? headerLine + 1) : undefined,
        hunks,
      },
    ];
  }

  private hunk(): Hunk {
    const line = this.i + 1;
    const m = UNIFIED_RANGE.exec(this.at());
    if (!m) {
      throw new ParseFailure(
        line,
        `malformed hunk header ${quote(this.at())}; expected "@@ -OLD_START,OLD_COUNT +NEW_START,NEW_COUNT @@"`,
      );
    }
    const h: Hunk = { line, lines: [], eof: false, oldNoEol: false, newNoEol: false, hint: hintFromRange(m) };
    let oldRem = m[2] === undefined ? 1 : Number(m[2]);
    let newRem = m[4] === undefined ? 1 : Number(m[4]);
    let blanks = 0;
    let lastSide: 'old' | 'new' | 'both' | undefined;
    for (this.i++; this.i < this.end; this.i++) {
      const raw = this.at();
      const countsLeft = oldRem > 0 || newRem > 0;
      if (raw.startsWith('@@') || raw.startsWith('diff --git ') || raw.startsWith('Index: ')) break;
      if (!countsLeft && this.fileHeaderAt(this.i)) break;
      if (raw === '') {
        // A context line whose single space was stripped, while the header still expects lines on both sides.
        if (oldRem > 0 && newRem > 0 && blanks === 0) {
          h.lines.push({ kind: ' ', text: '' });
          oldRem--;
          newRem--;
          lastSide = 'both';
        } else blanks++;
        continue;
      }
      if (isNoEolMarker(raw) && lastSide && blanks === 0) {
        if (lastSide !== 'new') h.oldNoEol = true;
        if (lastSide !== 'old') h.newNoEol = true;
        continue;
      }
      const kind = raw[0];
      if (kind !== ' ' && kind !== '-' && kind !== '+') {
        if (!countsLeft) break;
        throw new ParseFailure(this.i + 1, `a hunk line must start with " ", "-" or "+", got ${quote(raw)}`);
      }
      for (; blanks > 0; blanks--) h.lines.push({ kind: ' ', text: '' });
      h.lines.push({ kind, text: raw.slice(1) });
      if (kind !== '+') oldRem--;
      if (kind !== '-') newRem--;
      lastSide = kind === '-' ? 'old' : kind === '+' ? 'new' : 'both';
    }
    if (h.lines.length === 0) throw new ParseFailure(line, 'this hunk has no lines');
    if (h.oldNoEol) h.eof = true;
    return h;
  }
}

function addFromHunks(path: string, line: number, hunks: Hunk[]): PatchOp {
  const content: string[] = [];
  let noEol = false;
  for (const h of hunks) {
    for (const l of h.lines) {
      if (l.kind !== '+')
        throw new ParseFailure(
          h.line,
          `a new file (--- /dev/null) may only have "+" lines; ${path} has ${quote(l.kind + l.text)}`,
        );
      content.push(l.text);
    }
    noEol = h.newNoEol;
  }
  return { kind: 'add', path, line, lines: content, noEol };
}

/** The path of a `---`/`+++`/`rename` line: C-unquoted, timestamp cut, prefix removed; null for /dev/null. */
function diffPath(rest: string, prefix: string, line: number): string | null;
function diffPath(rest: string, prefix: '', line: number): string;
function diffPath(rest: string, prefix: string, line: number): string | null {
  let p: string;
  if (rest.startsWith('"')) {
    const u = cUnquote(rest);
    if (!u) throw new ParseFailure(line, `cannot read the quoted path ${quote(rest)}`);
    p = u.value;
  } else {
    p = (rest.split('\t')[0] as string).trimEnd();
  }
  if (p === '/dev/null') return prefix === '' ? p : null;
  if (prefix && p.startsWith(prefix)) p = p.slice(prefix.length);
  if (p === '') throw new ParseFailure(line, 'this line names no file path');
  return p;
}

/** The two paths of `diff --git a/X b/Y`, when they can be read without ambiguity. */
function gitHeaderPaths(rest: string): [string, string] | undefined {
  if (rest.startsWith('"')) {
    const a = cUnquote(rest);
    if (!a) return undefined;
    const after = rest.slice(a.length).trimStart();
    const b = after.startsWith('"') ? cUnquote(after)?.value : after;
    if (b === undefined) return undefined;
    return [a.value.replace(/^a\//, ''), b.replace(/^b\//, '')];
  }
  // Unquoted: "a/P b/P" with the same P on both sides (the only unambiguous case when P may contain spaces).
  const half = (rest.length - 1) / 2;
  if (!Number.isInteger(half)) return undefined;
  const a = rest.slice(0, half);
  const b = rest.slice(half + 1);
  if (!a.startsWith('a/') || !b.startsWith('b/') || a.slice(2) !== b.slice(2)) return undefined;
  return [a.slice(2), b.slice(2)];
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Git's C-style quoting: `"a/\303\251.txt"` → `a/é.txt`. Returns the value and the quoted length. */
function cUnquote(s: string): { value: string; length: number } | undefined {
  const bytes: number[] = [];
  for (let i = 1; i < s.length; i++) {
    const c = String.fromCodePoint(s.codePointAt(i) as number);
    if (c === '"') return { value: Buffer.from(bytes).toString('utf8'), length: i + 1 };
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      i += c.length - 1;
      continue;
    }
    const n = s[++i];
    if (n === undefined) return undefined;
    if (/[0-7]/.test(n)) {
      const oct = s.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) return undefined;
      bytes.push(parseInt(oct, 8));
      i += 2;
    } else if (n in C_ESCAPES) bytes.push(C_ESCAPES[n] as number);
    else return undefined;
  }
  return undefined;
}
