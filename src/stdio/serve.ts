// stdio transport: newline-delimited JSON-RPC on stdin/stdout, both eras, no auth (the parent process is the
// client). stdout carries protocol messages only. Requests run concurrently (a command poll may wait), each
// answered when done; EOF waits for what is in flight, then resolves so the caller can shut down. `onSettled`
// runs once, when the client's opening requests (initialize, tools/list …) are answered: the warm-up after
// start blocks for some milliseconds and must not delay them (docs/architecture.md). A tools/call that comes
// first needs what the warm-up starts, so it starts it at once, in parallel, instead of waiting.
import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../core/text/line-framer.js';
import { STDIO_PRINCIPAL } from '../core/principal.js';
import { classify } from '../protocol/classify.js';
import { Dispatcher } from '../protocol/dispatch.js';
import { errorBody, INVALID_REQUEST, ProtocolError } from '../protocol/errors.js';
import { parseMessage } from '../protocol/jsonrpc.js';
import type { ProtocolHost } from '../protocol/host.js';
import { systemClock } from '../core/clock.js';

/** Settled: every message so far is handled and no input came for this long. */
const SETTLE_MS = 50;

export function serveStdio(
  runtime: ProtocolHost,
  input: Readable,
  output: Writable,
  onSettled?: () => void,
): Promise<void> {
  return new StdioSession(runtime, output, onSettled).serve(input);
}

/** One client on stdin/stdout: what is in flight, whether stdout is still open, and the settle timer. */
class StdioSession {
  private readonly dispatcher: Dispatcher;
  private readonly limit: number;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly traced: boolean;
  // When the client closes its end of stdout, writes fail with EPIPE: that is the client leaving, like EOF,
  // not a crash (an unhandled 'error' would exit 1 and skip the clean shutdown of the runtime).
  private outputGone = false;
  private finished = false;
  private settleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runtime: ProtocolHost,
    private readonly output: Writable,
    private settle: (() => void) | undefined,
  ) {
    this.dispatcher = new Dispatcher(runtime);
    this.limit = runtime.config.maxRequestBytes;
    this.traced = runtime.config.logLevel === 'debug';
  }

  serve(input: Readable): Promise<void> {
    return new Promise((resolve) => {
      this.output.on('error', (e: NodeJS.ErrnoException) => {
        if (!this.outputGone)
          this.runtime.log.info('stdout closed by the client; shutting down', { code: e.code ?? String(e) });
        this.outputGone = true;
        input.pause();
        void this.finish(resolve);
      });
      // The byte limit holds for one whole line and for a line still being received.
      const lines = new LineFramer(
        { onLine: (b) => this.run(b.toString('utf8')), onOversize: () => this.write(this.tooBigError()) },
        this.limit,
      );
      input.on('data', (chunk: Buffer) => {
        clearTimeout(this.settleTimer);
        lines.push(chunk);
      });
      input.on('end', () => {
        if (!this.finished) lines.end();
        void this.finish(resolve);
      });
    });
  }

  private async finish(resolve: () => void): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.settleTimer);
    this.settle = undefined;
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
    resolve();
  }

  private write(line: string): void {
    if (!this.outputGone) this.output.write(line + '\n');
  }

  private settleNow(): void {
    clearTimeout(this.settleTimer);
    const f = this.settle;
    this.settle = undefined;
    f?.();
  }

  private settleLater(): void {
    clearTimeout(this.settleTimer);
    if (this.settle && this.inFlight.size === 0)
      this.settleTimer = setTimeout(() => this.settleNow(), SETTLE_MS);
  }

  private tooBigError(): string {
    return errorBody(
      null,
      new ProtocolError(INVALID_REQUEST, `Invalid Request: message over ${this.limit} bytes`),
    );
  }

  private run(line: string): void {
    const p = this.handleLine(line).catch((e) =>
      this.runtime.log.error('stdio request failed', { error: String(e) }),
    );
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      this.settleLater();
    });
  }

  private async handleLine(line: string): Promise<void> {
    if (line.trim() === '') return;
    const parsed = parseMessage(line, 'stdio');
    if (!parsed.ok) return void this.write(errorBody(parsed.id, parsed.error));
    const msg = parsed.msg;
    if (msg.kind === 'response') return;
    const cls = classify(msg, null);
    if (!cls.ok) {
      if (msg.kind === 'request') this.write(errorBody(msg.id, cls.error));
      return;
    }
    if (msg.kind === 'request' && msg.method === 'tools/call') this.settleNow();
    const started = this.traced ? systemClock.monotonic() : 0;
    const reply = await this.dispatcher.handle(msg, cls, STDIO_PRINCIPAL, this.runtime.signal);
    if (reply.body !== null) this.write(reply.body.toString());
    if (this.traced) this.logRequest(msg, reply.status, started);
  }

  /** The request log (docs/configuration.md "Logs"), as over HTTP; the status is the one HTTP would carry. */
  private logRequest(msg: { method: string; params?: unknown }, status: number, started: number): void {
    const name = (msg.params as { name?: unknown } | undefined)?.name;
    this.runtime.log.debug('request', {
      transport: 'stdio',
      method: msg.method.slice(0, 64),
      tool: msg.method === 'tools/call' && typeof name === 'string' ? name.slice(0, 64) : undefined,
      status,
      ms: Math.round((systemClock.monotonic() - started) * 100) / 100,
      client: 'stdio',
    });
  }
}
