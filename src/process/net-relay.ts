// Pieces of the filtering proxy (net-proxy.ts) that hold no policy: the read buffers of a tunnel, the CONNECT
// target's parsing, and the plain-text answers the proxy sends.
import type { ServerResponse } from 'node:http';
import { normalizeHost } from './net-allow.js';

/** A quiet tunnel holds a read buffer this small; a bulk transfer's reads grow to RELAY_MAX. */
const RELAY_MIN = 64 * 1024;
/**
 * Reads into buffers of the tunnel's own that go straight to the client and are reused once written (no copy,
 * no fresh memory per read). Reads that fill their buffer double the next one up to 1 MiB, so a download costs
 * about one read per 256 KiB (what loopback TCP hands over at once) instead of one per 64 KiB, while a quiet
 * tunnel keeps only 64 KiB: with 1 MiB instead of 256 KiB reads the proxy's CPU per 20 MB download fell by
 * about a fifth (bench/proxy-bench.mjs). At most RELAY_SPARE buffers wait for reuse.
 */
const RELAY_MAX = 1024 * 1024;
const RELAY_SPARE = 2;

/** The read buffers of one tunnel (upstream → client). */
export class RelayBuffers {
  private size = RELAY_MIN;
  private readonly spare: Buffer[] = [];

  /** The buffer the next read goes into. */
  next(): Buffer {
    const b = this.spare.pop();
    return b && b.length === this.size ? b : Buffer.allocUnsafe(this.size);
  }

  /** A read of `n` bytes into `buf`: a full buffer doubles the next size, a mostly empty one halves it. */
  filled(n: number, buf: Buffer): void {
    if (n === buf.length) this.size = Math.min(this.size * 2, RELAY_MAX);
    else if (n < buf.length / 4) this.size = Math.max(this.size / 2, RELAY_MIN);
  }

  /** `buf` was written to the client: kept for a later read when it is of the current size. */
  release(buf: Buffer): void {
    if (buf.length === this.size && this.spare.length < RELAY_SPARE) this.spare.push(buf);
  }
}

/** `host:port` of a CONNECT (IPv6 in brackets), normalized; undefined when malformed. */
export function parseAuthority(s: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s]+):(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const host = normalizeHost(m[1] as string);
  const port = Number(m[2]);
  return host && port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** A whole plain-text HTTP answer on a raw socket (CONNECT), closing it. */
export function reply(status: number, text: string, body: string): string {
  return (
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** A plain-text answer to an absolute-URI request, closing the connection. */
export function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}
