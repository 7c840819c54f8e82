// Output of one command stream (docs/tools.md#commands): a frozen head (the first 64 KiB) and a rolling tail
// (the most recent bytes, up to the per-stream buffer minus the head), addressed by absolute byte offsets so
// read_output can page across what was dropped in between. Raw bytes are stored; only the text handed to a
// model is cleaned (ANSI escapes, carriage-return overwrites) by modelText().

export const HEAD_BYTES = 64 * 1024;

export interface Span {
  /** Absolute offsets, [start, end). */
  start: number;
  end: number;
}

export class StreamBuffer {
  private readonly headChunks: Buffer[] = [];
  private headLen = 0;
  private tailChunks: Buffer[] = [];
  private tailLen = 0;
  /** Absolute offset of the first byte held in the tail. */
  private tailFrom = 0;
  /** Bytes ever written: the absolute offset of the next byte. */
  total = 0;

  constructor(private readonly tailCap: number) {}

  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    let rest = chunk;
    if (this.headLen < HEAD_BYTES) {
      const take = Math.min(HEAD_BYTES - this.headLen, rest.length);
      this.headChunks.push(Buffer.from(rest.subarray(0, take)));
      this.headLen += take;
      this.total += take;
      rest = rest.subarray(take);
      this.tailFrom = this.total;
      if (rest.length === 0) return;
    }
    this.tailChunks.push(rest);
    this.tailLen += rest.length;
    this.total += rest.length;
    this.trim();
  }

  private trim(): void {
    while (this.tailLen > this.tailCap) {
      const first = this.tailChunks[0] as Buffer;
      const excess = this.tailLen - this.tailCap;
      if (first.length <= excess) {
        this.tailChunks.shift();
        this.tailLen -= first.length;
        this.tailFrom += first.length;
      } else {
        // Copy the kept part so the dropped bytes of a large chunk are really freed.
        this.tailChunks[0] = Buffer.from(first.subarray(excess));
        this.tailLen -= excess;
        this.tailFrom += excess;
      }
    }
  }

  /** End of the frozen head (≤ 64 KiB). */
  get headEnd(): number {
    return this.headLen;
  }

  /** First byte of the retained tail; bytes in [headEnd, tailStart) were dropped. */
  get tailStart(): number {
    return this.tailFrom;
  }

  get droppedBytes(): number {
    return this.tailFrom - this.headLen;
  }

  /** Bytes held in memory. */
  get retainedBytes(): number {
    return this.headLen + this.tailLen;
  }

  /** The retained parts of [start, end), in order (one or two spans). */
  retainedSpans(start: number, end: number): Span[] {
    const out: Span[] = [];
    const e = Math.min(end, this.total);
    if (start < this.headLen) out.push({ start, end: Math.min(e, this.headLen) });
    const t = Math.max(start, this.tailFrom);
    if (t < e) {
      const last = out[out.length - 1];
      if (last && last.end === t) last.end = e;
      else out.push({ start: t, end: e });
    }
    return out.filter((s) => s.end > s.start);
  }

  /** Copy of retained bytes [start, end); the range must lie inside one retained span. */
  read(start: number, end: number): Buffer {
    if (end <= start) return Buffer.alloc(0);
    const parts: Buffer[] = [];
    collect(this.headChunks, 0, start, end, parts);
    collect(this.tailChunks, this.tailFrom, start, end, parts);
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }
}

function collect(chunks: readonly Buffer[], base: number, start: number, end: number, out: Buffer[]): void {
  let pos = base;
  for (const c of chunks) {
    const cEnd = pos + c.length;
    if (cEnd > start && pos < end)
      out.push(c.subarray(Math.max(0, start - pos), Math.min(c.length, end - pos)));
    pos = cEnd;
    if (pos >= end) return;
  }
}

/** Start of the UTF-8 character at or after `i` (skips continuation bytes, at most 3). */
export function forwardToBoundary(buf: Buffer, i: number): number {
  let n = i;
  while (n < buf.length && n - i < 3 && ((buf[n] as number) & 0xc0) === 0x80) n++;
  return n;
}

// CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC strings, and two-byte escapes.
const ANSI =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]|\x9b[0-?]*[ -/]*[@-~]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/**
 * What a model reads: ANSI escapes removed, CRLF → LF, a line rewritten with bare CR (progress bars) keeps
 * only its last state, backspaces applied, other control characters dropped, runs of Node-internal stack
 * frames folded into one line. Raw bytes stay in the buffer; offsets count them.
 */
export function modelText(raw: string): string {
  let s = raw.replace(ANSI, '');
  if (s.includes('\r')) {
    s = s.replace(/\r+\n/g, '\n');
    if (s.includes('\r')) s = s.split('\n').map(lastCrSegment).join('\n');
  }
  if (s.includes('\b')) s = applyBackspaces(s);
  s = s.replace(CONTROL, '');
  return s.includes('node:internal/') ? foldRuntimeFrames(s) : s;
}

// One V8 stack frame inside Node itself: `    at f (node:internal/…:1:2)` or `    at node:internal/…:1:2`,
// optionally followed by ` {` where util.inspect goes on with the error's own properties.
const RUNTIME_FRAME = /^( +)at (?:[^\n]*? \()?node:internal\/[^\s()]*\)?( \{)?$/;

/**
 * Two or more consecutive frames inside Node's own code become one line saying how many there were, as test
 * runners do: they say nothing about the program being fixed and are the bulk of a failing test's stack.
 */
function foldRuntimeFrames(s: string): string {
  const lines = s.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length;) {
    // A run ends after a frame followed by ` {` (the error's properties come next).
    let j = i;
    while (
      j < lines.length &&
      RUNTIME_FRAME.test(lines[j] as string) &&
      (j === i || !lines[j - 1]?.endsWith(' {'))
    )
      j++;
    if (j - i >= 2) {
      const m = RUNTIME_FRAME.exec(lines[j - 1] as string) as RegExpExecArray;
      out.push(`${m[1]}at … ${j - i} frames in node:internal${m[2] ?? ''}`);
      i = j;
    } else {
      out.push(lines[i] as string);
      i++;
    }
  }
  return out.join('\n');
}

function lastCrSegment(line: string): string {
  const i = line.lastIndexOf('\r');
  if (i < 0) return line;
  const tail = line.slice(i + 1);
  // A trailing CR (cursor back, nothing written yet) keeps what was there.
  return tail === '' ? lastCrSegment(line.slice(0, i)) : tail;
}

function applyBackspaces(s: string): string {
  const out: string[] = [];
  for (const ch of s) {
    if (ch === '\b') {
      if (out.length && out[out.length - 1] !== '\n') out.pop();
    } else out.push(ch);
  }
  return out.join('');
}
