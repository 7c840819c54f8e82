// A text file as the matcher sees it: lines without terminators, each line's own ending (LF or CRLF) kept,
// the UTF-8 BOM and the final-newline state remembered, so that encoding an unchanged document gives back
// the same bytes. Lines split on "\n" only: \f, \u2028, \x85 and a lone \r are ordinary characters here.
import { isUtf8 } from 'node:buffer';

export interface TextDoc {
  bom: boolean;
  lines: string[];
  /** 1 where the line ended with "\r\n" (for the last line without a newline: the ending it would get). */
  crlf: Uint8Array;
  /** False when the last line has no terminator. An empty file counts as true (there is no last line). */
  finalNewline: boolean;
  /** The ending inserted lines get: the file's majority style, LF on a tie. */
  eolCrlf: boolean;
}

export type DecodeResult = { ok: true; doc: TextDoc } | { ok: false; reason: 'binary' | 'encoding' };

export function decodeDoc(buf: Buffer): DecodeResult {
  if (buf.includes(0)) return { ok: false, reason: 'binary' };
  if (!isUtf8(buf)) return { ok: false, reason: 'encoding' };
  let text = buf.toString('utf8');
  const bom = text.charCodeAt(0) === 0xfeff;
  if (bom) text = text.slice(1);
  if (text === '')
    return { ok: true, doc: { bom, lines: [], crlf: new Uint8Array(0), finalNewline: true, eolCrlf: false } };
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
  return { ok: true, doc: { bom, lines, crlf, finalNewline, eolCrlf } };
}

export function encodeDoc(doc: TextDoc): Buffer {
  const n = doc.lines.length;
  const parts: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const last = i === n - 1;
    const end = last && !doc.finalNewline ? '' : doc.crlf[i] ? '\r\n' : '\n';
    parts[i] = (doc.lines[i] as string) + end;
  }
  const text = (doc.bom ? '\ufeff' : '') + parts.join('');
  return Buffer.from(text, 'utf8');
}

/** A new file's document: LF endings, a final newline unless the patch said otherwise. */
export function newDoc(lines: string[], noEol: boolean): TextDoc {
  return {
    bom: false,
    lines,
    crlf: new Uint8Array(lines.length),
    finalNewline: !noEol || lines.length === 0,
    eolCrlf: false,
  };
}
