// The proxy decides by numbers, never by spelling (docs/security-model.md#network-per-mode), tested on the proxy
// as a whole: a real server in `trusted` mode (and one in `safe`), a command in its sandbox that sends each
// spelling through its own proxy URL (the bridge, the relay, the server's decision), as a CONNECT and as an
// absolute-form request, and a listener of the test's own on every host address (`::`, dual stack) standing
// for the host's services: it must never be connected to, and every answer is the refusal naming the canonical
// address and its kind. A table of spellings (IPv4 short/decimal/octal/hex forms, trailing dots, every IPv6
// spelling, mapped, compatible, SIIT, NAT64, 6to4, Teredo, zone ids, case), a property test generating more, a
// name whose DNS answer is a mapped spelling, and in `safe` an operator's allow-list entry and a user's grant
// naming a mapped loopback spelling. Run as root and with the server as nobody
// (test/net/net-spelling.test.ts, test/net/net-spelling-unprivileged.test.ts). Needs bubblewrap and the bridge.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needBuilt } from '../helpers/native.js';
import { call, pollUntil } from '../exec/exec-support.js';
import { canRunAs, ownedDir, startBinAs, type BinServer, type RunAs } from '../helpers/hostile-bin.js';
import { bearer, ELICIT_META, request, send } from '../helpers/raw-http.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Sends each request of argv[1] (JSON: [authority, form]) through the command's proxy URL, one connection each,
 * and writes what came back to argv[2] (JSON), in order.
 */
const PROBE = `
import base64, json, os, socket, sys, urllib.parse
u = urllib.parse.urlparse(os.environ["HTTP_PROXY"])
auth = base64.b64encode(f"{u.username}:{u.password}".encode()).decode()
out = []
for a, form in json.load(open(sys.argv[1])):
    if form == "connect":
        head = f"CONNECT {a} HTTP/1.1\\r\\nHost: {a}\\r\\nProxy-Authorization: Basic {auth}\\r\\n\\r\\n"
    else:
        head = f"GET http://{a}/spelling HTTP/1.1\\r\\nHost: spelling.test\\r\\nProxy-Authorization: Basic {auth}\\r\\nConnection: close\\r\\n\\r\\n"
    got = b""
    try:
        s = socket.create_connection((u.hostname, u.port), timeout=60)
        s.sendall(head.encode("latin1"))
        while True:
            d = s.recv(65536)
            if not d: break
            got += d
            if got.startswith(b"HTTP/1.1 200") and b"\\r\\n\\r\\n" in got: break
        s.close()
    except OSError as e:
        got += f"<error {e}>".encode()
    out.append(got.decode("latin1"))
json.dump(out, open(sys.argv[2], "w"))
print("sent", len(out))
`;

type Kind = 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'reserved' | 'host';

/** A spelling (host part of the authority, brackets included), the canonical address and its kind. */
const TABLE: Array<[string, string, Kind]> = [
  // IPv4 loopback in every form the URL parser knows
  ['127.0.0.1', '127.0.0.1', 'loopback'],
  ['127.1', '127.0.0.1', 'loopback'],
  ['127.0.1', '127.0.0.1', 'loopback'],
  ['2130706433', '127.0.0.1', 'loopback'],
  ['0x7f000001', '127.0.0.1', 'loopback'],
  ['017700000001', '127.0.0.1', 'loopback'],
  ['0x7f.0.0.1', '127.0.0.1', 'loopback'],
  ['0X7F.0.0.1', '127.0.0.1', 'loopback'],
  ['0177.0.0.1', '127.0.0.1', 'loopback'],
  ['127.000.000.001', '127.0.0.1', 'loopback'],
  ['127.0.0.1.', '127.0.0.1', 'loopback'],
  ['127.1.', '127.0.0.1', 'loopback'],
  ['127.255.255.254', '127.255.255.254', 'loopback'],
  // IPv6 loopback and IPv4-mapped loopback, every spelling
  ['[::1]', '::1', 'loopback'],
  ['[0:0:0:0:0:0:0:1]', '::1', 'loopback'],
  ['[0000:0000:0000:0000:0000:0000:0000:0001]', '::1', 'loopback'],
  ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1', 'loopback'],
  ['[0:0:0:0:0:ffff:127.0.0.1]', '::ffff:127.0.0.1', 'loopback'],
  ['[0::ffff:127.0.0.1]', '::ffff:127.0.0.1', 'loopback'],
  ['[0:0::ffff:127.0.0.1]', '::ffff:127.0.0.1', 'loopback'],
  ['[0000:0000:0000:0000:0000:ffff:7f00:0001]', '::ffff:127.0.0.1', 'loopback'],
  ['[0:0:0:0:0:ffff:7f00:0001]', '::ffff:127.0.0.1', 'loopback'],
  ['[0:0:0:0:0:FFFF:127.0.0.1]', '::ffff:127.0.0.1', 'loopback'],
  ['[::FFFF:7F00:1]', '::ffff:127.0.0.1', 'loopback'],
  ['[::ffff:7f00:1%25eth0]', '::ffff:127.0.0.1', 'loopback'],
  // the other forms that carry an IPv4 address
  ['[::127.0.0.1]', '::7f00:1', 'loopback'], // IPv4-compatible
  ['[::7f00:1]', '::7f00:1', 'loopback'],
  ['[::ffff:0:127.0.0.1]', '::ffff:0:7f00:1', 'loopback'], // SIIT
  ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1', 'loopback'], // NAT64
  ['[64:ff9b:1::7f00:1]', '64:ff9b:1::7f00:1', 'loopback'], // local-use NAT64
  ['[2002:7f00:1::]', '2002:7f00:1::', 'loopback'], // 6to4
  ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', '2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // Teredo
  // cloud metadata
  ['169.254.169.254', '169.254.169.254', 'metadata'],
  ['0xa9fea9fe', '169.254.169.254', 'metadata'],
  ['2852039166', '169.254.169.254', 'metadata'],
  ['0251.0376.0251.0376', '169.254.169.254', 'metadata'],
  ['169.254.43518', '169.254.169.254', 'metadata'],
  ['[::ffff:169.254.169.254]', '::ffff:169.254.169.254', 'metadata'],
  ['[::ffff:a9fe:a9fe]', '::ffff:169.254.169.254', 'metadata'],
  ['[64:ff9b::a9fe:a9fe]', '64:ff9b::a9fe:a9fe', 'metadata'],
  ['[2002:a9fe:a9fe::1]', '2002:a9fe:a9fe::1', 'metadata'],
  ['[fd00:ec2::254]', 'fd00:ec2::254', 'metadata'],
  ['[FD00:0EC2:0000:0000:0000:0000:0000:0254]', 'fd00:ec2::254', 'metadata'],
  // link-local, with zone ids
  ['[fe80::1%25eth0]', 'fe80::1', 'link-local'],
  ['[FE80:0:0:0:0:0:0:1%25lo]', 'fe80::1', 'link-local'],
  ['169.254.1.1', '169.254.1.1', 'link-local'],
  ['[::ffff:169.254.1.1]', '::ffff:169.254.1.1', 'link-local'],
  // private
  ['10.1', '10.0.0.1', 'private'],
  ['0xa000001', '10.0.0.1', 'private'],
  ['192.168.0.1.', '192.168.0.1', 'private'],
  ['[::ffff:10.0.0.1]', '::ffff:10.0.0.1', 'private'],
  ['[::ffff:0:c0a8:1]', '::ffff:0:c0a8:1', 'private'],
  ['[2002:c0a8:1::1]', '2002:c0a8:1::1', 'private'],
  ['[fd12:3456::1]', 'fd12:3456::1', 'private'],
  // 0.0.0.0 reaches the host's loopback on Linux
  ['0', '0.0.0.0', 'unspecified'],
  ['0.0.0.0', '0.0.0.0', 'unspecified'],
  ['[::]', '::', 'unspecified'],
  ['[::ffff:0.0.0.0]', '::ffff:0.0.0.0', 'unspecified'],
];

/** What is no host at all: refused as a bad request, never passed on. */
const MALFORMED = [
  '[::ffff:127.1]',
  '1.2.3.09',
  '[0:0:0:0:0:0:ffff:127.0.0.1]',
  '[::ffff:0127.0.0.1]',
  '127.0.0.1..',
];

/** This host's own addresses (not loopback), in two spellings each: they are never public to a command. */
function ownSpellings(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces()))
    for (const i of list ?? []) {
      if (i.internal) continue;
      if (i.family === 'IPv4') {
        const n = i.address.split('.').reduce((a, o) => a * 256 + Number(o), 0);
        out.push(String(n), `[0:0:0:0:0:ffff:${i.address}]`);
      } else if (!i.address.startsWith('fe80')) out.push(`[${i.address.toUpperCase()}]`);
    }
  return out;
}

const REFUSED_KINDS = /\((loopback|private|link-local|metadata|unspecified|reserved|shared|host)[:)]/;

export function spellingSuite(as: RunAs): void {
  const what = 'the proxy-spelling tests';
  const d = canRunAs(as, what) && needBuilt(['wb-netbridge'], what) ? describe : describe.skip;
  d(`the proxy decides by numbers, never by spelling (server as ${as})`, () => {
    let ws: string;
    let rt: string;
    let trusted: BinServer;
    let safe: BinServer;
    let host: net.Server;
    let port: number;
    const reached: string[] = [];

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-spell-ws-', as);
      rt = ownedDir(tmpdir(), 'wb-spell-rt-', as);
      writeFileSync(path.join(ws, 'probe.py'), PROBE);
      // The host's services: one listener on every address of the host, IPv4 and IPv6.
      host = net.createServer((s) => {
        reached.push(String(s.remoteAddress));
        s.destroy();
      });
      // Dual stack where the host has IPv6, else every IPv4 address.
      await new Promise<void>((r) =>
        host
          .once('error', () => host.listen({ port: 0, host: '0.0.0.0' }, () => r()))
          .listen({ port: 0, host: '::', ipv6Only: false }, () => r()),
      );
      port = (host.address() as AddressInfo).port;
      // A name whose answer is a mapped spelling of loopback: the address after DNS is judged the same way.
      const resolve = 'mapped.test=0:0:0:0:0:ffff:7f00:0001,nat.test=64:ff9b::7f00:1';
      trusted = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        env: { SERVICE_PERMISSION_MODE: 'trusted', WB_TEST_RESOLVE: resolve },
      });
      // The operator allow-lists a mapped spelling of 127.0.0.2: the name rules pass it, the address rules not.
      safe = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        env: { SERVICE_NETWORK_ALLOW: '0000::ffff:7f00:0002' },
      });
      // The listener answers on loopback from here (so a refusal below is the proxy's doing).
      const c = net.connect(port, '127.0.0.1');
      await new Promise<void>((res, rej) => c.once('connect', res).once('error', rej));
      await new Promise<void>((res) => (reached.length > 0 ? res() : host.once('connection', () => res())));
      c.destroy();
      reached.length = 0;
    });
    afterAll(async () => {
      await Promise.all([trusted?.stop(), safe?.stop()]);
      host?.close();
      for (const dir of [ws, rt]) if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Sends every [authority, form] from a command of `server`; what came back, in order. */
    const probe = async (server: BinServer, requests: Array<[string, string]>) => {
      const tag = randomBytes(4).toString('hex');
      writeFileSync(path.join(ws, `in-${tag}.json`), JSON.stringify(requests));
      const r = await call(server.url, 'exec_command', {
        cmd: `python3 probe.py in-${tag}.json out-${tag}.json`,
        yield_time_ms: 30_000,
        timeout_ms: 300_000,
      });
      // A busy machine may need longer than one wait: the command is followed until it ends.
      const end = r.sc.status === 'running' ? (await pollUntil(server.url, r.sc.command_id, null)).last : r;
      expect(end.sc, JSON.stringify(end.sc)).toMatchObject({ status: 'exited', exit_code: 0 });
      return JSON.parse(readFileSync(path.join(ws, `out-${tag}.json`), 'utf8')) as string[];
    };
    const both = (hosts: string[]) =>
      hosts.flatMap((h): Array<[string, string]> => [
        [`${h}:${port}`, 'connect'],
        [`${h}:${port}`, 'absolute'],
      ]);

    it(`a table of ${TABLE.length} spellings: each refused as a CONNECT and as an absolute-form request, naming the canonical address and its kind`, async () => {
      expect(TABLE.length).toBeGreaterThanOrEqual(40);
      const answers = await probe(trusted, both(TABLE.map(([h]) => h)));
      // Every spelling that was not refused with the canonical address and its kind, with what it got instead.
      const wrong = TABLE.flatMap(([spelling, address, kind], i) =>
        ['connect', 'absolute'].flatMap((form, j) => {
          const got = answers[2 * i + j] as string;
          const ok =
            /^HTTP\/1\.1 403 /.test(got) &&
            got.includes(`is ${address} (${kind}`) &&
            got.includes('addresses are refused');
          return ok
            ? []
            : [`${spelling} (${form}): ${got.split('\r\n')[0]} ${got.split('\r\n\r\n')[1] ?? ''}`];
        }),
      );
      expect(wrong).toEqual([]);
      expect(reached).toEqual([]);
    });

    it("this host's own addresses, spelled otherwise, are refused; so is what is no host at all", async () => {
      const own = ownSpellings();
      const answers = await probe(trusted, [...both(own), ...both(MALFORMED)]);
      own.forEach((spelling, i) => {
        for (const j of [0, 1]) {
          const got = answers[2 * i + j] as string;
          expect(got, spelling).toMatch(/^HTTP\/1\.1 403 /);
          expect(got, spelling).toMatch(REFUSED_KINDS);
        }
      });
      MALFORMED.forEach((spelling, i) => {
        for (const j of [0, 1]) {
          const got = answers[2 * (own.length + i) + j] as string;
          expect(got, `${spelling}: ${got}`).toMatch(/^HTTP\/1\.1 400 /);
          expect(got, spelling).toContain('a host name or an IP address');
        }
      });
      expect(reached).toEqual([]);
    });

    it('a name whose DNS answer is a mapped or NAT64 spelling of loopback is refused by the address', async () => {
      const answers = await probe(trusted, both(['mapped.test', 'nat.test']));
      for (const got of answers.slice(0, 2))
        expect(got).toContain('mapped.test resolves to ::ffff:127.0.0.1 (loopback');
      for (const got of answers.slice(2))
        expect(got).toContain('nat.test resolves to 64:ff9b::7f00:1 (loopback: NAT64 127.0.0.1 inside)');
      expect(reached).toEqual([]);
    });

    it('property: generated spellings of loopback, private, link-local and metadata addresses are all refused', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(spelling, { minLength: 25, maxLength: 25 }), async (batch) => {
          const answers = await probe(
            trusted,
            batch.map((s): [string, string] => [`${s.text}:${port}`, s.form]),
          );
          batch.forEach((s, i) => {
            const got = answers[i] as string;
            expect(got, `${s.text} (${s.form})`).toMatch(/^HTTP\/1\.1 403 /);
            expect(got, `${s.text} (${s.form})`).toContain(`(${s.kind}`);
          });
          expect(reached).toEqual([]);
        }),
        { numRuns: 8, endOnFailure: true },
      );
    });

    it("safe: an operator's allow-list entry and a user's grant naming mapped loopback spellings do not open loopback", async () => {
      const args = { cmd: 'python3 probe.py grant-in.json grant-out.json', yield_time_ms: 30_000 };
      writeFileSync(
        path.join(ws, 'grant-in.json'),
        JSON.stringify([
          [`[0:0:0:0:0:ffff:127.0.0.1]:${port}`, 'connect'],
          [`[0:0::ffff:127.0.0.2]:${port}`, 'connect'],
        ]),
      );
      const out = () => JSON.parse(readFileSync(path.join(ws, 'grant-out.json'), 'utf8')) as string[];
      const exec = async (retry: Record<string, unknown> = {}) => {
        const r = request('modern', 'tools/call', { name: 'exec_command', arguments: args, ...retry });
        (r.body.params as any)._meta = ELICIT_META;
        return (await send(safe.url, r, bearer())).json.result;
      };
      const first = await exec();
      expect(first.structuredContent).toMatchObject({ status: 'exited', exit_code: 0 });
      const [granted, listed] = out();
      // Not on the allow-list: the user is asked about the canonical address.
      expect(granted).toMatch(/^HTTP\/1\.1 403 /);
      expect(granted).toContain('::ffff:127.0.0.1 is not on this server');
      // On the operator's allow-list, in another spelling: loopback all the same.
      expect(listed).toContain('::ffff:127.0.0.2 is ::ffff:127.0.0.2 (loopback');
      const asked = await exec();
      expect(asked.resultType).toBe('input_required');
      expect(JSON.stringify(asked)).toContain('reach ::ffff:127.0.0.1 once?');
      const ran = await exec({
        requestState: asked.requestState,
        inputResponses: { approve: { action: 'accept' } },
      });
      expect(ran.structuredContent, JSON.stringify(ran)).toMatchObject({ status: 'exited', exit_code: 0 });
      const [afterGrant] = out();
      expect(afterGrant).toMatch(/^HTTP\/1\.1 403 /);
      expect(afterGrant).toContain('::ffff:127.0.0.1 is ::ffff:127.0.0.1 (loopback');
      expect(ran.structuredContent.blocked?.why).toMatch(
        /^resolves to loopback address ::ffff:127\.0\.0\.[12]$/,
      );
      expect(reached).toEqual([]);
    });
  });
}

/** The IPv4 addresses the property test spells, with their kind. */
const v4Target = fc.oneof(
  fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => ({ o, kind: 'loopback' })),
  fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => ({ o, kind: 'private' })),
  fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)).map((o) => ({
    o,
    kind: 'private',
  })),
  fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)).map((o) => ({ o, kind: 'private' })),
  fc.constant({ o: [169, 254, 169, 254], kind: 'metadata' }),
  fc
    .tuple(fc.constant(169), fc.constant(254), fc.nat(168), fc.nat(255))
    .map((o) => ({ o, kind: 'link-local' })),
);

const hexCase = (s: string, upper: boolean[]) =>
  [...s].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');

/** An IPv4 address spelled as the URL parser reads it: parts in decimal, octal or hex, fewer parts, a dot. */
const v4Spelling = fc
  .record({
    t: v4Target,
    parts: fc.integer({ min: 1, max: 4 }),
    radix: fc.array(fc.constantFrom(10, 8, 16), { minLength: 4, maxLength: 4 }),
    pad: fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }),
    upper: fc.boolean(),
    dot: fc.boolean(),
  })
  .map(({ t, parts, radix, pad, upper, dot }) => {
    const [a, b, c, d] = t.o as [number, number, number, number];
    const nums =
      parts === 4
        ? [a, b, c, d]
        : parts === 3
          ? [a, b, c * 256 + d]
          : parts === 2
            ? [a, (b << 16) + c * 256 + d]
            : [((a << 24) >>> 0) + (b << 16) + c * 256 + d];
    const text = nums
      .map((n, i) => {
        const r = radix[i] as number;
        const digits = n.toString(r);
        if (r === 10) return digits;
        if (r === 8) return `0${'0'.repeat(pad[i] as number)}${digits}`;
        return `${upper ? '0X' : '0x'}${'0'.repeat(pad[i] as number)}${upper ? digits.toUpperCase() : digits}`;
      })
      .join('.');
    return { text: `${text}${dot ? '.' : ''}`, kind: t.kind };
  });

/** The eight 16-bit groups of an IPv6 form carrying the IPv4 address `o`. */
function embed(form: number, o: number[], salt: number): number[] {
  const [a, b, c, d] = o as [number, number, number, number];
  const hi = (a << 8) | b;
  const lo = (c << 8) | d;
  switch (form) {
    case 0: // IPv4-mapped
      return [0, 0, 0, 0, 0, 0xffff, hi, lo];
    case 1: // IPv4-compatible
      return [0, 0, 0, 0, 0, 0, hi, lo];
    case 2: // SIIT
      return [0, 0, 0, 0, 0xffff, 0, hi, lo];
    case 3: // NAT64
      return [0x64, 0xff9b, 0, 0, 0, 0, hi, lo];
    case 4: // 6to4, any subnet and interface
      return [0x2002, hi, lo, salt, 0, 0, 0, salt];
    default: // Teredo: a public server, the client inverted
      return [0x2001, 0, 0x4136, 0xe378, 0x8000, salt, hi ^ 0xffff, lo ^ 0xffff];
  }
}

/** The eight groups spelled: random padding and case, maybe a dotted tail, one run of zeros compressed. */
const v6Text = (groups: number[]) =>
  fc
    .record({
      pad: fc.array(fc.nat(4), { minLength: 8, maxLength: 8 }),
      upper: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
      dotted: fc.boolean(),
      squeeze: fc.nat(7),
      zone: fc.constantFrom('', '%25eth0', '%25lo', '%251'),
    })
    .map(({ pad, upper, dotted, squeeze, zone }) => {
      let words = groups.map((g, i) => g.toString(16).padStart(Math.max(pad[i] as number, 1), '0'));
      if (dotted) {
        const [x, y] = [groups[6] as number, groups[7] as number];
        words = [...words.slice(0, 6), `${x >> 8}.${x & 255}.${y >> 8}.${y & 255}`];
      }
      // Compress the run of zero groups that starts at or after `squeeze`, if there is one.
      const start = words.findIndex((w, i) => i >= squeeze && /^0+$/.test(w));
      let text = words.join(':');
      if (start >= 0) {
        let end = start;
        while (end < words.length && /^0+$/.test(words[end] as string)) end++;
        text = `${words.slice(0, start).join(':')}::${words.slice(end).join(':')}`;
      }
      return `[${hexCase(text, upper)}${zone}]`;
    });

const v6Target = fc.oneof(
  fc.constant({ groups: [0, 0, 0, 0, 0, 0, 0, 1], kind: 'loopback' }),
  fc.nat(0xffff).map((x) => ({ groups: [0xfe80, 0, 0, 0, 0, 0, x, 1], kind: 'link-local' })),
  fc.nat(0xffff).map((x) => ({ groups: [0xfd00 | (x & 0xff), x, 0, 0, 0, 0, 0, x], kind: 'private' })),
  fc.constant({ groups: [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254], kind: 'metadata' }),
);

const embedded = fc
  .record({ t: v4Target, form: fc.nat(5), salt: fc.nat(0xffff) })
  .chain(({ t, form, salt }) => v6Text(embed(form, [...t.o], salt)).map((text) => ({ text, kind: t.kind })));

const pureV6 = v6Target.chain((t) => v6Text([...t.groups]).map((text) => ({ text, kind: t.kind })));

const spelling = fc
  .record({ s: fc.oneof(v4Spelling, embedded, pureV6), form: fc.constantFrom('connect', 'absolute') })
  .map(({ s, form }) => ({ ...s, form }));
