// apply_patch parser: patch text → operations, or the 1-based line of the first problem. Owns the grammar and
// its leniencies; it never touches files and never throws (docs/tools.md#editing-files,
// docs/architecture.md#style, rule 4). A plain unified diff is handed to ./unified.ts. Line numbers always
// refer to the text exactly as sent.
//
// Grammar (Codex-style envelope; NL is "\n" or "\r\n"; markers are compared after trimming):
//
//   patch      := wrapper? blank* "*** Begin Patch" NL (blank | op)* "*** End Patch" blank* wrapper-end?
//   op         := add | delete | update
//   add        := "*** Add File:" path NL ( "+" text NL | "" NL )* noeol?
//   delete     := "*** Delete File:" path NL
//   update     := "*** Update File:" path NL ( "*** Move to:" path NL )? hunk*      (≥ 1 hunk unless moving)
//   hunk       := ( "@@" anchor? NL )? hline+ ( "*** End of File" NL )?               (only the first may omit @@)
//   hline      := " " text NL | "-" text NL | "+" text NL | "" NL (empty context) | noeol
//   noeol      := "\" text NL                     ("\ No newline at end of file": the line above has no NL)
//   wrapper    := ( "apply_patch" )? "<<" ( "'EOF'" | "\"EOF\"" | "EOF" ) NL  …  "EOF"      (any word, not just EOF)
//               | "```" lang? NL … "```"                                               (markdown fence)
//
// Empty lines at the end of a hunk or an Add body (before the next marker) are separators, not content.
// `@@ -l,n +l,n @@` inside the envelope is read as a line-number hint instead of an anchor.
import { isBlank, hintFromRange, ParseFailure, quote, UNIFIED_RANGE } from './parse-common.js';
import { parseUnified } from './unified.js';
import { isNoEolMarker, type AddOp, type Hunk, type ParseResult, type PatchOp } from './types.js';

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const END_OF_FILE = '*** End of File';
const MOVE_TO = '*** Move to:';
const FILE_MARKERS = [
  ['*** Add File:', 'add'],
  ['*** Delete File:', 'delete'],
  ['*** Update File:', 'update'],
] as const;

const HEREDOC_OPEN = /^(?:apply_patch\s+|applypatch\s+)?<<-?\s*(['"]?)([A-Za-z_][\w.-]*)\1\s*$/;
const FENCE_OPEN = /^```[\w+-]*$/;

export function parsePatch(text: string): ParseResult {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  try {
    const { start, end } = unwrap(lines);
    if (start >= end) throw new ParseFailure(1, `the patch is empty; it must start with "${BEGIN}"`);
    const first = (lines[start] as string).trim();
    if (first === BEGIN)
      return { ok: true, ops: new EnvelopeParser(lines, start, end).run(), format: 'envelope' };
    if (first.startsWith('diff --git ') || first.startsWith('--- ') || first.startsWith('Index: ')) {
      return { ok: true, ops: parseUnified(lines, start, end), format: 'unified' };
    }
    throw new ParseFailure(
      start + 1,
      `expected "${BEGIN}" as the first line of the patch, got ${quote(first)} ` +
        '(a unified diff starting with "diff --git" or "--- a/PATH" is accepted too)',
    );
  } catch (e) {
    if (e instanceof ParseFailure) return { ok: false, line: e.line, message: e.message };
    throw e;
  }
}

/** Strips blank lines, a heredoc wrapper and a markdown fence around the patch (in either nesting). */
function unwrap(lines: string[]): { start: number; end: number } {
  let start = 0;
  let end = lines.length;
  const trim = () => {
    while (start < end && isBlank(lines[start])) start++;
    while (end > start && isBlank(lines[end - 1])) end--;
  };
  trim();
  for (let pass = 0; pass < 2 && start < end; pass++) {
    const first = (lines[start] as string).trim();
    const last = (lines[end - 1] as string).trim();
    const heredoc = HEREDOC_OPEN.exec(first);
    if (heredoc) {
      start++;
      if (end > start && last === heredoc[2]) end--;
    } else if (FENCE_OPEN.test(first) && end - start > 1 && last === '```') {
      start++;
      end--;
    } else break;
    trim();
  }
  return { start, end };
}

function fileMarker(raw: string): { kind: 'add' | 'delete' | 'update'; path: string } | undefined {
  const t = raw.trim();
  if (!t.startsWith('*** ')) return undefined;
  for (const [prefix, kind] of FILE_MARKERS) {
    if (t.startsWith(prefix)) return { kind, path: t.slice(prefix.length).trim() };
  }
  return undefined;
}

function isSectionEnd(raw: string): boolean {
  return raw.trim() === END || fileMarker(raw) !== undefined;
}

class EnvelopeParser {
  private i: number;

  constructor(
    private readonly lines: string[],
    start: number,
    private readonly end: number,
  ) {
    this.i = start + 1;
  }

  private at(i = this.i): string {
    return this.lines[i] as string;
  }

  run(): PatchOp[] {
    const ops: PatchOp[] = [];
    for (;;) {
      while (this.i < this.end && isBlank(this.at())) this.i++;
      if (this.i >= this.end) {
        throw new ParseFailure(
          this.end,
          `the patch ends at line ${this.end} without "${END}" (it may have been cut off)`,
        );
      }
      const raw = this.at();
      if (raw.trim() === END) {
        if (ops.length === 0) throw new ParseFailure(this.i + 1, 'the patch contains no file operations');
        this.expectNothingAfterEnd();
        return ops;
      }
      const marker = fileMarker(raw);
      if (!marker) {
        throw new ParseFailure(
          this.i + 1,
          `expected "*** Add File: PATH", "*** Delete File: PATH", "*** Update File: PATH" or "${END}", got ${quote(raw)}`,
        );
      }
      const line = this.i + 1;
      if (marker.path === '') throw new ParseFailure(line, `${quote(raw.trim())} names no file path`);
      this.i++;
      if (marker.kind === 'add') ops.push(this.addBody(marker.path, line));
      else if (marker.kind === 'delete') ops.push(this.deleteBody(marker.path, line));
      else ops.push(this.updateBody(marker.path, line));
    }
  }

  private expectNothingAfterEnd(): void {
    for (let j = this.i + 1; j < this.end; j++) {
      if (!isBlank(this.at(j)))
        throw new ParseFailure(j + 1, `unexpected text after "${END}": ${quote(this.at(j))}`);
    }
  }

  private addBody(path: string, line: number): AddOp {
    const content: string[] = [];
    let blanks = 0;
    let noEol = false;
    while (this.i < this.end && !isSectionEnd(this.at())) {
      const raw = this.at();
      if (noEol)
        throw new ParseFailure(
          this.i + 1,
          `nothing may follow "\\ No newline at end of file" in an Add File body`,
        );
      if (raw === '') blanks++;
      else if (raw.startsWith('+')) {
        for (; blanks > 0; blanks--) content.push('');
        content.push(raw.slice(1));
      } else if (isNoEolMarker(raw) && content.length > 0 && blanks === 0) noEol = true;
      else {
        throw new ParseFailure(
          this.i + 1,
          `every line of an Add File body must start with "+" (file ${path}), got ${quote(raw)}`,
        );
      }
      this.i++;
    }
    return { kind: 'add', path, line, lines: content, noEol };
  }

  private deleteBody(path: string, line: number): PatchOp {
    while (this.i < this.end && !isSectionEnd(this.at())) {
      if (!isBlank(this.at())) {
        throw new ParseFailure(
          this.i + 1,
          `"*** Delete File: ${path}" takes no body lines, got ${quote(this.at())}`,
        );
      }
      this.i++;
    }
    return { kind: 'delete', path, line };
  }

  private updateBody(path: string, line: number): PatchOp {
    let moveTo: string | undefined;
    let moveLine: number | undefined;
    if (this.i < this.end && this.at().trim().startsWith(MOVE_TO)) {
      moveTo = this.at().trim().slice(MOVE_TO.length).trim();
      moveLine = this.i + 1;
      if (moveTo === '') throw new ParseFailure(moveLine, `"${MOVE_TO}" names no destination path`);
      this.i++;
    }
    const hunks: Hunk[] = [];
    while (this.i < this.end && !isSectionEnd(this.at())) {
      const raw = this.at();
      if (raw.startsWith('@@')) {
        this.i++;
        hunks.push(this.hunk(raw, this.i));
      } else if (hunks.length === 0 && (raw === '' || ' -+'.includes(raw[0] as string))) {
        hunks.push(this.hunk(undefined, this.i + 1));
      } else if (hunks.length === 0 && isBlank(raw)) {
        this.i++;
      } else {
        throw new ParseFailure(this.i + 1, this.strayLineMessage(raw, hunks.length > 0));
      }
    }
    if (hunks.length === 0 && moveTo === undefined) {
      throw new ParseFailure(
        line,
        `"*** Update File: ${path}" has no hunks; add "@@" and the lines to change`,
      );
    }
    return { kind: 'update', path, line, moveTo, moveLine, hunks };
  }

  private strayLineMessage(raw: string, afterHunk: boolean): string {
    const t = raw.trim();
    if (t.startsWith(MOVE_TO)) return `"${MOVE_TO}" must come right after its "*** Update File:" line`;
    if (t.startsWith('***')) {
      return `unknown marker ${quote(t)}; the markers are "*** Add File:", "*** Delete File:", "*** Update File:", "${MOVE_TO}", "${END_OF_FILE}" and "${END}"`;
    }
    if (afterHunk) return `expected "@@" to start the next hunk after "${END_OF_FILE}", got ${quote(raw)}`;
    return `expected a hunk ("@@" or a line starting with " ", "-" or "+"), got ${quote(raw)}`;
  }

  /** Reads hunk lines from this.i; `header` is the `@@` line (already consumed) or undefined. */
  private hunk(header: string | undefined, line: number): Hunk {
    const h: Hunk = { line, lines: [], eof: false, oldNoEol: false, newNoEol: false };
    if (header !== undefined) this.readHeader(h, header);
    let blanks = 0;
    let lastSide: 'old' | 'new' | 'both' | undefined;
    for (; this.i < this.end; this.i++) {
      const raw = this.at();
      if (raw.startsWith('@@') || isSectionEnd(raw)) break;
      if (raw.trim() === END_OF_FILE) {
        h.eof = true;
        this.i++;
        break;
      }
      if (raw === '') {
        blanks++;
        continue;
      }
      if (isNoEolMarker(raw) && blanks === 0 && lastSide) {
        if (lastSide !== 'new') h.oldNoEol = true;
        if (lastSide !== 'old') h.newNoEol = true;
        continue;
      }
      const kind = raw[0];
      if (kind !== ' ' && kind !== '-' && kind !== '+') {
        throw new ParseFailure(
          this.i + 1,
          raw.startsWith('***') ? this.strayLineMessage(raw, false) : badHunkLine(raw),
        );
      }
      for (; blanks > 0; blanks--) h.lines.push({ kind: ' ', text: '' });
      this.checkAfterNoEol(h, kind);
      h.lines.push({ kind, text: raw.slice(1) });
      lastSide = kind === '-' ? 'old' : kind === '+' ? 'new' : 'both';
    }
    if (h.lines.length === 0)
      throw new ParseFailure(
        line,
        'this hunk has no lines; a hunk needs lines starting with " ", "-" or "+"',
      );
    if (h.oldNoEol) h.eof = true;
    return h;
  }

  private readHeader(h: Hunk, header: string): void {
    const range = UNIFIED_RANGE.exec(header);
    if (range) {
      h.hint = hintFromRange(range);
      return;
    }
    const anchor = header.slice(2).trim();
    if (anchor !== '') h.anchor = anchor;
  }

  private checkAfterNoEol(h: Hunk, kind: string): void {
    if ((h.oldNoEol && kind !== '+') || (h.newNoEol && kind !== '-')) {
      throw new ParseFailure(
        this.i + 1,
        `this line follows "\\ No newline at end of file" on the same side of the hunk`,
      );
    }
  }
}

function badHunkLine(raw: string): string {
  return (
    `every hunk line must start with " " (unchanged), "-" (removed) or "+" (added), got ${quote(raw)}; ` +
    'if it is an unchanged line, prefix it with one space'
  );
}
