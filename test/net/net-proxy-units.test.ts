// The filtering proxy of `safe` mode as units (docs/tools.md#network-in-safe-mode): host patterns (deny wins, `*.`
// covers names below only), address kinds after resolution (loopback, private, link-local, metadata, mapped
// IPv6), the `blocked` note's budget, and the proxy itself over its unix socket with a stand-in upstream on
// loopback: CONNECT and absolute-URI requests allowed by name, refusals answered at once with a readable 403,
// a private answer refused unless SERVICE_NETWORK_ALLOW_PRIVATE names it, a per-command grant and its revocation,
// and every decision reported with the command that asked.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fit, NOTE_MAX_BYTES, outputNote, proxyNote } from '../../src/process/commands/blocked.js';
import { Command } from '../../src/process/commands/command.js';
import { ManualClock, systemClock } from '../../src/core/clock.js';
import {
  addressKind,
  checkHost,
  DEFAULT_ALLOW,
  matchesPattern,
  normalizeHost,
  privateAllowed,
} from '../../src/process/net/net-allow.js';
import { load } from '../../src/config/load.js';
import { isHostPattern, isPrivateEntry, testResolve } from '../../src/config/network.js';
import type { NetDecision } from '../../src/process/net/net-decision.js';
import { NetProxy, parseAuthority } from '../../src/process/net/net-proxy.js';
import { builtProgram } from '../../src/process/native.js';
import { needBuilt } from '../helpers/native.js';
import { proxyExchange, until } from '../helpers/raw-http.js';

const HELPERS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../helpers');

describe('host rules', () => {
  it('exact names, *.subdomains (not the apex), * for any; deny wins over allow and grants', () => {
    expect(matchesPattern('example.com', 'example.com')).toBe(true);
    expect(matchesPattern('example.com', 'www.example.com')).toBe(false);
    expect(matchesPattern('*.example.com', 'www.example.com')).toBe(true);
    expect(matchesPattern('*.example.com', 'a.b.example.com')).toBe(true);
    expect(matchesPattern('*.example.com', 'example.com')).toBe(false);
    expect(matchesPattern('*.example.com', 'badexample.com')).toBe(false);
    expect(matchesPattern('*', 'anything.org')).toBe(true);
    const rules = {
      allow: [...DEFAULT_ALLOW, '*.corp.example'],
      deny: ['evil.corp.example'],
      allowPrivate: [],
    };
    expect(checkHost(rules, 'registry.npmjs.org')).toEqual({ ok: true });
    expect(checkHost(rules, 'pypi.org')).toEqual({ ok: true });
    expect(checkHost(rules, 'git.corp.example')).toEqual({ ok: true });
    expect(checkHost(rules, 'evil.corp.example')).toEqual({ ok: false, reason: 'denied' });
    expect(checkHost(rules, 'evil.corp.example', new Set(['*']))).toEqual({ ok: false, reason: 'denied' });
    expect(checkHost(rules, 'example.com')).toEqual({ ok: false, reason: 'not_allowed' });
    expect(checkHost(rules, 'example.com', new Set(['example.com']))).toEqual({ ok: true });
    expect(checkHost(rules, 'other.com', new Set(['example.com']))).toEqual({
      ok: false,
      reason: 'not_allowed',
    });
  });

  it('host names are normalized and malformed ones refused; pattern syntax is checked', () => {
    expect(normalizeHost('Registry.NPMJS.org.')).toBe('registry.npmjs.org');
    expect(normalizeHost('[::1]')).toBe('::1');
    expect(normalizeHost('a b')).toBeUndefined();
    expect(normalizeHost('a..b')).toBeUndefined();
    expect(parseAuthority('Example.com:443')).toEqual({ host: 'example.com', port: 443 });
    expect(parseAuthority('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseAuthority('example.com')).toBeUndefined();
    expect(parseAuthority('example.com:0')).toBeUndefined();
    expect(parseAuthority('example.com:99999')).toBeUndefined();
    for (const p of ['*', 'example.com', '*.example.com', '10.1.2.3']) expect(isHostPattern(p)).toBe(true);
    for (const p of ['*example.com', 'a b', 'http://x', '*.*.x']) expect(isHostPattern(p)).toBe(false);
    for (const e of ['registry.local', '127.0.0.1', '10.0.0.0/8', 'fd00::/8'])
      expect(isPrivateEntry(e)).toBe(true);
    for (const e of ['10.0.0.0/33', 'x/8', '1.2.3.4/8/1']) expect(isPrivateEntry(e)).toBe(false);
  });

  it('addresses: loopback, private, link-local, metadata, shared, multicast, unspecified refused; mapped IPv6 judged as IPv4', () => {
    const cases: Array<[string, string]> = [
      ['93.184.216.34', 'public'],
      ['2606:2800:220:1::1', 'public'],
      ['127.0.0.1', 'loopback'],
      ['127.1.2.3', 'loopback'],
      ['::1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.20.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['fd12::1', 'private'],
      ['169.254.169.254', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['169.254.1.1', 'link-local'],
      ['fe80::1', 'link-local'],
      ['100.100.100.200', 'shared'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['64:ff9b::a9fe:a9fe', 'metadata'],
      ['255.255.255.255', 'reserved'],
    ];
    for (const [ip, kind] of cases) expect([ip, addressKind(ip)]).toEqual([ip, kind]);
    expect(privateAllowed(['registry.local'], 'registry.local', '127.0.0.1')).toBe(true);
    expect(privateAllowed(['registry.local'], 'other.local', '127.0.0.1')).toBe(false);
    expect(privateAllowed(['127.0.0.0/8'], 'x', '127.0.0.1')).toBe(true);
    expect(privateAllowed(['127.0.0.0/8'], 'x', '::ffff:127.0.0.1')).toBe(true);
    expect(privateAllowed(['10.0.0.0/8'], 'x', '127.0.0.1')).toBe(false);
    expect(privateAllowed(['::1'], 'x', '::1')).toBe(true);
  });
});

describe('settings', () => {
  it('SERVICE_NETWORK_* lists are checked at start (a typo names its variable); WB_TEST_RESOLVE is test-only and inert unset', () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'wb-netcfg-'));
    const cfg = (env: Record<string, string>) =>
      load(['--workspace', ws], { SERVICE_AUTH_TOKEN: 'x'.repeat(20), ...env }, ws);
    try {
      const ok = cfg({
        SERVICE_NETWORK_ALLOW: 'github.com, *.githubusercontent.com',
        SERVICE_NETWORK_ALLOW_PRIVATE: '10.0.0.0/8,registry.lan',
      });
      expect(ok.kind === 'serve' && ok.config.networkAllow).toEqual([
        'github.com',
        '*.githubusercontent.com',
      ]);
      expect(ok.kind === 'serve' && ok.config.networkAllowPrivate).toEqual(['10.0.0.0/8', 'registry.lan']);
      expect(ok.kind === 'serve' && ok.config.testResolve).toBeUndefined();
      expect(() => cfg({ SERVICE_NETWORK_ALLOW: 'https://github.com' })).toThrow(
        /SERVICE_NETWORK_ALLOW: "https:\/\/github.com"/,
      );
      expect(() => cfg({ SERVICE_NETWORK_DENY: '*github.com' })).toThrow(/SERVICE_NETWORK_DENY/);
      expect(() => cfg({ SERVICE_NETWORK_ALLOW_PRIVATE: '10.0.0.0/40' })).toThrow(
        /SERVICE_NETWORK_ALLOW_PRIVATE/,
      );
      expect(() => cfg({ WB_TEST_RESOLVE: 'registry.npmjs.org=nowhere' })).toThrow(/WB_TEST_RESOLVE/);
      const r = cfg({ WB_TEST_RESOLVE: 'Registry.npmjs.org=127.0.0.1|::1' });
      expect(r.kind === 'serve' && r.config.testResolve).toEqual({
        'registry.npmjs.org': ['127.0.0.1', '::1'],
      });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
    expect(testResolve(undefined)).toBeUndefined();
  });
});

describe('the blocked note', () => {
  const safe = { mode: 'safe', sandboxed: true, network: 'proxy' } as const;
  it(`fits ${NOTE_MAX_BYTES} bytes of JSON, whatever the host name`, () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.example.com`;
    for (const reason of ['not_allowed', 'denied', 'private_address']) {
      const n = proxyNote({ host: long, port: 443, reason, address: '127.0.0.1', kind: 'loopback' });
      expect(n).toBeDefined();
      expect(Buffer.byteLength(JSON.stringify(n))).toBeLessThanOrEqual(NOTE_MAX_BYTES);
    }
    const short = proxyNote({ host: 'example.com', port: 443, reason: 'not_allowed' });
    expect(short).toEqual({
      what: 'example.com',
      why: 'not on the allow-list',
      next: 'request_permissions {"tool_name":"exec_command","permission":"network","reason":"example.com"}',
    });
    expect(fit({ what: 'x'.repeat(500), why: 'y', next: 'z' }).what.length).toBeLessThan(200);
    expect(proxyNote({ host: 'x', port: 1, reason: 'unresolved' })).toBeUndefined();
  });

  it('read from error output: name lookups, the read-only system, the process limit, masked sockets; nothing else', () => {
    expect(outputNote('curl: (6) Could not resolve host: example.com', safe)?.what).toBe('name lookup');
    expect(outputNote('Error: getaddrinfo ENOTFOUND example.com', safe)?.what).toBe('name lookup');
    expect(outputNote('socket.gaierror: [Errno -3] Temporary failure in name resolution', safe)?.what).toBe(
      'name lookup',
    );
    expect(outputNote("touch: cannot touch '/usr/x': Read-only file system", safe)?.why).toMatch(/read-only/);
    expect(
      outputNote(
        'workbench-mcp: this command reached its limit of 64 processes (SERVICE_EXEC_MAX_PROCESSES)',
        safe,
      )?.why,
    ).toMatch(/64 processes/);
    expect(
      outputNote('Cannot connect to the Docker daemon at unix:///var/run/docker.sock.', safe)?.why,
    ).toMatch(/hidden/);
    expect(outputNote('npm ERR! 404 Not Found', safe)).toBeUndefined();
    // A name lookup failing in trusted with the host's network, or in dangerous mode, is the network's answer,
    // not the sandbox's; trusted behind the proxy has no name lookups of its own either, and is told so.
    expect(
      outputNote('Could not resolve host: x', { ...safe, mode: 'trusted', network: 'host' }),
    ).toBeUndefined();
    expect(outputNote('Could not resolve host: x', { ...safe, mode: 'trusted' })?.why).toMatch(
      /^trusted mode/,
    );
    expect(
      outputNote('Read-only file system', { ...safe, mode: 'dangerous', sandboxed: false }),
    ).toBeUndefined();
    for (const text of ['Could not resolve host: x', 'Read-only file system']) {
      const n = outputNote(text, safe);
      expect(Buffer.byteLength(JSON.stringify(n))).toBeLessThanOrEqual(NOTE_MAX_BYTES);
    }
  });
});

describe('notes on a command', () => {
  const make = (tty = false) =>
    new Command({
      id: 'c1',
      cmd: 'x',
      workdir: '.',
      tty,
      sandboxed: true,
      timeoutMs: 60_000,
      maxOutputBytes: 65_536,
      tailBytes: 1 << 20,
      clock: new ManualClock(),
      notes: { mode: 'safe', sandboxed: true, network: 'proxy' },
    });

  it('a message written in pieces is recognised; stdout is not read unless it is a terminal', () => {
    const c = make();
    c.output('stdout', Buffer.from('Could not resolve host: a\n'));
    expect(c.blocked).toBeUndefined();
    c.output('stderr', Buffer.from('curl: (6) Could not res'));
    c.output('stderr', Buffer.from('olve host: example.com\n'));
    expect(c.blocked?.what).toBe('name lookup');
    const t = make(true);
    t.output('stdout', Buffer.from("touch: cannot touch '/usr/x': Read-only file system\r\n"));
    expect(t.blocked?.why).toMatch(/read-only/);
  });

  it("the proxy's refusal wins over the output's; shown once while running and once with the final status", () => {
    const c = make();
    c.output('stderr', Buffer.from('Read-only file system\n'));
    c.block({ what: 'example.com', why: 'not on the allow-list', next: 'n' });
    c.block({ what: 'other.org', why: 'not on the allow-list', next: 'n' });
    expect(c.takeBlocked()?.what).toBe('example.com');
    expect(c.takeBlocked()).toBeUndefined();
    c.exited(1, null);
    expect(c.takeBlocked()?.what).toBe('example.com');
    expect(c.takeBlocked()).toBeUndefined();
  });
});

const relayProgram = builtProgram('wb-netrelay');

/**
 * The same exchanges whoever moves the bytes: the server itself, or native/wb-netrelay.c with the server
 * deciding (net-proxy.ts).
 */
describe.each(['server', 'relay'] as const)(
  'the proxy over its unix socket, bytes moved by the %s',
  (plane) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-proxy-'));
    const sock = path.join(dir, 'p.sock');
    const decisions: NetDecision[] = [];
    const notices: string[] = [];
    const runs = plane === 'server' || needBuilt(['wb-netrelay'], 'the proxy through wb-netrelay');
    const check = it.skipIf(!runs);
    let noticed: ((m: string) => void) | undefined;
    let upstream: http.Server;
    let port = 0;
    let proxy: NetProxy;
    let rawSeen = '';
    let raw: net.Server;
    let rawPort = 0;

    const start = async (allowPrivate: string[]) => {
      const p = new NetProxy({
        socketPath: sock,
        rules: { allow: [...DEFAULT_ALLOW, 'allowed.test'], deny: ['denied.test'], allowPrivate },
        testResolve: {
          'allowed.test': ['127.0.0.1'],
          'registry.npmjs.org': ['127.0.0.1'],
          'granted.test': ['127.0.0.1'],
        },
        clock: systemClock,
        onDecision: (d) => void decisions.push(d),
        onNotice: (m) => {
          notices.push(m);
          noticed?.(m);
        },
        ...(plane === 'relay' && relayProgram
          ? { relay: { program: relayProgram, serverPath: path.join(dir, 'server.sock') } }
          : {}),
      });
      p.listen();
      await p.ready();
      expect(p.dataPlane).toBe(plane);
      return p;
    };

    beforeAll(async () => {
      upstream = http.createServer((req, res) =>
        res.end(`hello ${req.method} ${req.headers.host} ${req.url}`),
      );
      await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
      port = (upstream.address() as AddressInfo).port;
      raw = net.createServer((s) => s.on('data', (d) => (rawSeen += d.toString())));
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
      rawPort = (raw.address() as AddressInfo).port;
      if (runs) proxy = await start(['allowed.test', 'registry.npmjs.org', 'granted.test']);
    });
    afterAll(async () => {
      await proxy?.close();
      upstream?.close();
      raw?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** One raw exchange over the proxy socket: what it answers to `head` (and then to `after` if the tunnel opens). */
    const exchange = (head: string, after?: string) => proxyExchange(sock, head, after);
    const auth = (token: string) =>
      `Proxy-Authorization: Basic ${Buffer.from(`wb:${token}`).toString('base64')}\r\n`;

    check('the socket is 0600 (and so is the hand-over socket of the relay)', () => {
      expect(statSync(sock).mode & 0o777).toBe(0o600);
      if (plane === 'relay') expect(statSync(path.join(dir, 'server.sock')).mode & 0o777).toBe(0o600);
      expect(notices).toEqual([]);
    });

    check('CONNECT to an allowed name tunnels bytes to the checked address', async () => {
      const got = await exchange(
        `CONNECT registry.npmjs.org:${port} HTTP/1.1\r\nHost: registry.npmjs.org:${port}\r\n\r\n`,
        `GET /pkg HTTP/1.1\r\nHost: registry.npmjs.org\r\nConnection: close\r\n\r\n`,
      );
      expect(got).toMatch(/^HTTP\/1.1 200 Connection Established/);
      expect(got).toContain('hello GET registry.npmjs.org /pkg');
      expect(decisions.at(-1)).toMatchObject({
        host: 'registry.npmjs.org',
        allowed: true,
        address: '127.0.0.1',
      });
    });

    check('an absolute-URI GET is forwarded with its Host and without the proxy credential', async () => {
      proxy.register('tok1', 'cmd1');
      const got = await exchange(
        `GET http://allowed.test:${port}/a?b=1 HTTP/1.1\r\nHost: allowed.test:${port}\r\n${auth('tok1')}Connection: close\r\n\r\n`,
      );
      expect(got).toMatch(/^HTTP\/1.1 200/);
      expect(got).toContain(`hello GET allowed.test:${port} /a?b=1`);
      expect(decisions.at(-1)).toMatchObject({ host: 'allowed.test', allowed: true, commandId: 'cmd1' });
    });

    check(
      'a name not on the list: 403 at once with a body naming the host and the next call, recorded on the command',
      async () => {
        proxy.register('tok2', 'cmd2');
        const t0 = Date.now();
        const got = await exchange(`CONNECT example.com:443 HTTP/1.1\r\n${auth('tok2')}\r\n`);
        expect(Date.now() - t0).toBeLessThan(5000); // only a hang would fail this: no lookup, no connect
        expect(got).toMatch(/^HTTP\/1.1 403 Forbidden/);
        expect(got).toContain('example.com is not on this server');
        expect(got).toContain('request_permissions');
        expect(got).toContain('SERVICE_NETWORK_ALLOW');
        expect(decisions.at(-1)).toMatchObject({
          host: 'example.com',
          allowed: false,
          reason: 'not_allowed',
          commandId: 'cmd2',
        });
        const denied = await exchange(`GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n`);
        expect(denied).toMatch(/^HTTP\/1.1 403/);
        expect(denied).toContain('SERVICE_NETWORK_DENY');
      },
    );

    check(
      'a grant lets that one command reach the name; revoked with the command, and never for another command',
      async () => {
        proxy.register('tok3', 'cmd3');
        proxy.register('tok4', 'cmd4');
        proxy.grant('tok3', ['granted.test']);
        const req = (t: string) =>
          exchange(
            `GET http://granted.test:${port}/ HTTP/1.1\r\nHost: granted.test\r\n${auth(t)}Connection: close\r\n\r\n`,
          );
        expect(await req('tok3')).toMatch(/^HTTP\/1.1 200/);
        expect(decisions.at(-1)).toMatchObject({ allowed: true, granted: true, commandId: 'cmd3' });
        expect(await req('tok4')).toMatch(/^HTTP\/1.1 403/);
        proxy.revoke('tok3');
        expect(await req('tok3')).toMatch(/^HTTP\/1.1 403/);
      },
    );

    check(
      'a tunnel a granted command opened is cut when the command ends (revoke), whoever holds the socket',
      async () => {
        let seen = '';
        const echo = net.createServer((c) => c.on('data', (d) => ((seen += d.toString()), c.write(d))));
        await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
        proxy.register('tok5', 'cmd5');
        proxy.grant('tok5', ['granted.test']);
        const s = net.connect(sock);
        let got = '';
        let sent = false;
        s.on('error', () => {});
        const closed = new Promise<void>((r) => s.once('close', () => r()));
        const echoed = new Promise<void>((r) =>
          s.on('data', (d) => {
            got += d.toString('latin1');
            if (got.startsWith('HTTP/1.1 200') && !sent) sent = s.write('before-end') || true;
            if (got.endsWith('before-end')) r();
          }),
        );
        s.write(
          `CONNECT granted.test:${(echo.address() as AddressInfo).port} HTTP/1.1\r\n${auth('tok5')}\r\n`,
        );
        await echoed;
        expect(seen).toBe('before-end');
        proxy.revoke('tok5');
        // Only a tunnel left open would fail this (by the test's timeout): revoke closes it.
        await closed;
        expect(s.destroyed).toBe(true);
        echo.close();
      },
    );

    check(
      'an allowed name resolving to loopback is refused unless SERVICE_NETWORK_ALLOW_PRIVATE names it',
      async () => {
        await proxy.close();
        proxy = await start([]);
        const got = await exchange(`CONNECT allowed.test:${rawPort} HTTP/1.1\r\n\r\n`, 'secret-bytes');
        expect(got).toMatch(/^HTTP\/1.1 403/);
        expect(got).toContain('resolves to 127.0.0.1 (loopback)');
        expect(got).toContain('SERVICE_NETWORK_ALLOW_PRIVATE=allowed.test');
        expect(rawSeen).toBe('');
        // An IP literal is judged the same way, and so is a metadata address.
        expect(await exchange(`CONNECT 127.0.0.1:${rawPort} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1.1 403/);
        expect(
          await exchange(`GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n`),
        ).toMatch(/^HTTP\/1.1 403/);
        await proxy.close();
        proxy = await start(['127.0.0.0/8']);
        const ok = await exchange(
          `CONNECT allowed.test:${port} HTTP/1.1\r\n\r\n`,
          'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
        );
        expect(ok).toContain('hello GET a /');
      },
    );

    check(
      'a tunnel carries a large body both ways intact, with a reader slower than the writer (backpressure)',
      async () => {
        const body = Buffer.alloc(8 * 1024 * 1024);
        for (let i = 0; i < body.length; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
        const sent = createHash('sha256').update(body).digest('hex');
        let upload = '';
        const src = net.createServer((c) => {
          const h = createHash('sha256');
          c.on('data', (d) => h.update(d));
          c.on('end', () => {
            upload = h.digest('hex');
            c.end(body);
          });
        });
        await new Promise<void>((r) => src.listen(0, '127.0.0.1', () => r()));
        const srcPort = (src.address() as AddressInfo).port;
        try {
          const got = await new Promise<string>((resolve, reject) => {
            const s = net.connect(sock);
            const h = createHash('sha256');
            let head = Buffer.alloc(0);
            let open = false;
            s.on('data', (d: Buffer) => {
              if (!open) {
                head = Buffer.concat([head, d]);
                const end = head.indexOf('\r\n\r\n');
                if (end < 0) return;
                expect(head.subarray(0, 12).toString()).toBe('HTTP/1.1 200');
                open = true;
                h.update(head.subarray(end + 4));
                s.end(body); // upload, then half-close: the far end answers with the body
                return;
              }
              h.update(d);
              s.pause(); // a slow reader: the proxy must hold upstream back, not buffer without bound
              setImmediate(() => s.resume());
            });
            s.on('end', () => resolve(h.digest('hex')));
            s.on('error', reject);
            s.write(`CONNECT allowed.test:${srcPort} HTTP/1.1\r\n\r\n`);
          });
          expect(upload).toBe(sent);
          expect(got).toBe(sent);
        } finally {
          src.close();
        }
      },
    );

    check('malformed requests get 400; origin-form requests are not proxied', async () => {
      expect(await exchange('CONNECT nonsense HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1.1 400/);
      expect(await exchange('GET /etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1.1 400/);
    });
    check('a head that comes in pieces, with bytes right behind it, reaches the far end whole', async () => {
      let seen = '';
      let onSeen = () => {};
      const far = net.createServer((c) =>
        c.on('data', (d) => {
          seen += d.toString();
          onSeen();
        }),
      );
      await new Promise<void>((r) => far.listen(0, '127.0.0.1', () => r()));
      const farPort = (far.address() as AddressInfo).port;
      try {
        const s = net.connect(sock);
        s.on('error', () => {});
        const answered = new Promise<string>((r) => s.once('data', (d) => r(d.toString('latin1'))));
        const headText = `CONNECT allowed.test:${farPort} HTTP/1.1\r\nHost: allowed.test\r\n\r\n`;
        // Three writes, each waited for: the proxy must wait for the empty line, whatever arrives first.
        for (const part of ['CONN', headText.slice(4, 30), `${headText.slice(30)}early-bytes`])
          await new Promise<void>((r) => s.write(part, () => r()));
        expect(await answered).toMatch(/^HTTP\/1.1 200 Connection Established\r\n\r\n/);
        const arrived = new Promise<void>((r) => {
          onSeen = () => void (seen.includes('after') && r());
          onSeen();
        });
        s.write('after');
        await arrived;
        expect(seen).toBe('early-bytesafter');
        s.destroy();
      } finally {
        far.close();
      }
    });

    check('an allowed name whose port refuses: 502 naming the host and the checked address', async () => {
      // A port that was just free: nothing listens there.
      const gone = net.createServer();
      await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
      const closedPort = (gone.address() as AddressInfo).port;
      await new Promise<void>((r) => gone.close(() => r()));
      const got = await exchange(`CONNECT allowed.test:${closedPort} HTTP/1.1\r\n\r\n`, 'never-sent');
      expect(got).toMatch(/^HTTP\/1.1 502 Bad Gateway/);
      expect(got).toContain(`allowed.test:${closedPort} (127.0.0.1) could not be reached`);
      expect(decisions.at(-1)).toMatchObject({ host: 'allowed.test', allowed: true, address: '127.0.0.1' });
    });

    check('a head larger than 16 KiB is refused and the connection closed', async () => {
      const got = await exchange(
        `CONNECT allowed.test:${port} HTTP/1.1\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(got).toMatch(/^HTTP\/1.1 4(00|31) /);
    });

    /** test/helpers/hand-over.py as a bridge offering `kind`; resolves with its port and the answer it read. */
    const handOver = (kind: string) => {
      const child = spawn('python3', [path.join(HELPERS, 'hand-over.py'), sock, kind], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const line = new Promise<{ port: number; answer: string }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /^(\d+) (.*)\n/.exec(out);
          if (m) resolve({ port: Number(m[1]), answer: m[2] as string });
        });
        child.once('exit', (code) => reject(new Error(`hand-over.py ${kind} ended (${code}): ${out}`)));
      });
      const ended = new Promise<void>((r) => child.once('exit', () => r()));
      return { line, end: () => (child.stdin.end(), ended) };
    };

    check(
      'a bridge hands its listening socket over: the relay accepts its connections until the bridge ends',
      async () => {
        const bridge = handOver('listener');
        const { port: lport, answer } = await bridge.line;
        if (plane === 'server') {
          // No relay: the server's proxy reads no descriptor and refuses the bytes; the bridge relays as before.
          expect(answer).toMatch(/^HTTP\/1.1 400/);
          await bridge.end();
          return;
        }
        expect(answer).toBe('Y');
        const got = await new Promise<string>((resolve, reject) => {
          const s = net.connect(lport, '127.0.0.1');
          let text = '';
          s.on('data', (d) => {
            text += d.toString('latin1');
            if (text.startsWith('HTTP/1.1 200') && !text.includes('hello'))
              s.write('GET /handed HTTP/1.1\r\nHost: registry.npmjs.org\r\nConnection: close\r\n\r\n');
          });
          s.on('end', () => resolve(text));
          s.on('error', reject);
          s.write(`CONNECT registry.npmjs.org:${port} HTTP/1.1\r\n\r\n`);
        });
        expect(got).toContain('hello GET registry.npmjs.org /handed');
        // The bridge's connection ends: the relay closes the listener (the only copy left), so the port refuses.
        await bridge.end();
        const refused = await until(
          () =>
            new Promise<boolean>((resolve) => {
              const s = net.connect(lport, '127.0.0.1');
              s.once('connect', () => (s.destroy(), resolve(false)));
              s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
            }),
          (v) => v,
        );
        expect(refused).toBe(true);
      },
    );

    check(
      'what is not a hand-over is refused: a socket that does not listen, a pipe, no descriptor, a request with one',
      async () => {
        const fds = () => (plane === 'relay' ? readdirSync(`/proc/${proxy.relayPid}/fd`).length : 0);
        const before = fds();
        for (const kind of ['connected', 'pipe', 'bare', 'request', 'two', 'many']) {
          const bridge = handOver(kind);
          const { answer } = await bridge.line;
          await bridge.end();
          // The server's proxy reads no descriptor: a request is an ordinary one (x.test is not allowed).
          if (plane === 'server')
            expect(answer, kind).toMatch(kind === 'request' ? /^HTTP\/1.1 403/ : /^HTTP\/1.1 400/);
          else expect(answer, kind).toBe(kind === 'connected' || kind === 'pipe' ? 'N' : 'EOF');
        }
        // Every descriptor the relay was sent is closed again (the last connection may still be closing).
        expect(
          await until(
            async () => fds(),
            (n) => n === before,
          ),
        ).toBe(before);
        // The relay still serves.
        const got = await exchange(
          `CONNECT registry.npmjs.org:${port} HTTP/1.1\r\n\r\n`,
          `GET /still HTTP/1.1\r\nHost: registry.npmjs.org\r\nConnection: close\r\n\r\n`,
        );
        expect(got).toContain('hello GET registry.npmjs.org /still');
      },
    );

    // Only where the relay runs: registered for that plane alone (never a skip).
    if (plane === 'relay')
      check(
        'the relay killed: the server serves the socket, a CONNECT still tunnels, and a new relay takes over',
        async () => {
          const pid = proxy.relayPid as number;
          expect(pid).toBeGreaterThan(0);
          const ended = new Promise<string>((r) => (noticed = r));
          process.kill(pid, 'SIGKILL');
          // It had carried tunnels (the checks above): the first pause.
          expect(await ended).toMatch(
            /wb-netrelay ended \(SIGKILL\); the proxy relays tunnels itself until a new relay starts \(in 1 s\)/,
          );
          expect(proxy.dataPlane).toBe('server');
          expect(statSync(sock).mode & 0o777).toBe(0o600);
          const got = await exchange(
            `CONNECT registry.npmjs.org:${port} HTTP/1.1\r\n\r\n`,
            `GET /after HTTP/1.1\r\nHost: registry.npmjs.org\r\nConnection: close\r\n\r\n`,
          );
          expect(got).toContain('hello GET registry.npmjs.org /after');
          // A new relay, from the same private copy, has the socket's path again and carries the next tunnel.
          const next = await until(
            async () => proxy.relayPid,
            (p) => p !== undefined && p !== pid,
          );
          expect(next).not.toBe(pid);
          expect(proxy.dataPlane).toBe('relay');
          expect(readlinkSync(`/proc/${next}/exe`)).toBe(realpathSync(relayProgram as string));
          expect(statSync(sock).mode & 0o777).toBe(0o600);
          const again = await exchange(
            `CONNECT registry.npmjs.org:${port} HTTP/1.1\r\n\r\n`,
            `GET /again HTTP/1.1\r\nHost: registry.npmjs.org\r\nConnection: close\r\n\r\n`,
          );
          expect(again).toContain('hello GET registry.npmjs.org /again');
        },
      );
  },
);

describe('a relay that keeps ending', () => {
  const runs = needBuilt(['wb-netrelay'], 'the relay restarts');
  it.skipIf(!runs)(
    'a new relay after each pause, doubled while none carried a tunnel; after RESTARTS_MAX the server keeps the bytes',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'wb-relay-again-'));
      const program = path.join(dir, 'relay');
      copyFileSync(relayProgram as string, program);
      chmodSync(program, 0o700);
      const sock = path.join(dir, 'p.sock');
      const notices: string[] = [];
      let gaveUp: () => void = () => {};
      const done = new Promise<void>((r) => (gaveUp = r));
      const p = new NetProxy({
        socketPath: sock,
        rules: { allow: DEFAULT_ALLOW, deny: [], allowPrivate: [] },
        clock: systemClock,
        onDecision: () => {},
        onNotice: (m) => {
          notices.push(m);
          if (/from now on/.test(m)) gaveUp();
        },
        relay: { program, serverPath: path.join(dir, 'server.sock'), firstPauseMs: 10 },
      });
      try {
        p.listen();
        await p.ready();
        expect(p.dataPlane).toBe('relay');
        // From here on every relay binds its socket, says it listens, and ends at once: whether the server hears
        // of the end before or after it has renamed the socket onto the path, it must serve the path itself.
        const fake = [
          '#!/usr/bin/env python3',
          'import socket, sys',
          's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
          's.bind(sys.argv[1])',
          's.listen(1)',
          "sys.stdout.buffer.write(b'\\x05\\x00\\x00\\x00L\\x00\\x00\\x00\\x00')",
          'sys.stdout.flush()',
          '',
        ].join('\n');
        writeFileSync(`${program}.new`, fake, { mode: 0o700 });
        renameSync(`${program}.new`, program);
        process.kill(p.relayPid as number, 'SIGKILL');
        await done;
        expect(notices[0]).toMatch(/^wb-netrelay ended \(SIGKILL\); the proxy relays tunnels itself until/);
        expect(notices.map((m) => /\(in ([\d.]+) s\)$/.exec(m)?.[1] ?? /from now on/.exec(m)?.[0])).toEqual([
          '0.01',
          '0.02',
          '0.04',
          '0.08',
          '0.16',
          'from now on',
        ]);
        expect(notices[5]).toMatch(/\(5 relays in a row ended before carrying a tunnel\)$/);
        expect(p.dataPlane).toBe('server');
        // The server serves the socket's path: a host off the list gets its 403 at once.
        const answer = await proxyExchange(sock, 'CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n');
        expect(answer).toMatch(/^HTTP\/1\.1 403 /);
      } finally {
        await p.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
