// Text facts shared by the file tools: binary detection (a NUL byte, as git and ripgrep decide), UTF-8
// validity, cutting at a character boundary, and line counting.
import { isUtf8 } from 'node:buffer';

export const BINARY_SNIFF_BYTES = 8000;

export function looksBinary(buf: Uint8Array): boolean {
  return buf.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

export function validUtf8(buf: Uint8Array): boolean {
  return isUtf8(buf);
}

/** Largest n ≤ max such that buf[0..n) does not end inside a UTF-8 sequence. */
export function utf8Boundary(buf: Uint8Array, max: number): number {
  if (max >= buf.length) return buf.length;
  let n = max;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (n > 0 && ((buf[n] as number) & 0xc0) === 0x80) n--;
  return n;
}

export function truncateUtf8(s: string, maxBytes: number): { text: string; cut: boolean } {
  if (s.length <= maxBytes / 4 || Buffer.byteLength(s) <= maxBytes) return { text: s, cut: false };
  const b = Buffer.from(s);
  return { text: b.subarray(0, utf8Boundary(b, maxBytes)).toString('utf8'), cut: true };
}

export function countLines(buf: Uint8Array): number {
  if (buf.length === 0) return 0;
  let n = 0;
  let i = -1;
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  while ((i = b.indexOf(10, i + 1)) !== -1) n++;
  return b[b.length - 1] === 10 ? n : n + 1;
}

/** Number of code points in `s` (characters as a reader counts them), without building an array. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = s.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) n--;
    }
  }
  return n;
}
