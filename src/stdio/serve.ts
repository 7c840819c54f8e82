// stdio transport: newline-delimited JSON-RPC on stdin/stdout, both eras, no auth (the parent process is the
// client). stdout carries protocol messages only. Requests run concurrently (a command poll may wait), each
// answered when done; EOF waits for what is in flight, then resolves so the caller can shut down.
import type { Readable, Writable } from 'node:stream';
import { STDIO_PRINCIPAL } from '../auth/principal.js';
import { classify } from '../protocol/classify.js';
import { Dispatcher } from '../protocol/dispatch.js';
import { errorBody, INVALID_REQUEST, ProtocolError } from '../protocol/errors.js';
import { parseMessage } from '../protocol/jsonrpc.js';
import type { Runtime } from '../runtime/runtime.js';

export function serveStdio(runtime: Runtime, input: Readable, output: Writable): Promise<void> {
  const dispatcher = new Dispatcher(runtime);
  const limit = runtime.config.maxRequestBytes;
  const inFlight = new Set<Promise<void>>();
  const write = (line: string) => output.write(line + '\n');

  const handleLine = async (line: string): Promise<void> => {
    if (line.trim() === '') return;
    const parsed = parseMessage(line);
    if (!parsed.ok) return void write(errorBody(parsed.id, parsed.error));
    const msg = parsed.msg;
    if (msg.kind === 'response') return;
    const cls = classify(msg, null);
    if (!cls.ok) {
      if (msg.kind === 'request') write(errorBody(msg.id, cls.error));
      return;
    }
    const reply = await dispatcher.handle(msg, cls, STDIO_PRINCIPAL, runtime.signal);
    if (reply.body !== null) write(reply.body.toString());
  };

  return new Promise((resolve) => {
    let pending = '';
    let discarding = false;
    const run = (line: string) => {
      const p = handleLine(line).catch((e) => runtime.log.error('stdio request failed', { error: String(e) }));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    };
    input.setEncoding?.('utf8');
    input.on('data', (chunk: string) => {
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
        run(pending + piece);
        pending = '';
      }
      if (!discarding) pending += chunk.slice(start);
      if (pending.length > limit) {
        pending = '';
        discarding = true;
        write(errorBody(null, new ProtocolError(INVALID_REQUEST, `Invalid Request: message over ${limit} bytes`)));
      }
    });
    input.on('end', async () => {
      if (pending.trim() && !discarding) run(pending);
      while (inFlight.size) await Promise.allSettled([...inFlight]);
      resolve();
    });
  });
}
