// Model-facing views of command output (docs/tools.md#commands, output budget): the new bytes of a stream
// within a byte budget, keeping head and tail with a marker that names how much was left out and the exact
// read_output call that pages it; and one read_output page. Offsets are raw bytes; text is cleaned by
// modelText (ANSI escapes stripped) and cut only at UTF-8 character boundaries.
import { forwardToBoundary, modelText, type Span, type StreamBuffer } from '../../process/commands/output.js';
import { utf8Boundary } from '../../workspace/text.js';
import { callText } from '../result.js';

export const READ_LIMIT_MAX = 1_048_576;

export function outputRef(id: string, stream: string): string {
  return `command:${id}:${stream}`;
}

export interface StreamView {
  text: string;
  /** New bytes not shown in `text` (left out for the budget, or no longer kept). */
  omitted: number;
  /** First left-out byte that read_output can still return, or null. */
  readFrom: number | null;
}

interface Piece extends Span {
  cutStart: boolean;
  cutEnd: boolean;
}

/** Split the retained spans into what fits: all of it, or the first and last halves of the budget. */
function pick(spans: Span[], budget: number): Piece[] {
  const avail = spans.reduce((n, s) => n + s.end - s.start, 0);
  if (avail <= budget) return spans.map((s) => ({ ...s, cutStart: false, cutEnd: false }));
  const out: Piece[] = [];
  let front = Math.floor(budget / 2);
  for (const s of spans) {
    if (front <= 0) break;
    const n = Math.min(front, s.end - s.start);
    out.push({ start: s.start, end: s.start + n, cutStart: false, cutEnd: n < s.end - s.start });
    front -= n;
  }
  const back: Piece[] = [];
  let rest = budget - Math.floor(budget / 2);
  for (let i = spans.length - 1; i >= 0 && rest > 0; i--) {
    const s = spans[i] as Span;
    const n = Math.min(rest, s.end - s.start);
    back.unshift({ start: s.end - n, end: s.end, cutStart: n < s.end - s.start, cutEnd: false });
    rest -= n;
  }
  return [...out, ...back];
}

export function viewNew(
  buf: StreamBuffer,
  ref: string,
  from: number,
  to: number,
  budget: number,
  pageLimit: number,
): StreamView {
  if (to <= from) return { text: '', omitted: 0, readFrom: null };
  const parts: string[] = [];
  let pos = from;
  let shown = 0;
  let readFrom: number | null = null;
  const gap = (a: number, b: number) => {
    const m = marker(buf, ref, a, b, pageLimit);
    if (readFrom === null) readFrom = m.readFrom;
    const last = parts[parts.length - 1];
    if (last !== undefined && !last.endsWith('\n')) parts.push('\n');
    parts.push(m.text + '\n');
  };
  for (const p of pick(buf.retainedSpans(from, to), budget)) {
    // One byte past a cut end tells whether the cut splits a character.
    let bytes = buf.read(p.start, p.cutEnd ? p.end + 1 : p.end);
    if (p.cutEnd) bytes = bytes.subarray(0, utf8Boundary(bytes, p.end - p.start));
    let start = p.start;
    if (p.cutStart) {
      const k = forwardToBoundary(bytes, 0);
      bytes = bytes.subarray(k);
      start += k;
    }
    if (start > pos) gap(pos, start);
    parts.push(modelText(bytes.toString('utf8')));
    shown += bytes.length;
    pos = start + bytes.length;
  }
  if (pos < to) gap(pos, to);
  return { text: parts.join(''), omitted: to - from - shown, readFrom };
}

function marker(
  buf: StreamBuffer,
  ref: string,
  a: number,
  b: number,
  pageLimit: number,
): { text: string; readFrom: number | null } {
  const dropped = Math.max(0, Math.min(b, buf.tailStart) - Math.max(a, buf.headEnd));
  const first = a >= buf.headEnd && a < buf.tailStart ? buf.tailStart : a;
  const readFrom = first < b ? first : null;
  const n = b - a;
  if (readFrom === null) {
    return {
      text: `[… ${fmt(n)} bytes left out: no longer kept (each stream keeps its first 64 KiB and its most recent bytes) …]`,
      readFrom,
    };
  }
  const lost = dropped ? ` (${fmt(dropped)} of them no longer kept)` : '';
  const call = callText('read_output', { output_ref: ref, offset: readFrom, limit: pageLimit });
  return { text: `[… ${fmt(n)} bytes left out here${lost}; page them with ${call} …]`, readFrom };
}

export interface Page {
  content: string;
  offset: number;
  end: number;
  skipped: number;
}

/** One read_output page: from `offset` (moved past a dropped middle), at most `limit` bytes. */
export function readPage(buf: StreamBuffer, offset: number, limit: number): Page {
  const total = buf.total;
  let off = Math.min(offset, total);
  let skipped = 0;
  if (off >= buf.headEnd && off < buf.tailStart) {
    skipped = buf.tailStart - off;
    off = buf.tailStart;
  }
  // Stop at the end of the head when a dropped middle follows, so the next page reports the skip.
  const stop = off < buf.headEnd && buf.droppedBytes > 0 ? buf.headEnd : total;
  // An offset inside a character moves to the next character.
  if (off > 0 && off < stop) off += forwardToBoundary(buf.read(off, Math.min(off + 3, stop)), 0);
  let end = Math.min(off + limit, stop);
  // One byte past the end tells whether the page would split a character; never return an empty page for it.
  let bytes = buf.read(off, end < stop ? end + 1 : end);
  const cut = utf8Boundary(bytes, end - off);
  if (cut > 0) end = off + cut;
  bytes = bytes.subarray(0, end - off);
  return { content: modelText(bytes.toString('utf8')), offset: off, end, skipped };
}

export function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
