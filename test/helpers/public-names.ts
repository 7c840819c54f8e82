// Real-shaped public names for tunnel and doctor tests (docs/design-notes.md#tests): as root, the test maps
// its hosts (*.trycloudflare.com, *.ngrok-free.app, *.devtunnels.ms) to a loopback address of its own in
// /etc/hosts for the run — under a lock, since test files run in parallel, and removed again afterwards even
// on failure — and serves TLS on <that address>:443 with a throwaway self-signed certificate (openssl) that
// clients trust through NODE_EXTRA_CA_CERTS. The proxy forwards each host as the stand-in provider registered
// it (route files), with that provider's header style, so a printed https://<host>/mcp really answers.
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HUNG_MS } from '../exec/exec-support.js';
import { replyOf } from './raw-http.js';
import { selfSignedCert } from './tls-cert.js';

const HOSTS = '/etc/hosts';
const LOCK = path.join(tmpdir(), 'wb-etc-hosts.lock');

/** True when the tunnel tests can run; otherwise prints why (and under CI=true throws instead of skipping). */
export function needRoot(what: string): boolean {
  if (process.getuid?.() === 0) return true;
  const reason = 'mapping public names in /etc/hosts and serving TLS on port 443 need root';
  if (process.env.CI === 'true') throw new Error(`${what} must run under CI=true, but ${reason}`);
  console.log(`SKIP ${what}: ${reason}`);
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function withHostsLock<T>(fn: () => T): Promise<T> {
  const end = Date.now() + HUNG_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
      break;
    } catch {
      let owner = 0;
      try {
        owner = Number(readFileSync(path.join(LOCK, 'pid'), 'utf8'));
      } catch {
        /* being created or removed */
      }
      if (owner && !alive(owner)) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > end) throw new Error(`${LOCK} stayed locked`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  try {
    return fn();
  } finally {
    rmSync(path.join(LOCK, 'pid'), { force: true });
    rmdirSync(LOCK);
  }
}

const MARK = /# wb-public-names pid=(\d+)$/;

/**
 * Replaces /etc/hosts' contents without ever leaving it empty: written over from the start, then cut to length.
 * (A truncating write let another test's name lookup find no file for a moment; a rename fails where /etc/hosts
 * is a bind mount.) Other processes' lines keep their text, so a lookup meanwhile still finds them.
 */
function rewriteHosts(text: string): void {
  const fd = openSync(HOSTS, 'r+');
  try {
    const b = Buffer.from(text);
    writeSync(fd, b, 0, b.length, 0);
    ftruncateSync(fd, b.length);
  } finally {
    closeSync(fd);
  }
}

/** Adds `ip host` lines for this process; returns the function that removes them (also run on exit). */
export async function mapNames(ip: string, hosts: readonly string[]): Promise<() => Promise<void>> {
  const tag = `# wb-public-names pid=${process.pid}`;
  await withHostsLock(() => {
    // Lines left by a test process that died without cleaning up go too.
    const kept = readFileSync(HOSTS, 'utf8')
      .split('\n')
      .filter((l) => {
        const m = MARK.exec(l);
        return !m || alive(Number(m[1]));
      });
    while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
    rewriteHosts([...kept, ...hosts.map((h) => `${ip} ${h} ${tag}`), ''].join('\n'));
  });
  const removeSync = () => {
    const text = readFileSync(HOSTS, 'utf8');
    rewriteHosts(
      text
        .split('\n')
        .filter((l) => !l.endsWith(tag))
        .join('\n'),
    );
  };
  process.once('exit', removeSync);
  return async () => {
    process.off('exit', removeSync);
    await withHostsLock(removeSync);
  };
}

/** A throwaway self-signed certificate for these names; returns the directory with key.pem and cert.pem. */
export function makeCert(hosts: readonly string[]): string {
  return selfSignedCert(hosts).dir;
}

export interface Route {
  port: number;
  /** cloudflare / ngrok keep Host; devtunnel and `loopback` rewrite it to the local address. */
  style: 'cloudflare' | 'ngrok' | 'devtunnel' | 'loopback';
  pid?: number;
}

/** Writes a route as a stand-in would (for tests that publish a server without a stand-in). */
export function writeRoute(routesDir: string, host: string, route: Route): void {
  mkdirSync(routesDir, { recursive: true });
  writeFileSync(path.join(routesDir, `${host}.json`), JSON.stringify(route));
}

function readRoute(routesDir: string, host: string): Route | undefined {
  try {
    const r = JSON.parse(readFileSync(path.join(routesDir, `${path.basename(host)}.json`), 'utf8')) as Route;
    return r.pid === undefined || alive(r.pid) ? r : undefined;
  } catch {
    return undefined;
  }
}

/** The headers each provider's edge sends to the local server (docs/remote-access.md#providers). */
function forwardHeaders(req: http.IncomingMessage, host: string, route: Route): http.OutgoingHttpHeaders {
  const h: http.OutgoingHttpHeaders = { ...req.headers };
  const client = '203.0.113.7';
  h['x-forwarded-for'] = client;
  h['x-forwarded-proto'] = 'https';
  if (route.style === 'cloudflare') {
    h['cf-connecting-ip'] = client;
    h['cf-ray'] = '8c1f2e0a7b3d4e5f-AMS';
  } else if (route.style === 'ngrok') {
    h['x-forwarded-host'] = host;
  } else {
    // devtunnel's relay (and a proxy that rewrites Host) sends the local address as Host.
    h.host = `${route.style === 'devtunnel' ? 'localhost' : '127.0.0.1'}:${route.port}`;
    h['x-forwarded-host'] = host;
  }
  return h;
}

/** TLS on ip:443; each request goes to the route its Host names, 502 when no live stand-in published it. */
export async function startProxy(ip: string, certDir: string, routesDir: string): Promise<https.Server> {
  const server = https.createServer(
    { key: readFileSync(path.join(certDir, 'key.pem')), cert: readFileSync(path.join(certDir, 'cert.pem')) },
    (req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      const route = readRoute(routesDir, host);
      if (!route)
        return void res.writeHead(502, { 'content-type': 'text/plain' }).end(`no tunnel for ${host}\n`);
      const up = http.request(
        {
          // Each request on a connection of its own, as the pooled one may be closing (keep-alive timeout).
          agent: false,
          host: '127.0.0.1',
          port: route.port,
          method: req.method,
          path: req.url,
          headers: forwardHeaders(req, host, route),
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(443, ip, () => resolve());
  });
  return server;
}

export async function stopProxy(server: https.Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

export function removeDir(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

export interface PublishedNames {
  /** The certificate of the names, as a CA for clients to trust, and its file (for NODE_EXTRA_CA_CERTS). */
  ca: Buffer;
  caFile: string;
  /** Stops the proxy, removes the /etc/hosts entries and the certificate. */
  close(): Promise<void>;
}

/** `hosts` published on `ip`: a certificate for them, the /etc/hosts entries, the proxy routed by `routesDir`. */
export async function publishNames(
  ip: string,
  hosts: readonly string[],
  routesDir: string,
): Promise<PublishedNames> {
  const certDir = makeCert(hosts);
  let unmap: (() => Promise<void>) | undefined;
  let proxy: https.Server | undefined;
  const close = async () => {
    await stopProxy(proxy);
    await unmap?.();
    removeDir(certDir);
  };
  try {
    unmap = await mapNames(ip, hosts);
    proxy = await startProxy(ip, certDir, routesDir);
  } catch (e) {
    await close();
    throw e;
  }
  const caFile = path.join(certDir, 'cert.pem');
  return { ca: readFileSync(caFile), caFile, close };
}

export interface TlsReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A request from the test process itself, resolving names through /etc/hosts and trusting `ca`. */
export function tlsRequest(
  url: string,
  ca: Buffer,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    // A connection of its own (agent: false): Node's global agent keeps sockets alive, and one the proxy closed
    // after its keep-alive timeout, reused by the next request, is a reset (seen when a tunnel restart took 5 s).
    const req = https.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, ca, agent: false },
      (res) => replyOf(res, resolve),
    );
    req.setTimeout(HUNG_MS, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A handshake-era tools/list body with a bearer token, as a client sends it. */
export function toolsListRequest(token: string) {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  };
}
