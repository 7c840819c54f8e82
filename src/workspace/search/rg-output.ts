// ripgrep's plain NUL-separated output (rgArgs in ripgrep.ts), parsed as bytes as it arrives (only what a
// preview shows is decoded) into a MatchPage: `path\0LINE:COL:OFFSET:text` for a match,
// `path\0LINE-OFFSET-text` for a context line. rg is a sandboxed peer (docs/security-model.md): a malformed
// line is skipped, never trusted, and nothing it prints grows memory beyond one page and one pending line.
import { LineFramer } from '../../core/text/line-framer.js';
import { excludedByAncestor } from '../glob.js';
import { comparePaths } from '../path-order.js';
import { codePointLength, truncateUtf8 } from '../text.js';
import { FileMatches } from './file-matches.js';
import type { MatchPage } from './match-page.js';
import type { SearchRequest } from './types.js';

/** Reads a decimal number from `b` at `i`; returns [value, index after the digits]. */
function readNumber(b: Buffer, i: number): [number, number] {
  let n = 0;
  while (i < b.length && (b[i] as number) >= 48 && (b[i] as number) <= 57)
    n = n * 10 + ((b[i++] as number) - 48);
  return [n, i];
}

/** rg's marker after the preview of a line longer than --max-columns (ripgrep.ts). */
const CUT_MARKER = / \[\.\.\. (?:\d+ more matche?s?|omitted end of long line)\]$/;

/** How many bytes of `text` are the line's own: all, or those before rg's long-line marker (and its \r). */
function ownBytes(text: Buffer): number {
  const end = text.length > 0 && text[text.length - 1] === 13 ? text.length - 1 : text.length;
  if (end < 24 || text[end - 1] !== 93 /* ] */) return text.length;
  const m = CUT_MARKER.exec(text.toString('latin1', Math.max(0, end - 48), end));
  return m ? end - m[0].length : text.length;
}

/** Text of a line for a preview: only the bytes a preview can show are decoded. */
function previewOf(text: Buffer, maxBytes: number): string {
  let end = text.length;
  if (end > 0 && text[end - 1] === 13) end--;
  return truncateUtf8(text.toString('utf8', 0, Math.min(end, maxBytes + 4)), maxBytes).text;
}

export class RgOutput {
  private file: { rel: string; matches?: FileMatches } | undefined;
  private readonly lines = new LineFramer({ onLine: (b) => this.onLine(b) });
  private stopped = false;

  /**
   * `prefix`: the search base relative to the root (rg runs in it). `ordered`: rg prints files in path order
   * (--sort path), so parsing stops as soon as the page is full.
   */
  constructor(
    private readonly prefix: string,
    private readonly req: SearchRequest,
    private readonly page: MatchPage,
    private readonly ordered: boolean,
  ) {}

  /** One chunk of stdout; false when rg may stop (the page is settled or the count passed its cap). */
  feed(chunk: Buffer): boolean {
    this.lines.push(chunk);
    return !this.stopped;
  }

  /** rg exited: the last line (if it had no newline) and the last file are complete. */
  end(): void {
    this.lines.end();
    if (!this.stopped) this.file?.matches?.end();
  }

  private stop(): void {
    this.stopped = true;
    this.lines.stop();
  }

  private fileFor(local: string): FileMatches | undefined {
    const rel = this.prefix === '.' ? local : `${this.prefix}/${local}`;
    if (this.file?.rel === rel) return this.file.matches;
    if (this.file?.matches && !this.file.matches.end()) this.stop();
    const req = this.req;
    const keep =
      !(req.include && !req.include(local)) &&
      !(req.exclude && excludedByAncestor(req.exclude, local)) &&
      !(req.after && comparePaths(rel, req.after.path) < 0);
    this.file = { rel, matches: keep ? new FileMatches(rel, req.contextLines, this.page) : undefined };
    return this.file.matches;
  }

  private onLine(b: Buffer): void {
    const nul = b.indexOf(0);
    if (nul < 0) return; // not a record (e.g. "binary file matches"): skipped
    const local = b.toString('utf8', b[0] === 46 && b[1] === 47 ? 2 : 0, nul);
    const fm = this.fileFor(local);
    if (!fm || this.stopped) return;
    const [line, i] = readNumber(b, nul + 1);
    const max = this.req.maxPreviewBytes;
    const rel = this.file?.rel as string;
    let ok: boolean;
    if (b[i] === 58 /* ':' match: LINE:COL:OFFSET:text */) {
      const [byteCol, j] = readNumber(b, i + 1);
      const [offset, k] = readNumber(b, j + 1);
      const text = b.subarray(k + 1);
      const before = Math.max(0, byteCol - 1);
      const own = ownBytes(text);
      const head = Buffer.from(text.subarray(0, max + 4));
      if (before <= own) {
        const column = codePointLength(text.toString('utf8', 0, before)) + 1;
        ok = fm.line(line, previewOf(text, max), column, { rel, offset, head });
      } else {
        // The match lies past the printed part of a long line: its column is finished from the file.
        const base = codePointLength(text.toString('utf8', 0, own));
        const column = { from: offset + own, to: offset + before, base };
        ok = fm.line(line, previewOf(text, max), base + (before - own) + 1, { rel, offset, head, column });
      }
    } else {
      // context: LINE-OFFSET-text
      const [offset, k] = readNumber(b, i + 1);
      const text = b.subarray(k + 1);
      const head = Buffer.from(text.subarray(0, max + 4));
      ok = fm.line(line, previewOf(text, max), undefined, { rel, offset, head });
    }
    if (!ok || (this.ordered && this.page.full)) this.stop();
  }
}
