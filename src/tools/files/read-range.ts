// Finding a line range in a file without reading more than once: one pass over the file counts lines and
// records the byte offsets of the requested range (stopping the range at the line, byte or end_line limit),
// then a single positioned read fetches exactly that range. Reads are synchronous and chunked, with a yield
// every few MiB so a huge file cannot starve other requests.
import { closeSync, readSync, type BigIntStats } from 'node:fs';
import { openRegularForTool } from '../../workspace/confined-fs.js';
import { BINARY_SNIFF_BYTES } from '../../workspace/text.js';

const CHUNK = 256 * 1024;
const YIELD_EVERY = 8 * 1024 * 1024;
/** Files at least this big keep a line-offset index, so paging through them reads only each page. */
const INDEX_MIN_BYTES = 64 * 1024;
const INDEX_MAX_BYTES = 256 * 1024 * 1024;
const INDEX_CACHE_ENTRIES = 16;

interface LineIndex {
  /** Identity of the file version the index describes (inode, size, mtime and ctime in ns). */
  stamp: string;
  /** starts[i] = byte offset where line i+1 begins. */
  starts: Uint32Array;
  lines: number;
  size: number;
}

/**
 * Small LRU of line indexes by real path; an entry is used only while the file's stamp is unchanged.
 * Process-wide on purpose: an index describes a file version (its stamp), not anything of one server, so
 * servers in one process (tests) may share it; bounded by INDEX_CACHE_ENTRIES.
 */
const indexCache = new Map<string, LineIndex>();

function remember(real: string, idx: LineIndex): void {
  indexCache.delete(real);
  indexCache.set(real, idx);
  if (indexCache.size > INDEX_CACHE_ENTRIES) indexCache.delete(indexCache.keys().next().value as string);
}

class Starts {
  arr = new Uint32Array(1024);
  n = 1; // arr[0] = 0
  push(off: number): void {
    if (this.n === this.arr.length) {
      const next = new Uint32Array(this.arr.length * 2);
      next.set(this.arr);
      this.arr = next;
    }
    this.arr[this.n++] = off;
  }
}

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

export async function readRange(
  rootReal: string,
  real: string,
  rel: string,
  req: RangeRequest,
): Promise<RangeResult> {
  // Verified on the descriptor (docs/design-notes.md#symlink-races): a FIFO never blocks, a swapped directory
  // is never followed.
  const { fd, stat: st } = openRegularForTool(rootReal, real, rel);
  try {
    const scan = new Scan(req);
    const sized = await scanRange(fd, st, real, scan, req.startLine);
    if (sized === 'binary') {
      return {
        buf: Buffer.alloc(0),
        firstLine: req.startLine,
        lastLine: 0,
        totalLines: 0,
        totalBytes: Number(st.size),
        truncatedBy: null,
        lineCut: false,
        binary: true,
      };
    }
    const startOff = scan.startOff ?? sized.total;
    const stopOff = scan.stopOff ?? (scan.lastIncluded >= req.startLine ? scan.tentativeEnd : startOff);
    const buf = readAt(fd, startOff, Math.max(0, stopOff - startOff));
    return {
      buf,
      firstLine: req.startLine,
      lastLine: scan.lastIncluded >= req.startLine ? scan.lastIncluded : req.startLine - 1,
      totalLines: sized.totalLines,
      totalBytes: sized.total,
      truncatedBy: scan.truncatedBy,
      lineCut: scan.lineCut,
      binary: false,
    };
  } finally {
    closeSync(fd);
  }
}

/** Runs the scan from the file's cached line index when it is still current, else over the file (and keeps
 *  the index it builds); the file's size and line count, or 'binary'. */
async function scanRange(
  fd: number,
  st: BigIntStats,
  real: string,
  scan: Scan,
  startLine: number,
): Promise<{ total: number; totalLines: number } | 'binary'> {
  const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  const cached = indexCache.get(real);
  if (cached && cached.stamp === stamp) {
    remember(real, cached);
    walkIndex(scan, cached, startLine);
    return { total: cached.size, totalLines: cached.lines };
  }
  const r = await scanFile(fd, Number(st.size), scan);
  if (r === 'binary') return 'binary';
  const totalLines = scan.line - 1;
  if (r.starts)
    remember(real, { stamp, starts: r.starts.arr.subarray(0, totalLines), lines: totalLines, size: r.total });
  return { total: r.total, totalLines };
}

/** Feeds the scan from a cached index, from startLine until the range is decided. */
function walkIndex(scan: Scan, idx: LineIndex, startLine: number): void {
  if (startLine > idx.lines) {
    scan.line = idx.lines + 1;
    return;
  }
  scan.line = startLine;
  scan.lineStart = idx.starts[startLine - 1] as number;
  scan.startOff = scan.lineStart;
  for (let ln = startLine; ln <= idx.lines && scan.stopOff === undefined; ln++) {
    scan.lineEnd(ln < idx.lines ? (idx.starts[ln] as number) : idx.size);
  }
}

/** One pass over the file: line ends into the scan, and (for mid-sized files) the line starts for the cache. */
async function scanFile(
  fd: number,
  size: number,
  scan: Scan,
): Promise<'binary' | { total: number; starts?: Starts }> {
  const starts = size >= INDEX_MIN_BYTES && size <= INDEX_MAX_BYTES ? new Starts() : undefined;
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(size, 1)));
  let pos = 0;
  let sinceYield = 0;
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, pos);
    if (n === 0) break;
    if (pos === 0 && chunk.subarray(0, Math.min(n, BINARY_SNIFF_BYTES)).includes(0)) return 'binary';
    let i = -1;
    while ((i = chunk.indexOf(10, i + 1)) !== -1 && i < n) {
      scan.lineEnd(pos + i + 1);
      starts?.push(pos + i + 1);
    }
    pos += n;
    sinceYield += n;
    if (sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await new Promise((r) => setImmediate(r));
    }
  }
  if (scan.lineStart < pos) scan.lineEnd(pos);
  return { total: pos, starts };
}

function readAt(fd: number, off: number, len: number): Buffer {
  const buf = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, off + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}
