// A text file as the matcher sees it: lines without terminators, each line's own ending (LF or CRLF), the
// UTF-8 BOM and the final-newline state, plus the original bytes and where each line starts in them, so the
// new content can be spliced from unchanged byte ranges. Lines split on "\n" only: \f, \u2028, \x85 and a
// lone \r are ordinary characters here.
import { isUtf8 } from 'node:buffer';

export interface TextDoc {
  bom: boolean;
  lines: string[];
  /** 1 where the line ended with "\r\n" (for a last line without a newline: the ending it would get). */
  crlf: Uint8Array;
  /** False when the last line has no terminator. An empty file counts as true (there is no last line). */
  finalNewline: boolean;
  /** The ending inserted lines get: the file's majority style, LF on a tie. */
  eolCrlf: boolean;
  /** The file's bytes. */
  buf: Buffer;
  /** Byte offset where each line starts, and buf.length as the last entry (lines.length + 1 entries). */
  byteStarts: Int32Array;
  /** lines.join("\n"), for searching. */
  joined: string;
}

export type DecodeResult = { ok: true; doc: TextDoc } | { ok: false; reason: 'binary' | 'encoding' };

export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export function decodeDoc(buf: Buffer): DecodeResult {
  if (buf.includes(0)) return { ok: false, reason: 'binary' };
  if (!isUtf8(buf)) return { ok: false, reason: 'encoding' };
  let text = buf.toString('utf8');
  const bom = text.charCodeAt(0) === 0xfeff;
  if (bom) text = text.slice(1);
  if (text === '') {
    const byteStarts = Int32Array.of(buf.length);
    return {
      ok: true,
      doc: {
        bom,
        lines: [],
        crlf: new Uint8Array(0),
        finalNewline: true,
        eolCrlf: false,
        buf,
        byteStarts,
        joined: '',
      },
    };
  }
  const lines = text.split('\n');
  const finalNewline = lines[lines.length - 1] === '';
  if (finalNewline) lines.pop();
  const crlf = new Uint8Array(lines.length);
  const terminated = finalNewline ? lines.length : lines.length - 1;
  let crlfCount = 0;
  for (let i = 0; i < terminated; i++) {
    const l = lines[i] as string;
    if (l.charCodeAt(l.length - 1) === 13) {
      lines[i] = l.slice(0, -1);
      crlf[i] = 1;
      crlfCount++;
    }
  }
  const eolCrlf = crlfCount * 2 > terminated;
  if (!finalNewline && eolCrlf) crlf[lines.length - 1] = 1;
  // Without any CR the text itself is the joined form (minus the final newline): no copy of a large file.
  const joined = crlfCount === 0 ? (finalNewline ? text.slice(0, -1) : text) : lines.join('\n');
  const doc = {
    bom,
    lines,
    crlf,
    finalNewline,
    eolCrlf,
    buf,
    byteStarts: byteStartsOf(buf, bom, lines.length),
    joined,
  };
  return { ok: true, doc };
}

function byteStartsOf(buf: Buffer, bom: boolean, n: number): Int32Array {
  const starts = new Int32Array(n + 1);
  let pos = bom ? 3 : 0;
  for (let i = 0; i < n; i++) {
    starts[i] = pos;
    const nl = buf.indexOf(10, pos);
    pos = nl === -1 ? buf.length : nl + 1;
  }
  starts[n] = buf.length;
  return starts;
}

/** A new file's bytes: LF endings, a final newline unless the patch said otherwise. */
export function encodeNewFile(lines: readonly string[], noEol: boolean): Buffer {
  if (lines.length === 0) return Buffer.alloc(0);
  return Buffer.from(lines.join('\n') + (noEol ? '' : '\n'), 'utf8');
}
