// stdio transport: newline-delimited JSON-RPC on stdin/stdout, both eras, no auth (the parent process is the
// client). stdout carries protocol messages only. Requests run concurrently (a command poll may wait), each
// answered when done; EOF waits for what is in flight, then resolves so the caller can shut down. `onSettled`
// runs once, when the client's opening requests (initialize, tools/list …) are answered: the warm-up after
// start blocks for some milliseconds and must not delay them (docs/architecture.md). A tools/call that comes
// first needs what the warm-up starts, so it starts it at once, in parallel, instead of waiting.
import type { Readable, Writable } from 'node:stream';
import { STDIO_PRINCIPAL } from '../core/principal.js';
import { classify } from '../protocol/classify.js';
import { Dispatcher } from '../protocol/dispatch.js';
import { errorBody, INVALID_REQUEST, ProtocolError } from '../protocol/errors.js';
import { parseMessage } from '../protocol/jsonrpc.js';
import type { ProtocolHost } from '../protocol/host.js';

/** Settled: every message so far is handled and no input came for this long. */
const SETTLE_MS = 50;

export function serveStdio(
  runtime: ProtocolHost,
  input: Readable,
  output: Writable,
  onSettled?: () => void,
): Promise<void> {
  const dispatcher = new Dispatcher(runtime);
  const limit = runtime.config.maxRequestBytes;
  const inFlight = new Set<Promise<void>>();
  // When the client closes its end of stdout, writes fail with EPIPE: that is the client leaving, like EOF,
  // not a crash (an unhandled 'error' would exit 1 and skip the clean shutdown of the runtime).
  let outputGone = false;
  const write = (line: string) => {
    if (!outputGone) output.write(line + '\n');
  };
  let settle = onSettled;
  let settleTimer: NodeJS.Timeout | undefined;
  const settleNow = () => {
    clearTimeout(settleTimer);
    const f = settle;
    settle = undefined;
    f?.();
  };
  const settleLater = () => {
    clearTimeout(settleTimer);
    if (settle && inFlight.size === 0) settleTimer = setTimeout(settleNow, SETTLE_MS);
  };
  // The byte limit, for one whole line or a line still being received.
  const tooBig = (s: string) => s.length > limit || (s.length * 3 > limit && Buffer.byteLength(s) > limit);
  const tooBigError = () =>
    errorBody(null, new ProtocolError(INVALID_REQUEST, `Invalid Request: message over ${limit} bytes`));

  const traced = runtime.config.logLevel === 'debug';
  const handleLine = async (line: string): Promise<void> => {
    if (line.trim() === '') return;
    const parsed = parseMessage(line, 'stdio');
    if (!parsed.ok) return void write(errorBody(parsed.id, parsed.error));
    const msg = parsed.msg;
    if (msg.kind === 'response') return;
    const cls = classify(msg, null);
    if (!cls.ok) {
      if (msg.kind === 'request') write(errorBody(msg.id, cls.error));
      return;
    }
    if (msg.kind === 'request' && msg.method === 'tools/call') settleNow();
    const started = traced ? performance.now() : 0;
    const reply = await dispatcher.handle(msg, cls, STDIO_PRINCIPAL, runtime.signal);
    if (reply.body !== null) write(reply.body.toString());
    // The request log (docs/configuration.md "Logs"), as over HTTP; the status is the one HTTP would carry.
    if (traced) {
      const name = (msg.params as { name?: unknown } | undefined)?.name;
      runtime.log.debug('request', {
        transport: 'stdio',
        method: msg.method.slice(0, 64),
        tool: msg.method === 'tools/call' && typeof name === 'string' ? name.slice(0, 64) : undefined,
        status: reply.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        client: 'stdio',
      });
    }
  };

  return new Promise((resolve) => {
    let pending = '';
    let discarding = false;
    let finished = false;
    const finish = async () => {
      if (finished) return;
      finished = true;
      clearTimeout(settleTimer);
      settle = undefined;
      while (inFlight.size) await Promise.allSettled([...inFlight]);
      resolve();
    };
    output.on('error', (e: NodeJS.ErrnoException) => {
      if (!outputGone)
        runtime.log.info('stdout closed by the client; shutting down', { code: e.code ?? String(e) });
      outputGone = true;
      input.pause();
      void finish();
    });
    const run = (line: string) => {
      const p = handleLine(line).catch((e) =>
        runtime.log.error('stdio request failed', { error: String(e) }),
      );
      inFlight.add(p);
      void p.finally(() => {
        inFlight.delete(p);
        settleLater();
      });
    };
    input.setEncoding?.('utf8');
    input.on('data', (chunk: string) => {
      clearTimeout(settleTimer);
      let start = 0;
      let nl: number;
      while ((nl = chunk.indexOf('\n', start)) !== -1) {
        const piece = chunk.slice(start, nl);
        start = nl + 1;
        if (discarding) {
          discarding = false;
          pending = '';
          continue;
        }
        const line = pending + piece;
        pending = '';
        if (tooBig(line)) write(tooBigError());
        else run(line);
      }
      if (!discarding) pending += chunk.slice(start);
      if (!discarding && tooBig(pending)) {
        pending = '';
        discarding = true;
        write(tooBigError());
      }
    });
    input.on('end', () => {
      if (pending.trim() && !discarding && !finished) run(pending);
      void finish();
    });
  });
}
