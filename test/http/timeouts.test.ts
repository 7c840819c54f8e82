// Slow clients and connection reuse on the node:http front (docs/http.md#limits-and-timeouts: HTTP/1.1
// keep-alive, request header and body timeouts, no slowloris; 10 s to receive headers, 30 s to receive a
// body). The timeouts are shortened here through the server's limits so the test takes seconds; the defaults
// are checked as configured values. No upper bound is near the shortened limit: a busy machine fires timers
// late, so "on time" means before the much longer default would have acted.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { createHttpServer, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/http/server.js';
import { BearerAuthenticator } from '../../src/auth/authenticate.js';
import { load } from '../../src/config/load.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { checkRoot } from '../../src/workspace/paths.js';
import { startInProcess, TEST_TOKEN, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { bearer, request, send } from '../helpers/raw-http.js';

const HEADERS_MS = 400;
const REQUEST_MS = 1200;

let ws: TempWorkspace;
let s: InProcessServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  s = await startInProcess({
    workspace: ws.dir,
    limits: { headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS },
  });
});
afterAll(async () => {
  await s?.close();
  ws?.cleanup();
});

/** Connect, run `feed` on the socket, and resolve with what came back and when the server closed it. */
function watch(
  feed: (sock: net.Socket) => void,
  limitMs = 60_000,
): Promise<{ closedAfterMs: number; firstLine: string }> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let data = '';
    const sock = net.connect(Number(u.port), u.hostname, () => feed(sock));
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`server kept the connection open for ${limitMs} ms`));
    }, limitMs);
    sock.on('data', (d) => (data += d.toString()));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ closedAfterMs: Date.now() - t0, firstLine: data.split('\r\n')[0] ?? '' });
    });
  });
}

describe('no slowloris: header and body timeouts are enforced on time', () => {
  it('a connection that sends nothing is closed after the header timeout', async () => {
    const r = await watch(() => undefined);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(r.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS); // the configured limit acted, not the default
  });

  it('headers that never finish → 408 and closed after the header timeout, even when they keep trickling in', async () => {
    for (const feed of [
      (sock: net.Socket) => sock.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
      (sock: net.Socket) => {
        sock.write('POST /mcp HTTP/1.1\r\n');
        const iv = setInterval(() => sock.writable && sock.write('X-Drip: 1\r\n'), 50);
        sock.on('close', () => clearInterval(iv));
      },
    ]) {
      const r = await watch(feed);
      expect(r.firstLine).toMatch(/^HTTP\/1\.1 408/);
      expect(r.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS);
    }
  });

  it('a body that never finishes → 408 and closed after the request timeout', async () => {
    const r = await watch((sock) =>
      sock.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TEST_TOKEN}\r\nContent-Length: 100\r\n\r\n{`,
      ),
    );
    expect(r.firstLine).toMatch(/^HTTP\/1\.1 408/);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(r.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it('the server keeps serving after slow clients were cut off', async () => {
    expect((await send(s.url, request('handshake', 'ping'), bearer())).status).toBe(200);
  });

  it('defaults: 10 s for headers, 30 s for the whole request, swept at least every second', async () => {
    expect(HEADERS_TIMEOUT_MS).toBe(10_000);
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    const env = { PATH: process.env.PATH ?? '', SERVICE_AUTH_TOKEN: TEST_TOKEN };
    const action = load(['--workspace', ws.dir], env, ws.dir);
    if (action.kind !== 'serve') throw new Error('unexpected');
    const rc = checkRoot(ws.dir, '/nonexistent-home');
    if (!rc.ok) throw new Error(rc.reason);
    const runtime = new Runtime({ config: action.config, root: rc.root, log: silentLogger });
    try {
      await runtime.start();
      const server = createHttpServer({
        runtime,
        authenticator: new BearerAuthenticator([TEST_TOKEN]),
      }) as http.Server & { connectionsCheckingInterval: number };
      expect(server.headersTimeout).toBe(10_000);
      expect(server.requestTimeout).toBe(30_000);
      expect(server.connectionsCheckingInterval).toBeLessThanOrEqual(1000);
    } finally {
      await runtime.shutdown();
    }
  });
});

describe('HTTP/1.1 keep-alive', () => {
  it('several requests of both eras share one connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const u = new URL(s.url);
    const ports = new Set<number>();
    try {
      for (const era of ['handshake', 'modern', 'handshake', 'modern'] as const) {
        const msg = request(era, 'tools/list');
        const body = JSON.stringify(msg.body);
        const status = await new Promise<number>((resolve, reject) => {
          const req = http.request(
            {
              host: u.hostname,
              port: u.port,
              path: '/mcp',
              method: 'POST',
              agent,
              headers: { ...msg.headers, ...bearer(), 'content-length': String(Buffer.byteLength(body)) },
            },
            (res) => {
              ports.add(res.socket.localPort ?? -1);
              expect(res.headers.connection ?? 'keep-alive').toMatch(/keep-alive/i);
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
        expect(status).toBe(200);
      }
    } finally {
      agent.destroy();
    }
    expect(ports.size).toBe(1);
  });
});
