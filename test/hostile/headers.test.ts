// HTTP header sets: property-based, over real HTTP on 127.0.0.1. Generated Content-Type, Accept, Origin,
// Host, MCP-Protocol-Version, Mcp-Session-Id, Authorization variants, forwarding headers, duplicates and long
// values, on a bearer server and on a noauth one; raw request heads with bytes no client library would send;
// every method on every path. Each answer is checked against the documented order
// (docs/http.md#order-of-checks steps 1–3 and 6, docs/http.md#other-routes, the noauth rules;
// docs/design-notes.md#statuses, docs/design-notes.md#noauth-behind-a-proxy): Origin 403 → auth 401 (with its
// WWW-Authenticate) → media type 415 → protocol-version header 400 → the method; an oversized head is 431; a
// malformed one 400 — always a status, never a dropped connection, never a 5xx, never a session id; the
// server still serves afterwards.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, type RawReply } from '../helpers/raw-http.js';
import { TEST_TOKEN } from '../helpers/server.js';
import {
  fcParams,
  makeLayout,
  printTallies,
  sendBytes,
  startHostile,
  stillServing,
  tally,
  type HostileServer,
  type Layout,
} from './support.js';

let L: Layout;
let bearerSrv: HostileServer;
let noauthSrv: HostileServer;

beforeAll(async () => {
  L = makeLayout({ git: false });
  bearerSrv = await startHostile({ workspace: L.ws });
  noauthSrv = await startHostile({ workspace: L.ws, env: { SERVICE_AUTH_MODE: 'noauth' } });
});
afterAll(async () => {
  printTallies();
  await bearerSrv?.close();
  await noauthSrv?.close();
  L?.cleanup();
});

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const ABSENT = undefined;

type Choice<V> = { v: V | undefined; verdict: string };
/** One of the choices; those that pass their check are drawn more often, so later checks get reached. */
const pick = <V>(...xs: Array<Choice<V>>): fc.Arbitrary<Choice<V>> => {
  const good = xs.filter((x) => ['ok', 'loopback', 'none'].includes(x.verdict));
  const bad = xs.filter((x) => !good.includes(x));
  if (!good.length || !bad.length) return fc.constantFrom(...xs);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...good) },
    { weight: 1, arbitrary: fc.constantFrom(...bad) },
  );
};

// Each header: its value (undefined = absent, array = sent twice) and what the contract makes of it.
const contentType = pick<string | string[]>(
  { v: 'application/json', verdict: 'ok' },
  { v: 'application/json; charset=utf-8', verdict: 'ok' },
  { v: 'Application/JSON', verdict: 'ok' },
  { v: 'application/json ; charset=latin1', verdict: 'ok' },
  { v: ['application/json', 'text/plain'], verdict: 'ok' }, // node keeps the first Content-Type
  { v: ['text/plain', 'application/json'], verdict: '415' },
  { v: ABSENT, verdict: '415' },
  { v: '', verdict: '415' },
  { v: 'text/plain', verdict: '415' },
  { v: 'application/x-www-form-urlencoded', verdict: '415' },
  { v: 'multipart/form-data; boundary=x', verdict: '415' },
  { v: 'application/jsonx', verdict: '415' },
  { v: 'application/json-seq', verdict: '415' },
  { v: 'application/*', verdict: '415' },
  { v: 'json', verdict: '415' },
  { v: 'text/event-stream', verdict: '415' },
);
const accept = pick<string | string[]>(
  { v: 'application/json, text/event-stream', verdict: 'ok' },
  { v: ABSENT, verdict: 'ok' },
  { v: 'text/html', verdict: 'ok' },
  { v: '*/*', verdict: 'ok' },
  { v: 'text/event-stream', verdict: 'ok' },
  { v: 'garbage;;;q=x', verdict: 'ok' },
  { v: ['application/json', 'text/html'], verdict: 'ok' },
  { v: 'a'.repeat(4000), verdict: 'ok' },
);
const origin = pick<string | string[]>(
  { v: ABSENT, verdict: 'ok' },
  { v: 'http://localhost', verdict: 'ok' },
  { v: 'http://localhost:3000', verdict: 'ok' },
  { v: 'http://127.0.0.1:8080', verdict: 'ok' },
  { v: 'http://[::1]:5173', verdict: 'ok' },
  { v: 'https://localhost', verdict: 'ok' },
  { v: 'http://localhost.evil.example', verdict: '403' },
  { v: 'http://evil.example', verdict: '403' },
  { v: 'https://127.0.0.1.nip.io', verdict: '403' },
  { v: 'null', verdict: '403' },
  { v: 'http://user@localhost', verdict: '403' },
  { v: 'http://localhost/path', verdict: '403' },
  { v: 'http://localhost:3000/', verdict: '403' },
  { v: 'file://', verdict: '403' },
  { v: 'chrome-extension://abcdef', verdict: '403' },
  { v: 'ws://localhost', verdict: '403' },
  { v: '', verdict: '403' },
  { v: 'x'.repeat(5000), verdict: '403' },
  { v: ['http://localhost', 'http://localhost'], verdict: '403' }, // joined: not a bare origin
  { v: ['http://localhost', 'http://evil.example'], verdict: '403' },
);
const auth = pick<string | string[]>(
  { v: `Bearer ${TEST_TOKEN}`, verdict: 'ok' },
  { v: `bearer ${TEST_TOKEN}`, verdict: 'ok' },
  { v: `BEARER\t${TEST_TOKEN}`, verdict: 'ok' },
  { v: `Bearer   ${TEST_TOKEN}`, verdict: 'ok' },
  { v: [`Bearer ${TEST_TOKEN}`, 'Bearer wrong'], verdict: 'ok' }, // node keeps the first Authorization
  { v: ['Bearer wrong', `Bearer ${TEST_TOKEN}`], verdict: '401' },
  { v: ABSENT, verdict: '401' },
  { v: '', verdict: '401' },
  { v: 'Bearer', verdict: '401' },
  { v: 'Bearer ', verdict: '401' },
  { v: `Bearer ${TEST_TOKEN}x`, verdict: '401' },
  { v: `Bearer ${TEST_TOKEN.slice(0, -1)}`, verdict: '401' },
  { v: `Bearer ${TEST_TOKEN} extra`, verdict: '401' },
  { v: `Bearer:${TEST_TOKEN}`, verdict: '401' },
  { v: TEST_TOKEN, verdict: '401' },
  { v: `Token ${TEST_TOKEN}`, verdict: '401' },
  { v: `Basic ${Buffer.from(`user:${TEST_TOKEN}`).toString('base64')}`, verdict: '401' },
  { v: `Bearer ${'a'.repeat(8000)}`, verdict: '401' },
  { v: 'Bearer \u00e9\u00e9', verdict: '401' },
  { v: `Bearer ${'A'.repeat(40_000)}`, verdict: '431' },
);
const mpv = pick<string | string[]>(
  { v: ABSENT, verdict: 'ok' },
  { v: '2025-11-25', verdict: 'ok' },
  { v: '2025-06-18', verdict: 'ok' },
  { v: '2026-07-28', verdict: '400/-32602' }, // modern header, body without _meta (docs/design-notes.md#stateless-era-order)
  { v: '2024-11-05', verdict: '400/-32600' },
  { v: 'garbage', verdict: '400/-32600' },
  { v: '', verdict: '400/-32600' },
  { v: ['2025-11-25', '2025-11-25'], verdict: '400/-32600' },
  { v: '2025-11-25 ', verdict: 'ok' }, // trailing whitespace is not part of a header value
);
const sessionId = pick<string | string[]>(
  { v: ABSENT, verdict: 'ok' },
  { v: 'abc', verdict: 'ok' },
  { v: '00000000-0000-0000-0000-000000000000', verdict: 'ok' },
  { v: 'x'.repeat(2000), verdict: 'ok' },
  { v: ['a', 'b'], verdict: 'ok' },
  { v: '', verdict: 'ok' },
);
const host = pick<string>(
  { v: ABSENT, verdict: 'loopback' },
  { v: 'localhost', verdict: 'loopback' },
  { v: 'localhost:1', verdict: 'loopback' },
  { v: '127.0.0.1', verdict: 'loopback' },
  { v: '127.1.2.3:80', verdict: 'loopback' },
  { v: '[::1]:9', verdict: 'loopback' },
  { v: 'evil.example', verdict: 'foreign' },
  { v: 'localhost.evil.example', verdict: 'foreign' },
  { v: '10.0.0.1', verdict: 'foreign' },
  { v: 'localhost@evil', verdict: 'foreign' },
  { v: 'h'.repeat(300), verdict: 'foreign' },
);
const forwarded = pick<Record<string, string>>(
  { v: ABSENT, verdict: 'none' },
  { v: { 'x-forwarded-for': '1.2.3.4' }, verdict: 'proxy' },
  { v: { forwarded: 'for=1.2.3.4;proto=https' }, verdict: 'proxy' },
  { v: { via: '1.1 cloudflare' }, verdict: 'proxy' },
  { v: { 'x-forwarded-host': 'localhost' }, verdict: 'proxy' },
  { v: { 'cf-connecting-ip': '127.0.0.1' }, verdict: 'proxy' },
  { v: { 'x-real-ip': '127.0.0.1' }, verdict: 'proxy' },
);
const junkHeaders = fc.dictionary(
  fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 200,
  }),
  { maxKeys: 4 },
);

interface Plan {
  ct: Choice<string | string[]>;
  acc: Choice<string | string[]>;
  org: Choice<string | string[]>;
  au: Choice<string | string[]>;
  pv: Choice<string | string[]>;
  sid: Choice<string | string[]>;
  h: Choice<string>;
  fw: Choice<Record<string, string>>;
  junk: Record<string, string>;
}
const plan: fc.Arbitrary<Plan> = fc.record({
  ct: contentType,
  acc: accept,
  org: origin,
  au: auth,
  pv: mpv,
  sid: sessionId,
  h: host,
  fw: forwarded,
  junk: junkHeaders,
});

function headersOf(p: Plan): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { ...p.junk };
  const set = (name: string, c: Choice<string | string[]>) => {
    if (c.v !== undefined) h[name] = c.v;
  };
  set('content-type', p.ct);
  set('accept', p.acc);
  set('origin', p.org);
  set('authorization', p.au);
  set('mcp-protocol-version', p.pv);
  set('mcp-session-id', p.sid);
  if (p.h.v !== undefined) h.host = p.h.v;
  Object.assign(h, p.fw.v ?? {});
  return h;
}

/** Node's limit on a request's head (http.maxHeaderSize), which several long choices together can pass. */
const MAX_HEAD = 16 * 1024;

/** The head's bytes: each header line, and the request line and the few headers the client adds (~120). */
function headBytes(p: Plan): number {
  let n = 120;
  for (const [k, v] of Object.entries(headersOf(p)))
    for (const one of Array.isArray(v) ? v : [v]) n += k.length + String(one).length + 4;
  return n;
}

/** The documented verdict: the first check that fails (431 for an oversized head comes before all). */
function oracle(p: Plan, mode: 'bearer' | 'noauth'): string {
  if (p.au.verdict === '431' || headBytes(p) > MAX_HEAD) return '431';
  if (p.org.verdict === '403') return '403';
  if (mode === 'bearer' && p.au.verdict === '401') return '401';
  if (mode === 'noauth' && (p.fw.verdict === 'proxy' || p.h.verdict === 'foreign')) return '403-noauth';
  if (p.ct.verdict === '415') return '415';
  if (p.pv.verdict !== 'ok') return p.pv.verdict;
  return '200';
}

function verdictOf(r: RawReply): string {
  expect(r.headers['mcp-session-id']).toBeUndefined();
  if (r.status === 200) {
    expect(r.json.result.tools).toHaveLength(20);
    return '200';
  }
  if (r.status === 401) {
    expect(r.headers['www-authenticate']).toMatch(/^Bearer realm="workbench-mcp"/);
    expect(r.json.error).toMatch(/^(invalid_token|unauthorized)$/);
    return '401';
  }
  if (r.status === 403 && r.json?.error === 'forbidden') return '403-noauth';
  if (r.status === 403 || r.status === 415) {
    expect(r.json.error.code).toBe(-32600);
    return String(r.status);
  }
  if (r.status === 400) return `400/${r.json.error.code}`;
  return String(r.status);
}

async function check(srv: HostileServer, p: Plan, mode: 'bearer' | 'noauth') {
  const headers = headersOf(p);
  srv.takeErrors();
  const r = await raw(srv.url, { headers, body: BODY, timeoutMs: 30_000 });
  const got = verdictOf(r);
  tally(got);
  expect(srv.takeErrors()).toEqual([]);
  expect(got, `${mode} ${JSON.stringify(headers).slice(0, 600)}\n→ ${r.status} ${r.text.slice(0, 300)}`).toBe(
    oracle(p, mode),
  );
  if (got === '200' || got === '401' || got === '415' || got.startsWith('400')) {
    // CORS headers go to allowed origins only.
    const allow = r.headers['access-control-allow-origin'];
    if (p.org.verdict === 'ok' && p.org.v !== undefined) expect(allow).toBe(p.org.v);
    else expect(allow).toBeUndefined();
  }
}

describe('generated HTTP header sets (docs/http.md#order-of-checks steps 1–3, 6; docs/design-notes.md#statuses)', () => {
  it('bearer server: Origin → Authorization → Content-Type → MCP-Protocol-Version, the first failure decides', async () => {
    await fc.assert(
      fc.asyncProperty(plan, (p) => check(bearerSrv, p, 'bearer')),
      fcParams(300),
    );
    await stillServing(bearerSrv.url);
  });

  it('noauth server: a foreign Host or any forwarding header is 403 (docs/design-notes.md#noauth-behind-a-proxy); Authorization is irrelevant', async () => {
    await fc.assert(
      fc.asyncProperty(plan, (p) => check(noauthSrv, p, 'noauth')),
      fcParams(150),
    );
    await stillServing(noauthSrv.url);
  });
});

describe('raw request heads no client library sends', () => {
  const lineBytes = fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 60 }).map((a) => Buffer.from(a)) },
    {
      weight: 1,
      arbitrary: fc
        .string({
          unit: fc.integer({ min: 0x21, max: 0xff }).map((c) => String.fromCharCode(c)),
          minLength: 1,
          maxLength: 40,
        })
        .map((v) => Buffer.from(`X-Gen: ${v}`, 'latin1')),
    },
    fc
      .constantFrom(
        'X-A: a\rb',
        'X-A: a\0b',
        'X-A:\x7f',
        'X-\u00ff: v',
        ' folded continuation',
        '\tfolded tab',
        'No-Colon-Here',
        ': empty-name',
        'X A: space in name',
        'Content-Length: 5',
        'Content-Length: -1',
        'Content-Length: 99999999999999999999',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked',
        'Host: a\u00e9',
        'Authorization: Bearer \u00ff\u00fe',
        `X-Long: ${'v'.repeat(20_000)}`,
      )
      .map((s) => Buffer.from(s, 'latin1')),
  );
  const requestLine = fc.oneof(
    { weight: 2, arbitrary: fc.constant('POST /mcp HTTP/1.1') },
    fc.constantFrom(
      'POST /mcp HTTP/1.1',
      'POST /mcp HTTP/1.0',
      'POST  /mcp HTTP/1.1',
      'POST /mcp HTTP/2.0',
      'POST /mcp',
      'post /mcp HTTP/1.1',
      'POST mcp HTTP/1.1',
      'POST http://evil.example/mcp HTTP/1.1',
      'POST /mcp?\u00ff HTTP/1.1',
      `POST /${'m'.repeat(20_000)} HTTP/1.1`,
      'BREW /mcp HTTP/1.1',
      'PRI * HTTP/2.0',
    ),
  );

  it('random bytes and malformed lines in the head → a status (400, 431, …) or a proper answer, never a silent close', async () => {
    const arb = fc.tuple(requestLine, fc.array(lineBytes, { maxLength: 4 }), fc.boolean());
    await fc.assert(
      fc.asyncProperty(arb, async ([line, extra, withAuth]) => {
        const head = [
          Buffer.from(
            `${line}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n`,
            'latin1',
          ),
          ...(withAuth ? [Buffer.from(`Authorization: Bearer ${TEST_TOKEN}\r\n`)] : []),
          ...extra.flatMap((b) => [b, Buffer.from('\r\n')]),
          Buffer.from(`Content-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`),
        ];
        bearerSrv.takeErrors();
        const r = await sendBytes(bearerSrv.port, Buffer.concat(head));
        tally(String(r.status));
        expect(
          r.status,
          `${line} + ${extra.map((b) => JSON.stringify(b.toString('latin1').slice(0, 60))).join(' ')}`,
        ).toBeLessThan(500);
        expect(bearerSrv.takeErrors()).toEqual([]);
        expect(r.head).not.toMatch(/\r\nmcp-session-id:/i);
      }),
      fcParams(200),
    );
    await stillServing(bearerSrv.url);
  });

  it('noauth: Host missing, empty, doubled or foreign in a raw head → 400 or 403, never served (docs/design-notes.md#noauth-behind-a-proxy)', async () => {
    const cases: Array<[string, number[]]> = [
      ['', [400]],
      ['Host: \r\n', [400, 403]],
      ['Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n', [400, 403]],
      ['Host: 127.0.0.1\r\nHost: evil.example\r\n', [400, 403]],
      ['Host: evil.example\r\nHost: 127.0.0.1\r\n', [400, 403]],
      ['Host: 127.0.0.1 evil\r\n', [400, 403]],
      ['Host: 127.0.0.1\r\n', [200]],
    ];
    for (const [hostLines, want] of cases) {
      const head = `POST /mcp HTTP/1.1\r\n${hostLines}Content-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;
      const r = await sendBytes(noauthSrv.port, Buffer.from(head, 'latin1'));
      tally(String(r.status));
      expect(want, JSON.stringify(hostLines)).toContain(r.status);
    }
  });

  it('every method on /mcp and nearby paths → 200/202/204/401/403/404/405, with Allow on 405 (docs/http.md#other-routes)', async () => {
    const arb = fc.tuple(
      fc.constantFrom(
        'GET',
        'HEAD',
        'PUT',
        'PATCH',
        'DELETE',
        'OPTIONS',
        'POST',
        'TRACE',
        'CONNECT',
        'PROPFIND',
      ),
      fc.constantFrom(
        '/mcp',
        '/mcp?x=1',
        '/mcp/',
        '/MCP',
        '//mcp',
        '/mcp/..',
        '/%6dcp',
        '/',
        '/.well-known/mcp.json',
        '/oauth/token',
        '/x'.repeat(1000),
      ),
      fc.constantFrom(undefined, 'http://localhost', 'http://evil.example'),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([method, path, org]) => {
        if (method === 'CONNECT') return; // node:http's client cannot send a CONNECT with a path
        const headers: Record<string, string> = {
          authorization: `Bearer ${TEST_TOKEN}`,
          'content-type': 'application/json',
        };
        if (org) headers.origin = org;
        const r = await raw(bearerSrv.base, {
          method,
          path,
          headers,
          body: method === 'GET' || method === 'HEAD' ? undefined : BODY,
          timeoutMs: 30_000,
        });
        tally(`${r.status}`);
        expect(
          [200, 202, 204, 400, 401, 403, 404, 405],
          `${method} ${path} origin=${org} → ${r.status} ${r.text.slice(0, 200)}`,
        ).toContain(r.status);
        if (r.status === 405) expect(r.headers.allow, `${method} ${path}`).toBeTruthy();
        if (path === '/mcp' && method === 'POST')
          expect(r.status).toBe(org === 'http://evil.example' ? 403 : 200);
      }),
      fcParams(100),
    );
    await stillServing(bearerSrv.url);
  });
});
