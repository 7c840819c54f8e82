// Request bodies, for /mcp and the OAuth endpoints: read within a limit (a declared length over it is refused
// before reading anything; past it nothing more is kept), and the lingering close of a refused body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type BodyResult = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'aborted' };

export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.resolve({ ok: false, reason: 'too_large' });
  const whole = parsedWhole(req, declared);
  if (whole) return Promise.resolve(whole);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: BodyResult) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) return finish({ ok: false, reason: 'too_large' });
      chunks.push(c);
    });
    req.on('end', () => finish({ ok: true, text: Buffer.concat(chunks, size).toString('utf8') }));
    req.on('error', () => finish({ ok: false, reason: 'aborted' }));
    req.on('close', () => finish({ ok: false, reason: 'aborted' }));
  });
}

/**
 * A body the parser already has whole (all its declared bytes came with the headers, as a small request's do,
 * and were parsed while the request's first steps awaited): taken at once, without the stream's turns for
 * 'data' and 'end'. Undefined when it is still arriving, has no declared length, or is already being read.
 */
function parsedWhole(req: IncomingMessage, declared: number): BodyResult | undefined {
  if (!Number.isFinite(declared) || req.readableFlowing !== null || req.readableLength !== declared)
    return undefined;
  // Without a size, read() of a byte stream hands over everything it holds: here, the whole body.
  const buf = req.read() as Buffer | null;
  return { ok: true, text: buf ? buf.toString('utf8') : '' };
}

/**
 * How long after a refusal, and how many bytes, a body still arriving is read and dropped before closing. The
 * connection holds no request meanwhile, so a full server may close it for a newcomer (connections.ts).
 */
const LINGER_MS = 10_000;
const LINGER_BYTES = 256 * 1024 * 1024;

/**
 * Call before answering a refused body that may still be arriving (a 413): the answer says `Connection: close`,
 * and the connection closes as RFC 9112 §9.6 asks — once the answer is out only our side is closed, and what
 * still arrives is read and dropped (never buffered) until the client closes, LINGER_MS pass or LINGER_BYTES
 * arrive. node:http would close both sides at once, and the reset that meets the body still arriving can
 * overtake the answer (the client then sees EPIPE instead of the 413).
 */
export function lingeringClose(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  const socket = req.socket;
  let dropped = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // node:http ends a `Connection: close` exchange with destroySoon(): end our side, then destroy.
  socket.destroySoon = function endOnly(this: Socket) {
    if (this.writable) this.end();
  };
  req.on('data', (c: Buffer) => {
    dropped += c.length;
    if (dropped > LINGER_BYTES) socket.destroy();
  });
  req.resume();
}
