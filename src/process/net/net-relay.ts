// Pieces of the filtering proxy (net-proxy.ts) that hold no policy: moving the bytes of an allowed CONNECT tunnel
// or plain-http request (to the address the proxy checked), the read buffers of a tunnel, the CONNECT target's
// parsing, and the plain-text answers the proxy sends.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
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
  // Brackets may hold a zone id (`%eth0`, `%25eth0`); normalizeHost judges what is inside.
  const m = /^(\[[0-9a-zA-Z:.%_-]+\]|[^:[\]/\s]+):(\d{1,5})$/.exec(s);
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

/** The answer to a CONNECT whose checked address could not be reached. */
export function unreachable(host: string, port: number, address: string): string {
  return reply(
    502,
    'Bad Gateway',
    `workbench-mcp proxy: ${host}:${port} (${address}) could not be reached.\n`,
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

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(h: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** The request line's target when it is an absolute http:// URL (a proxy request), else undefined. */
export function absoluteHttpUrl(target: string | undefined): URL | undefined {
  try {
    if (!/^http:\/\//i.test(target ?? '')) return undefined;
    // The URL parser knows no zone ids: one in the brackets (`[fe80::1%25eth0]`) is dropped, the address kept.
    return new URL(
      (target as string).replace(/^(http:\/\/(?:[^/?#@[]*@)?\[[^\]%/]*)%(?:25)?[\w.-]{1,32}\]/i, '$1]'),
    );
  } catch {
    return undefined;
  }
}

export interface TunnelSpec {
  socket: Duplex;
  host: string;
  port: number;
  /** The address the proxy checked: connected to as is (no second lookup). */
  address: string;
  head: Buffer;
  connectTimeoutMs: number;
  idleMs: number;
  onClose: () => void;
}

/** An allowed CONNECT: the upstream connection, then bytes both ways until either side ends or idles. */
export function openTunnel(t: TunnelSpec): void {
  const { socket } = t;
  let open = false;
  const buffers = new RelayBuffers();
  const relay = (n: number, buf: Buffer): boolean => {
    buffers.filled(n, buf);
    if (!socket.write(buf.subarray(0, n), () => buffers.release(buf))) {
      up.pause();
      socket.once('drain', () => up.resume());
    }
    return true;
  };
  const up = net.connect({
    host: t.address,
    port: t.port,
    family: isIP(t.address),
    onread: { buffer: () => buffers.next(), callback: relay },
  });
  const fail = () => {
    if (!open && socket.writable) socket.end(unreachable(t.host, t.port, t.address));
    else socket.destroy();
    up.destroy();
  };
  up.setTimeout(t.connectTimeoutMs, fail);
  up.once('error', fail);
  up.once('close', () => {
    socket.destroy();
    t.onClose();
  });
  socket.once('close', () => up.destroy());
  up.once('connect', () => {
    open = true;
    up.setTimeout(t.idleMs, () => up.destroy());
    up.setNoDelay(true);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (t.head.length) up.write(t.head);
    socket.pipe(up);
    up.once('end', () => socket.end());
  });
}

export interface ForwardSpec {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  port: number;
  address: string;
  connectTimeoutMs: number;
  idleMs: number;
  /** Called once, when the exchange is over. */
  onDone: () => void;
}

/** An allowed plain-http request, forwarded to the checked address with the end-to-end headers only. */
export function forwardHttp(f: ForwardSpec): void {
  const { req, res, url } = f;
  const headers = endToEnd(req.headers);
  headers.host = url.host;
  let done = false;
  const finish = () => {
    if (!done) {
      done = true;
      f.onDone();
    }
  };
  const up = http.request({
    host: f.address,
    family: isIP(f.address),
    port: f.port,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    agent: false,
    timeout: f.connectTimeoutMs,
  });
  up.on('socket', (s) => s.once('connect', () => s.setTimeout(f.idleMs)));
  up.on('timeout', () => up.destroy(new Error('timeout')));
  up.on('error', () => {
    finish();
    if (!res.headersSent)
      send(res, 502, `workbench-mcp proxy: ${url.hostname}:${f.port} (${f.address}) could not be reached.\n`);
    else res.destroy();
  });
  up.on('response', (u) => {
    res.writeHead(u.statusCode ?? 502, u.statusMessage, endToEnd(u.headers));
    u.pipe(res);
    u.on('close', finish);
  });
  res.on('close', () => {
    up.destroy();
    finish();
  });
  req.pipe(up);
}
