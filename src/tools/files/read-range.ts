// Finding a line range in a file without reading more than once: one pass over the file counts lines and
// records the byte offsets of the requested range (stopping the range at the line, byte or end_line limit),
// then a single positioned read fetches exactly that range. Reads are synchronous and chunked, with a yield
// every few MiB so a huge file cannot starve other requests.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { ToolError } from '../../core/tool-error.js';
import { BINARY_SNIFF_BYTES } from '../../workspace/text.js';

const CHUNK = 256 * 1024;
const YIELD_EVERY = 8 * 1024 * 1024;

export interface RangeRequest {
  startLine: number;
  endLine?: number;
  maxLines: number;
  maxBytes: number;
}

export interface RangeResult {
  buf: Buffer;
  firstLine: number;
  /** Last line included (firstLine - 1 when none). */
  lastLine: number;
  totalLines: number;
  totalBytes: number;
  truncatedBy: 'max_lines' | 'max_bytes' | null;
  /** The single line at firstLine was longer than max_bytes and was cut. */
  lineCut: boolean;
  binary: boolean;
}

class Scan {
  line = 1;
  lineStart = 0;
  startOff: number | undefined;
  stopOff: number | undefined;
  lastIncluded = 0;
  tentativeEnd = 0;
  truncatedBy: RangeResult['truncatedBy'] = null;
  lineCut = false;
  readonly limitLine: number;

  constructor(private readonly r: RangeRequest) {
    this.limitLine = r.startLine + r.maxLines - 1;
    if (r.startLine === 1) this.startOff = 0;
  }

  /** Line `this.line` spans [lineStart, end). */
  lineEnd(end: number): void {
    const ln = this.line;
    const s = this.lineStart;
    if (ln === this.r.startLine) this.startOff = s;
    if (ln >= this.r.startLine && this.stopOff === undefined) {
      if (this.r.endLine !== undefined && ln > this.r.endLine) this.stopOff = s;
      else if (ln > this.limitLine) {
        this.stopOff = s;
        this.truncatedBy = 'max_lines';
      } else if (end - (this.startOff as number) > this.r.maxBytes) {
        this.truncatedBy = 'max_bytes';
        if (ln === this.r.startLine) {
          this.stopOff = s + this.r.maxBytes;
          this.lineCut = true;
          this.lastIncluded = ln;
        } else this.stopOff = s;
      } else {
        this.lastIncluded = ln;
        this.tentativeEnd = end;
      }
    }
    this.line++;
    this.lineStart = end;
  }
}

function notRegular(rel: string, isDir: boolean): ToolError {
  if (isDir) {
    return new ToolError('IS_DIRECTORY', `${rel} is a directory`, { path: rel }, { retry: `list_dir ${JSON.stringify({ path: rel })}` });
  }
  return new ToolError('INVALID_ARGUMENT', `${rel} is not a regular file (device, socket or pipe)`, { path: rel }, {
    suggestion: 'Only regular files can be read.',
  });
}

export async function readRange(real: string, rel: string, req: RangeRequest): Promise<RangeResult> {
  let fd: number;
  try {
    // O_NOFOLLOW: `real` has no symlinks, so one appearing now is a race (decisions.md 28); O_NONBLOCK: a FIFO
    // must not hang the server.
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ToolError('SYMLINK_ESCAPE', `${rel} changed into a symlink while being opened`, { path: rel });
    if (code === 'EISDIR') throw notRegular(rel, true);
    if (code === 'EACCES' || code === 'EPERM') throw new ToolError('INVALID_ARGUMENT', `${rel} is not readable (permission denied)`, { path: rel });
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(rel, st.isDirectory());
    const size = st.size;
    const scan = new Scan(req);
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(size, 1)));
    let pos = 0;
    let sinceYield = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) break;
      if (pos === 0 && chunk.subarray(0, Math.min(n, BINARY_SNIFF_BYTES)).includes(0)) {
        return { buf: Buffer.alloc(0), firstLine: req.startLine, lastLine: 0, totalLines: 0, totalBytes: size, truncatedBy: null, lineCut: false, binary: true };
      }
      let i = -1;
      while ((i = chunk.indexOf(10, i + 1)) !== -1 && i < n) scan.lineEnd(pos + i + 1);
      pos += n;
      sinceYield += n;
      if (sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((r) => setImmediate(r));
      }
    }
    const total = pos;
    if (scan.lineStart < total) scan.lineEnd(total);
    const totalLines = scan.line - 1;
    const startOff = scan.startOff ?? total;
    const stopOff = scan.stopOff ?? (scan.lastIncluded >= req.startLine ? scan.tentativeEnd : startOff);
    const len = Math.max(0, stopOff - startOff);
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = readSync(fd, buf, got, len - got, startOff + got);
      if (n === 0) break;
      got += n;
    }
    return {
      buf: buf.subarray(0, got),
      firstLine: req.startLine,
      lastLine: scan.lastIncluded >= req.startLine ? scan.lastIncluded : req.startLine - 1,
      totalLines,
      totalBytes: total,
      truncatedBy: scan.truncatedBy,
      lineCut: scan.lineCut,
      binary: false,
    };
  } finally {
    closeSync(fd);
  }
}
