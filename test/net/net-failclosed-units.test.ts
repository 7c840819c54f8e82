// The proxy's fairness and socket paths as units (docs/security-model.md#network-per-mode): the proxy listening
// at a path far past the unix-socket limit (bytes moved by the server and by wb-netrelay, whose hand-over socket
// is as long), the per-command limit (a command past it reads 503 naming it; another command still tunnels;
// connections without a credential share one allowance), and the ties of credentials to origins.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { MAX_PER_COMMAND } from '../../src/process/net/net-decision.js';
import { OriginTies, type Tied } from '../../src/process/net/net-origins.js';
import { NetProxy } from '../../src/process/net/net-proxy.js';
import { builtProgram } from '../../src/process/native.js';
import { MAX_SOCKET_PATH, SocketPaths } from '../../src/process/net/socket-path.js';
import { needBuilt } from '../helpers/native.js';

describe('origin ties', () => {
  it('a credential is tied to the first origin it is used from, an origin to the first credential on it', () => {
    const ties = new OriginTies<Tied & { n: string }>();
    const a = { n: 'a' } as Tied & { n: string };
    const b = { n: 'b' } as Tied & { n: string };
    expect(ties.resolve(a, 0)).toBe(a); // the socket itself, before any tie: as it comes
    expect(ties.resolve(a, 1)).toBe(a);
    expect(ties.resolve(a, 1)).toBe(a);
    expect(ties.resolve(a, 2)).toBe('foreign'); // a's credential from another sandbox
    expect(ties.resolve(a, 0)).toBe('foreign'); // or on the socket itself, once tied
    expect(ties.resolve(b, 1)).toBe('foreign'); // another credential on a's sandbox
    expect(ties.resolve(undefined, 1)).toBe(a); // no credential: counted as the sandbox's command
    expect(ties.resolve(b, 2)).toBe(b);
    ties.forget(a);
    expect(ties.owner(1)).toBeUndefined();
    ties.reset([a, b]);
    expect(ties.resolve(b, 1)).toBe(b); // a new relay numbers from 1 again
  });
});

/** Opens a CONNECT on the proxy's socket and resolves with the answer's head (and body, when refused). */
function connect(
  sock: string,
  target: string,
  token?: string,
): Promise<{ head: string; socket: net.Socket }> {
  const auth = token ? `Proxy-Authorization: Basic ${Buffer.from(`wb:${token}`).toString('base64')}\r\n` : '';
  return new Promise((resolve, reject) => {
    const s = net.connect(sock);
    let got = '';
    const done = () => resolve({ head: got, socket: s });
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (got.startsWith('HTTP/1.1 200') && got.includes('\r\n\r\n')) done();
    });
    s.on('end', done);
    s.on('error', reject);
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  });
}

describe.each(['server', 'relay'] as const)('the proxy at a long path, bytes moved by the %s', (plane) => {
  const top = mkdtempSync(path.join(tmpdir(), 'wb-proxy-long-'));
  const dir = path.join(top, 'd'.repeat(60), 'e'.repeat(60));
  const sock = path.join(dir, 'proxy.sock');
  const paths = new SocketPaths();
  const runs = plane === 'server' || needBuilt(['wb-netrelay'], 'the proxy through wb-netrelay');
  const check = it.skipIf(!runs);
  const relay = builtProgram('wb-netrelay');
  let proxy: NetProxy;
  let upstream: http.Server;
  let port = 0;
  const open: net.Socket[] = [];

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    upstream = http.createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    port = (upstream.address() as AddressInfo).port;
    if (!runs) return;
    proxy = new NetProxy({
      socketPath: sock,
      rules: { allow: ['*'], deny: [], allowPrivate: ['up.test'] },
      testResolve: { 'up.test': ['127.0.0.1'] },
      clock: systemClock,
      onDecision: () => {},
      ...(plane === 'relay' && relay
        ? { relay: { program: relay, serverPath: path.join(dir, 'server.sock') } }
        : {}),
    });
    proxy.listen();
    await proxy.ready();
  });
  afterAll(async () => {
    for (const s of open) s.destroy();
    await proxy?.close();
    paths.close();
    upstream?.close();
    rmSync(top, { recursive: true, force: true });
  });

  check(
    'listens, tunnels, and forwards an absolute-URI request, though its paths do not fit a unix socket',
    async () => {
      expect(Buffer.byteLength(`${sock}.server`)).toBeGreaterThan(MAX_SOCKET_PATH);
      expect(proxy.dataPlane).toBe(plane);
      const at = paths.at(sock);
      expect(at).toMatch(/^\/proc\/self\/fd\/\d+\/proxy\.sock$/);
      const t = await connect(at, `up.test:${port}`);
      open.push(t.socket);
      expect(t.head).toMatch(/^HTTP\/1\.1 200 /);
      const body = await new Promise<string>((resolve, reject) => {
        const s = net.connect(at);
        let got = '';
        s.on('data', (d) => (got += d.toString()));
        s.on('end', () => resolve(got));
        s.on('error', reject);
        s.write(
          `GET http://up.test:${port}/abs HTTP/1.1\r\nHost: up.test:${port}\r\nConnection: close\r\n\r\n`,
        );
      });
      expect(body).toContain('hello /abs');
    },
  );

  check(
    `one command gets ${MAX_PER_COMMAND} connections, then 503 naming its limit; another still tunnels`,
    async () => {
      const at = paths.at(sock);
      proxy.register('tok-a', 'cmd-a');
      proxy.register('tok-b', 'cmd-b');
      for (let i = 0; i < MAX_PER_COMMAND; i++) {
        const t = await connect(at, `up.test:${port}`, 'tok-a');
        open.push(t.socket);
        expect(t.head, `tunnel ${i}`).toMatch(/^HTTP\/1\.1 200 /);
      }
      const over = await connect(at, `up.test:${port}`, 'tok-a');
      expect(over.head).toMatch(/^HTTP\/1\.1 503 /);
      expect(over.head).toContain(`${MAX_PER_COMMAND} connections through the proxy, its per-command limit`);
      const other = await connect(at, `up.test:${port}`, 'tok-b');
      open.push(other.socket);
      expect(other.head).toMatch(/^HTTP\/1\.1 200 /);
      // Its end frees the allowance.
      proxy.revoke('tok-a');
      proxy.register('tok-a2', 'cmd-a2');
      const again = await connect(at, `up.test:${port}`, 'tok-a2');
      open.push(again.socket);
      expect(again.head).toMatch(/^HTTP\/1\.1 200 /);
    },
  );
});
