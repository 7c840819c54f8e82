// Splits a byte stream into newline-terminated lines: the framing of the stdio transport (stdio/serve.ts), of
// ripgrep's output (workspace/search/rg-output.ts) and of supervised children's output
// (process/supervised.ts). Bytes, not text: a newline never falls inside a UTF-8 sequence, so each line is
// decoded whole by its consumer, and a character split across chunks needs no decoder. A partial line waits
// as a list of chunks joined once when its newline arrives (a long line spans many chunks; joining on every
// chunk would be quadratic). With `maxLineBytes`, a line over it is reported once through `onOversize` and
// its bytes are dropped up to its newline, so memory stays bounded by the limit.

export interface LineSink {
  /** A complete line, without its "\n" (a "\r" before it is kept). Valid only during the call. */
  onLine(line: Buffer): void;
  /** A line passed `maxLineBytes`; it is dropped. */
  onOversize?(): void;
}

export class LineFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line is over the limit: drop bytes until its newline. */
  private discarding = false;
  private stopped = false;

  constructor(
    private readonly sink: LineSink,
    private readonly maxLineBytes = Infinity,
  ) {}

  /** Feeds one chunk; every line it completes goes to the sink, in order, until `stop()`. */
  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1 && !this.stopped; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.discarding) {
        this.discarding = false;
        continue;
      }
      this.emit(this.take(piece));
    }
    if (this.stopped || this.discarding || start >= chunk.length) return;
    this.pending.push(chunk.subarray(start));
    this.pendingBytes += chunk.length - start;
    if (this.pendingBytes > this.maxLineBytes) {
      this.drop();
      this.discarding = true;
      this.sink.onOversize?.();
    }
  }

  /** The stream ended: a last line without a newline is complete. */
  end(): void {
    const last = this.stopped || this.discarding || !this.pending.length ? undefined : this.take();
    this.drop();
    if (last) this.emit(last);
  }

  /** No more lines are wanted: the rest of this chunk and later ones are ignored. */
  stop(): void {
    this.stopped = true;
    this.drop();
  }

  /** The pending bytes joined with `tail`, and the pending list emptied. */
  private take(tail?: Buffer): Buffer {
    if (!this.pending.length) return tail ?? Buffer.alloc(0);
    const parts = tail ? [...this.pending, tail] : this.pending;
    const line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    this.drop();
    return line;
  }

  private drop(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }

  private emit(line: Buffer): void {
    if (line.length > this.maxLineBytes) this.sink.onOversize?.();
    else this.sink.onLine(line);
  }
}
