// Wire-level tests of POST /mcp and the other /mcp routes, against the real node:http stack on 127.0.0.1.
// Each describe names what it checks: docs/http.md (#eras, #order-of-checks, #other-routes,
// #limits-and-timeouts), docs/design-notes.md#command-line; docs/design-notes.md#statuses,
// docs/design-notes.md#notifications, docs/design-notes.md#limits,
// docs/design-notes.md#noauth-behind-a-proxy.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, TEST_TOKEN, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { inFlight } from '../helpers/held-connections.js';
import {
  bearer,
  type Era,
  notification,
  raw,
  request,
  seen,
  send,
  until,
  type RawReply,
} from '../helpers/raw-http.js';

const LIMIT = 2048;
const ALLOWED = 'https://app.example.com';
const ERAS: Era[] = ['handshake', 'modern'];
type Mode = 'bearer' | 'noauth';
const MODES: Mode[] = ['bearer', 'noauth'];

let ws: TempWorkspace;
const servers = {} as Record<Mode | 'proxy', InProcessServer>;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  const common = { SERVICE_ALLOWED_ORIGINS: ALLOWED, SERVICE_MAX_REQUEST_BYTES: String(LIMIT) };
  servers.bearer = await startInProcess({ workspace: ws.dir, env: common });
  servers.noauth = await startInProcess({
    workspace: ws.dir,
    env: { ...common, SERVICE_AUTH_MODE: 'noauth' },
  });
  servers.proxy = await startInProcess({
    workspace: ws.dir,
    env: { ...common, SERVICE_AUTH_MODE: 'noauth', SERVICE_EXTERNAL_AUTH_PROXY: '1' },
  });
});

afterAll(async () => {
  for (const s of Object.values(servers)) await s?.close();
  ws?.cleanup();
});

/** Credentials that pass in each mode (noauth needs nothing). */
const creds = (mode: Mode): Record<string, string> => (mode === 'bearer' ? bearer() : {});
/** Credentials that fail in each mode: no token (bearer) / a foreign Host (noauth). */
const badCreds = (mode: Mode, port: string): Record<string, string> =>
  mode === 'bearer' ? {} : { host: `evil.example:${port}` };
const portOf = (s: InProcessServer) => new URL(s.url).port;
const pad = (n: number) => 'x'.repeat(n);

function expectRpcError(r: RawReply, status: number, code: number) {
  expect({ status: r.status, code: r.json?.error?.code }).toEqual({ status, code });
  expect(r.json.jsonrpc).toBe('2.0');
}

describe('docs/http.md#order-of-checks: each step alone', () => {
  describe.each(MODES)('%s', (mode) => {
    describe.each(ERAS)('%s era', (era) => {
      const url = () => servers[mode].url;
      const ok = () => request(era, 'tools/list');

      it('a well-formed request passes every step (200)', async () => {
        const r = await send(url(), ok(), creds(mode));
        expect(r.status).toBe(200);
        expect(Array.isArray(r.json.result.tools)).toBe(true);
        expect(r.headers['content-type']).toMatch(/^application\/json/);
        expect(r.headers['cache-control']).toBe('no-store');
      });

      it('step 1: a foreign Origin → 403', async () => {
        const r = await send(url(), ok(), { ...creds(mode), origin: 'https://evil.example' });
        expect(r.status).toBe(403);
        expect(r.text).toContain('Origin');
        expect(r.headers['access-control-allow-origin']).toBeUndefined();
      });

      it(`step 2: not authenticated → ${mode === 'bearer' ? '401' : '403'}`, async () => {
        const r = await send(url(), ok(), badCreds(mode, portOf(servers[mode])));
        expect(r.status).toBe(mode === 'bearer' ? 401 : 403);
      });

      it('step 3a: Content-Type not application/json → 415; parameters after ";" are fine (docs/design-notes.md#statuses)', async () => {
        for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
          const r = await send(url(), ok(), { ...creds(mode), 'content-type': ct });
          expect(r.status, ct).toBe(415);
        }
        const missing = await send(url(), ok(), { ...creds(mode), 'content-type': undefined });
        expect(missing.status).toBe(415);
        const charset = await send(url(), ok(), {
          ...creds(mode),
          'content-type': 'Application/JSON; charset=utf-8',
        });
        expect(charset.status).toBe(200);
      });

      it('step 3b: Accept is not enforced (docs/design-notes.md#statuses)', async () => {
        const r = await send(url(), ok(), { ...creds(mode), accept: undefined });
        expect(r.status).toBe(200);
      });

      it('step 3c: a body over SERVICE_MAX_REQUEST_BYTES → 413; exactly the limit is accepted', async () => {
        const msg = ok();
        const base = JSON.stringify(msg.body);
        const atLimit = base + ' '.repeat(LIMIT - Buffer.byteLength(base));
        expect(Buffer.byteLength(atLimit)).toBe(LIMIT);
        expect((await send(url(), { ...msg, body: atLimit }, creds(mode))).status).toBe(200);
        const over = await send(url(), { ...msg, body: atLimit + ' ' }, creds(mode));
        expect(over.status).toBe(413);
      });

      it('step 3d: invalid JSON → 400 -32700', async () => {
        for (const body of ['{', '{"jsonrpc":"2.0",', 'not json', '']) {
          const r = await send(url(), { ...ok(), body }, creds(mode));
          expectRpcError(r, 400, -32700);
          expect(r.json.id).toBeNull();
        }
      });

      it('step 3e: a batch → 400 -32600 (docs/http.md#order-of-checks: batches are rejected)', async () => {
        const one = ok().body;
        for (const batch of [[one], [one, { ...one, id: 2 }], []]) {
          const r = await send(url(), { ...ok(), body: JSON.stringify(batch) }, creds(mode));
          expectRpcError(r, 400, -32600);
        }
      });

      it('step 3f: any other non-object → 400 -32600', async () => {
        for (const body of ['"tools/list"', '42', 'null', 'true']) {
          const r = await send(url(), { ...ok(), body }, creds(mode));
          expectRpcError(r, 400, -32600);
        }
      });
    });
  });
});

// Each row combines failures of several steps; the earliest step's answer wins. `fail` names the steps that
// fail, `status`/`code` is the answer of the first of them.
interface Row {
  name: string;
  eras: Era[];
  build(era: Era, mode: Mode, port: string): { headers: Record<string, string | undefined>; body: string };
  status: (mode: Mode) => number;
  code?: number;
  /** Text the body must contain (tells two 403s apart). */
  mentions?: string;
}

const bodyOf = (era: Era, method = 'tools/list', params: Record<string, unknown> = {}) =>
  JSON.stringify(request(era, method, params).body);
const headersOf = (era: Era, method = 'tools/list', params: Record<string, unknown> = {}) =>
  request(era, method, params).headers;

const PRECEDENCE: Row[] = [
  {
    name: 'bad Origin + bad credentials + bad media type + oversize + bad JSON → Origin wins (403)',
    eras: ERAS,
    build: (era, mode, port) => ({
      headers: {
        ...headersOf(era),
        ...badCreds(mode, port),
        origin: 'http://localhost.evil.example',
        'content-type': 'text/plain',
      },
      body: '{' + pad(LIMIT * 2),
    }),
    status: () => 403,
    mentions: 'Origin',
  },
  {
    name: 'bad Origin + no token → 403, not 401',
    eras: ERAS,
    build: (era, mode, port) => ({
      headers: { ...headersOf(era), ...badCreds(mode, port), origin: 'null' },
      body: bodyOf(era),
    }),
    status: () => 403,
    mentions: 'Origin',
  },
  {
    name: 'bad credentials + bad Content-Type → auth wins (401 bearer / 403 noauth)',
    eras: ERAS,
    build: (era, mode, port) => ({
      headers: { ...headersOf(era), ...badCreds(mode, port), 'content-type': 'text/plain' },
      body: bodyOf(era),
    }),
    status: (mode) => (mode === 'bearer' ? 401 : 403),
  },
  {
    name: 'bad credentials + oversize + bad JSON → auth wins',
    eras: ERAS,
    build: (era, mode, port) => ({
      headers: { ...headersOf(era), ...badCreds(mode, port) },
      body: '[' + pad(LIMIT * 2),
    }),
    status: (mode) => (mode === 'bearer' ? 401 : 403),
  },
  {
    name: 'bad Content-Type + oversize → 415, not 413',
    eras: ERAS,
    build: (era, mode) => ({
      headers: { ...headersOf(era), ...creds(mode), 'content-type': 'text/plain' },
      body: pad(LIMIT * 2),
    }),
    status: () => 415,
  },
  {
    name: 'oversize + invalid JSON → 413, not 400',
    eras: ERAS,
    build: (era, mode) => ({ headers: { ...headersOf(era), ...creds(mode) }, body: '{' + pad(LIMIT * 2) }),
    status: () => 413,
  },
  {
    name: 'a batch of otherwise invalid modern requests → 400 -32600 (batch before era and headers)',
    eras: ERAS,
    build: (era, mode) => ({
      headers: { ...headersOf(era), ...creds(mode), 'mcp-method': 'nope' },
      body: JSON.stringify([request('modern', 'no/such').body]),
    }),
    status: () => 400,
    code: -32600,
  },
  {
    name: 'modern: _meta version not a string + missing headers → 400 -32602 (envelope before headers)',
    eras: ['modern'],
    build: (_era, mode) => ({
      headers: { 'content-type': 'application/json', ...creds(mode) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'no/such',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': 20260728,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    }),
    status: () => 400,
    code: -32602,
  },
  {
    name: 'modern: clientCapabilities missing + unsupported version → 400 -32602',
    eras: ['modern'],
    build: (_era, mode) => ({
      headers: { 'content-type': 'application/json', ...creds(mode) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      }),
    }),
    status: () => 400,
    code: -32602,
  },
  {
    name: 'modern: unsupported version + missing headers + unknown method → 400 -32022',
    eras: ['modern'],
    build: (_era, mode) => ({
      headers: { 'content-type': 'application/json', ...creds(mode) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'no/such',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    }),
    status: () => 400,
    code: -32022,
  },
  {
    name: 'modern: mirror header mismatch + unknown method → 400 -32020, not 404',
    eras: ['modern'],
    build: (_era, mode) => ({
      headers: { ...headersOf('modern', 'no/such'), ...creds(mode), 'mcp-method': 'tools/list' },
      body: bodyOf('modern', 'no/such'),
    }),
    status: () => 400,
    code: -32020,
  },
  {
    name: 'modern: unknown method with correct headers → 404 -32601',
    eras: ['modern'],
    build: (_era, mode) => ({
      headers: { ...headersOf('modern', 'no/such'), ...creds(mode) },
      body: bodyOf('modern', 'no/such'),
    }),
    status: () => 404,
    code: -32601,
  },
  {
    name: 'handshake: unsupported MCP-Protocol-Version header + unknown method → 400 -32600, not 200',
    eras: ['handshake'],
    build: (_era, mode) => ({
      headers: { ...headersOf('handshake'), ...creds(mode), 'mcp-protocol-version': '2024-01-01' },
      body: bodyOf('handshake', 'no/such'),
    }),
    status: () => 400,
    code: -32600,
  },
  {
    name: 'handshake body + a 2026-07-28 header + unknown method → 404 -32601 (docs/design-notes.md#stateless-era-order)',
    eras: ['handshake'],
    build: (_era, mode) => ({
      headers: { ...headersOf('handshake'), ...creds(mode), 'mcp-protocol-version': '2026-07-28' },
      body: bodyOf('handshake', 'no/such'),
    }),
    status: () => 404,
    code: -32601,
  },
  {
    name: 'body without _meta + a 2026-07-28 header + tools/list → 400 -32602 (docs/design-notes.md#stateless-era-order)',
    eras: ['handshake'],
    build: (_era, mode) => ({
      headers: { ...headersOf('handshake'), ...creds(mode), 'mcp-protocol-version': '2026-07-28' },
      body: bodyOf('handshake', 'tools/list'),
    }),
    status: () => 400,
    code: -32602,
  },
  {
    name: 'handshake: unknown method → 200 -32601 (docs/design-notes.md#statuses)',
    eras: ['handshake'],
    build: (_era, mode) => ({
      headers: { ...headersOf('handshake'), ...creds(mode) },
      body: bodyOf('handshake', 'no/such'),
    }),
    status: () => 200,
    code: -32601,
  },
];

describe('docs/http.md#order-of-checks: an earlier failing step wins over a later one', () => {
  const cases = PRECEDENCE.flatMap((row) =>
    MODES.flatMap((mode) =>
      row.eras.map((era) => ({ row, mode, era, label: `${mode} / ${era}: ${row.name}` })),
    ),
  );
  it.each(cases)('$label', async ({ row, mode, era }) => {
    const s = servers[mode];
    const { headers, body } = row.build(era, mode, portOf(s));
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) clean[k] = v;
    const r = await raw(s.url, { headers: clean, body });
    expect(r.status).toBe(row.status(mode));
    if (row.code !== undefined) expect(r.json?.error?.code).toBe(row.code);
    if (row.mentions) expect(r.text).toContain(row.mentions);
  });
});

describe('the error table of docs/http.md#order-of-checks, row by row (both eras where the row applies)', () => {
  // | Condition | HTTP status | JSON-RPC code |
  it('missing or invalid credentials (bearer mode) → 401, both eras', async () => {
    for (const era of ERAS) {
      expect((await send(servers.bearer.url, request(era, 'tools/list'))).status).toBe(401);
      expect(
        (await send(servers.bearer.url, request(era, 'tools/list'), bearer('wrong-token-0123456789'))).status,
      ).toBe(401);
    }
  });

  it('modern request with a header that contradicts the body, or a missing mirror header → 400 -32020', async () => {
    const m = () => request('modern', 'tools/call', { name: 'read_file', arguments: { path: 'a.txt' } });
    const cases: Array<[string, Record<string, string | string[] | undefined>]> = [
      ['MCP-Protocol-Version missing', { 'mcp-protocol-version': undefined }],
      ['MCP-Protocol-Version contradicts _meta', { 'mcp-protocol-version': '2025-11-25' }],
      ['MCP-Protocol-Version twice', { 'mcp-protocol-version': ['2026-07-28', '2026-07-28'] }],
      ['Mcp-Method missing', { 'mcp-method': undefined }],
      ['Mcp-Method contradicts the body', { 'mcp-method': 'tools/list' }],
      ['Mcp-Method twice', { 'mcp-method': ['tools/call', 'tools/call'] }],
      ['Mcp-Name missing', { 'mcp-name': undefined }],
      ['Mcp-Name contradicts the body', { 'mcp-name': 'list_dir' }],
      ['Mcp-Name twice', { 'mcp-name': ['read_file', 'read_file'] }],
      [
        'Mcp-Name is base64 of another name',
        { 'mcp-name': `=?base64?${Buffer.from('list_dir').toString('base64')}?=` },
      ],
    ];
    for (const mode of MODES) {
      for (const [why, extra] of cases) {
        const r = await send(servers[mode].url, m(), { ...creds(mode), ...extra });
        expect({ why, status: r.status, code: r.json?.error?.code }).toEqual({
          why,
          status: 400,
          code: -32020,
        });
      }
      const good = await send(servers[mode].url, m(), creds(mode));
      expect(good.status).toBe(200);
      expect(good.json.result.isError).toBe(false);
    }
  });

  it('modern request with an unknown method → 404 -32601', async () => {
    for (const mode of MODES)
      expectRpcError(await send(servers[mode].url, request('modern', 'no/such'), creds(mode)), 404, -32601);
  });

  it('handshake request that fails → 200 with the JSON-RPC error in the body', async () => {
    for (const mode of MODES) {
      const url = servers[mode].url;
      expectRpcError(await send(url, request('handshake', 'no/such'), creds(mode)), 200, -32601);
      expectRpcError(
        await send(url, request('handshake', 'tools/call', { name: 'no_such_tool' }), creds(mode)),
        200,
        -32602,
      );
      expectRpcError(
        await send(url, request('handshake', 'resources/read', { uri: 'file:///x' }), creds(mode)),
        200,
        -32601,
      );
    }
  });

  it('GET /mcp → 405 (docs/http.md#other-routes: no SSE stream), both auth modes, with or without credentials', async () => {
    for (const mode of MODES) {
      for (const h of [creds(mode), {}]) {
        const r = await raw(servers[mode].url, {
          method: 'GET',
          headers: { accept: 'text/event-stream', ...h },
        });
        expect(r.status).toBe(405);
        expect(r.headers['content-type'] ?? '').not.toMatch(/event-stream/);
      }
    }
  });

  it('DELETE /mcp → 405 with Allow containing POST', async () => {
    for (const mode of MODES) {
      const r = await raw(servers[mode].url, {
        method: 'DELETE',
        headers: { ...creds(mode), 'mcp-session-id': 'abc' },
      });
      expect(r.status).toBe(405);
      expect(String(r.headers.allow).split(/,\s*/)).toContain('POST');
    }
  });

  it('a JSON-RPC batch → rejected (400 -32600)', async () => {
    for (const mode of MODES) {
      const r = await send(
        servers[mode].url,
        { ...request('handshake', 'ping'), body: JSON.stringify([request('handshake', 'ping').body]) },
        creds(mode),
      );
      expectRpcError(r, 400, -32600);
    }
  });

  it('a stale session header → ignored, not an error (docs/http.md#other-routes), in every method of both eras', async () => {
    for (const mode of MODES) {
      for (const era of ERAS) {
        for (const method of era === 'modern'
          ? ['server/discover', 'tools/list']
          : ['initialize', 'ping', 'tools/list']) {
          const params =
            method === 'initialize'
              ? { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }
              : {};
          const r = await send(servers[mode].url, request(era, method, params), {
            ...creds(mode),
            'mcp-session-id': 'stale-session-1234',
          });
          expect({ era, method, status: r.status, err: r.json?.error }).toEqual({
            era,
            method,
            status: 200,
            err: undefined,
          });
        }
        const n = await send(servers[mode].url, notification(era, 'notifications/initialized'), {
          ...creds(mode),
          'mcp-session-id': 'stale',
        });
        expect(n.status).toBe(202);
      }
    }
  });
});

describe('contract step 1: Origin (DNS rebinding and browsers)', () => {
  const LOOKALIKES = [
    'http://localhost.evil.example',
    'http://user@localhost',
    'http://user:pw@127.0.0.1:3000',
    'http://localhost/path',
    'http://localhost:3000/',
    'null',
    'https://127.0.0.1.evil.example',
    'http://127.0.0.1.nip.io',
    'file://',
    'https://app.example.com.evil.example',
    'https://app.example.com:444',
    'http://app.example.com',
    'https://evil.example',
  ];
  const ALLOWED_ORIGINS = [
    'http://localhost',
    'http://localhost:5173',
    'https://localhost:1',
    'http://127.0.0.1:65535',
    'http://127.0.0.2:8080',
    'http://[::1]:3000',
    ALLOWED,
  ];

  it.each(MODES)('%s: lookalike origins are denied with 403 and no CORS headers', async (mode) => {
    for (const origin of LOOKALIKES) {
      const r = await send(servers[mode].url, request('handshake', 'ping'), { ...creds(mode), origin });
      expect({ origin, status: r.status }).toEqual({ origin, status: 403 });
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it.each(MODES)(
    '%s: loopback origins on any port and SERVICE_ALLOWED_ORIGINS entries are served with CORS headers',
    async (mode) => {
      for (const era of ERAS) {
        for (const origin of ALLOWED_ORIGINS) {
          const r = await send(servers[mode].url, request(era, 'tools/list'), { ...creds(mode), origin });
          expect({ origin, status: r.status }).toEqual({ origin, status: 200 });
          expect(r.headers['access-control-allow-origin']).toBe(origin);
          expect(r.headers.vary).toMatch(/Origin/i);
        }
      }
    },
  );

  it('a 401 for an allowed origin carries CORS headers and exposes WWW-Authenticate (browser clients read the challenge)', async () => {
    const r = await send(servers.bearer.url, request('handshake', 'ping'), {
      origin: 'http://localhost:5173',
    });
    expect(r.status).toBe(401);
    expect(r.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(String(r.headers['access-control-expose-headers'])).toMatch(/WWW-Authenticate/i);
  });

  it('no Origin header at all (non-browser clients) is served', async () => {
    const r = await send(servers.bearer.url, request('handshake', 'ping'), {
      ...bearer(),
      origin: undefined,
    });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('docs/http.md#other-routes: OPTIONS preflight', () => {
  const preflight = (url: string, origin: string | undefined, path = '/mcp') =>
    raw(url, {
      method: 'OPTIONS',
      path,
      headers: {
        ...(origin ? { origin } : {}),
        'access-control-request-method': 'POST',
        'access-control-request-headers':
          'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
      },
    });

  it.each(MODES)(
    '%s: allowed origins get 204 with CORS headers naming the MCP headers; no credentials needed',
    async (mode) => {
      for (const origin of ['http://localhost:5173', 'http://[::1]:1', ALLOWED]) {
        const r = await preflight(servers[mode].url, origin);
        expect(r.status).toBe(204);
        expect(r.text).toBe('');
        expect(r.headers['access-control-allow-origin']).toBe(origin);
        expect(String(r.headers['access-control-allow-methods']).split(/,\s*/)).toContain('POST');
        const allowHeaders = String(r.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
        for (const h of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name'])
          expect(allowHeaders).toContain(h);
      }
    },
  );

  it.each(MODES)('%s: other origins get 403', async (mode) => {
    for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'null']) {
      const r = await preflight(servers[mode].url, origin);
      expect(r.status).toBe(403);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('the server card path answers preflights too', async () => {
    const r = await preflight(servers.bearer.url, 'http://localhost:5173', '/.well-known/mcp.json');
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });
});

describe('contract step 7 and docs/design-notes.md#notifications: every notification → 202 with an empty body, both eras', () => {
  const METHODS = [
    'notifications/initialized',
    'notifications/cancelled',
    'notifications/x',
    'notifications/progress',
  ];
  it.each(MODES)('%s', async (mode) => {
    for (const era of ERAS) {
      for (const method of METHODS) {
        const params = method === 'notifications/cancelled' ? { requestId: 7, reason: 'user' } : {};
        const r = await send(servers[mode].url, notification(era, method, params), creds(mode));
        expect({ era, method, status: r.status, body: r.text }).toEqual({
          era,
          method,
          status: 202,
          body: '',
        });
      }
    }
  });

  it('a JSON-RPC response posted by a client is acknowledged with 202 and an empty body', async () => {
    const r = await send(
      servers.bearer.url,
      { headers: request('handshake', 'ping').headers, body: { jsonrpc: '2.0', id: 5, result: {} } },
      bearer(),
    );
    expect({ status: r.status, body: r.text }).toEqual({ status: 202, body: '' });
  });

  it('notifications still pass the earlier steps: no token → 401, foreign Origin → 403', async () => {
    expect(
      (await send(servers.bearer.url, notification('handshake', 'notifications/cancelled', { requestId: 1 })))
        .status,
    ).toBe(401);
    expect(
      (
        await send(servers.bearer.url, notification('modern', 'notifications/cancelled', { requestId: 1 }), {
          ...bearer(),
          origin: 'https://evil.example',
        })
      ).status,
    ).toBe(403);
  });
});

describe('contract step 2 (bearer): 401 with WWW-Authenticate; several tokens; SERVICE_AUTH_TOKEN_FILE', () => {
  let multi: InProcessServer;
  let fromFile: InProcessServer;
  const A = 'token-a-0123456789abcdef';
  const B = 'token-b-fedcba9876543210';
  const C = 'token-c-from-file-0123456789';
  const D = 'token-d-from-file-9876543210';

  beforeAll(async () => {
    multi = await startInProcess({ workspace: ws.dir, env: { SERVICE_AUTH_TOKEN: `${A},${B}` } });
    tokenDir = mkdtempSync(path.join(tmpdir(), 'wb-token-'));
    const file = path.join(tokenDir, 'token.txt');
    writeFileSync(file, `${C}\n${D}\n`, { mode: 0o600 });
    fromFile = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_AUTH_TOKEN: '', SERVICE_AUTH_TOKEN_FILE: file },
    });
  });
  let tokenDir = '';
  afterAll(async () => {
    await multi?.close();
    await fromFile?.close();
    if (tokenDir) rmSync(tokenDir, { recursive: true, force: true });
  });

  it('no token → 401 with WWW-Authenticate: Bearer realm="…" and no error parameter', async () => {
    const r = await send(servers.bearer.url, request('handshake', 'ping'));
    expect(r.status).toBe(401);
    const h = String(r.headers['www-authenticate']);
    expect(h).toMatch(/^Bearer realm="[^"]+"/);
    expect(h).not.toMatch(/error=/);
  });

  it('a wrong token → 401 with error="invalid_token"; so does another scheme', async () => {
    for (const authorization of [
      'Bearer wrong-0123456789abcdef',
      `Bearer ${TEST_TOKEN}x`,
      `Bearer ${TEST_TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from('a:b').toString('base64')}`,
    ]) {
      const r = await send(servers.bearer.url, request('modern', 'tools/list'), { authorization });
      expect(r.status).toBe(401);
      expect(String(r.headers['www-authenticate'])).toMatch(/^Bearer realm="[^"]+".*error="invalid_token"/);
    }
  });

  it('the token is accepted with any case of the scheme name (RFC 6750 §2.1, RFC 9110 §11.1)', async () => {
    const r = await send(servers.bearer.url, request('handshake', 'ping'), {
      authorization: `bearer ${TEST_TOKEN}`,
    });
    expect(r.status).toBe(200);
  });

  it('several tokens configured (comma-separated): each works, nothing else does', async () => {
    for (const t of [A, B])
      expect((await send(multi.url, request('handshake', 'ping'), bearer(t))).status).toBe(200);
    expect((await send(multi.url, request('handshake', 'ping'), bearer(`${A},${B}`))).status).toBe(401);
    expect((await send(multi.url, request('handshake', 'ping'), bearer(TEST_TOKEN))).status).toBe(401);
  });

  it('SERVICE_AUTH_TOKEN_FILE: every token in the file works', async () => {
    for (const t of [C, D])
      expect((await send(fromFile.url, request('modern', 'tools/list'), bearer(t))).status).toBe(200);
    expect((await send(fromFile.url, request('modern', 'tools/list'), bearer(TEST_TOKEN))).status).toBe(401);
  });

  it('bearer mode serves a non-loopback Host and forwarded requests that carry the token (a tunnel)', async () => {
    const r = await send(servers.bearer.url, request('handshake', 'ping'), {
      ...bearer(),
      host: 'abc.trycloudflare.com',
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-proto': 'https',
    });
    expect(r.status).toBe(200);
  });
});

describe('docs/design-notes.md#command-line / docs/design-notes.md#noauth-behind-a-proxy: noauth serves loopback callers only', () => {
  it('non-loopback Host → 403, loopback names on any port → 200', async () => {
    const s = servers.noauth;
    const port = portOf(s);
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `10.0.0.1:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `[2001:db8::1]:${port}`,
    ]) {
      const r = await send(s.url, request('handshake', 'ping'), { host });
      expect({ host, status: r.status }).toEqual({ host, status: 403 });
    }
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      'localhost',
      `LOCALHOST:${port}`,
    ]) {
      const r = await send(s.url, request('handshake', 'ping'), { host });
      expect({ host, status: r.status }).toEqual({ host, status: 200 });
    }
  });

  it('X-Forwarded-For / Forwarded / X-Forwarded-Host → 403 even with a loopback Host', async () => {
    for (const h of [
      { 'x-forwarded-for': '127.0.0.1' },
      { forwarded: 'for=127.0.0.1;proto=https' },
      { 'x-forwarded-host': 'localhost' },
      { 'x-forwarded-proto': 'https' },
    ]) {
      for (const era of ERAS) {
        const r = await send(servers.noauth.url, request(era, 'tools/list'), h);
        expect({ h, status: r.status }).toEqual({ h, status: 403 });
      }
    }
  });

  it('with SERVICE_EXTERNAL_AUTH_PROXY=1 forwarded requests and foreign Hosts are served', async () => {
    for (const era of ERAS) {
      const r = await send(servers.proxy.url, request(era, 'tools/list'), {
        host: 'mcp.example.org',
        'x-forwarded-for': '203.0.113.9',
        forwarded: 'for=203.0.113.9;proto=https',
      });
      expect(r.status).toBe(200);
    }
  });

  it('SERVICE_EXTERNAL_AUTH_PROXY never lifts the Origin check', async () => {
    const r = await send(servers.proxy.url, request('handshake', 'ping'), { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
  });
});

describe('contract step 3: body limit (SERVICE_MAX_REQUEST_BYTES) with Content-Length and chunked', () => {
  it.each(MODES)(
    '%s: Content-Length over the limit → 413 before the body is sent, and the server keeps serving',
    async (mode) => {
      const s = servers[mode];
      const u = new URL(s.url);
      // Declare 10 MB and send only a few bytes: the answer must come without waiting for the rest.
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({
          host: u.hostname,
          port: u.port,
          method: 'POST',
          path: '/mcp',
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-length': String(10_000_000),
            ...creds(mode),
          },
        });
        // The body never comes: a server that waited for it would hang here until this ceiling.
        const timer = setTimeout(
          () => reject(new Error('413 did not come before the body was sent')),
          60_000,
        );
        req.on('response', (res) => {
          clearTimeout(timer);
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        req.on('error', () => undefined);
        req.write('{"jsonrpc":"2.0",');
      });
      expect(status).toBe(413);
      expect((await send(s.url, request('handshake', 'ping'), creds(mode))).status).toBe(200);
    },
  );

  it.each(MODES)('%s: a chunked body over the limit → 413, and the server keeps serving', async (mode) => {
    const s = servers[mode];
    for (const era of ERAS) {
      const msg = request(era, 'tools/list');
      const text = JSON.stringify({ ...msg.body, pad: pad(LIMIT * 4) });
      const chunks = [text.slice(0, 100), text.slice(100, 3000), text.slice(3000)];
      const r = await raw(s.url, { headers: { ...msg.headers, ...creds(mode) }, chunks });
      expect(r.status).toBe(413);
      expect((await send(s.url, msg, creds(mode))).status).toBe(200);
    }
  });

  it.each(MODES)('%s: a chunked body within the limit is served', async (mode) => {
    const msg = request('modern', 'tools/list');
    const text = JSON.stringify(msg.body);
    const r = await raw(servers[mode].url, {
      headers: { ...msg.headers, ...creds(mode) },
      chunks: [text.slice(0, 10), text.slice(10)],
    });
    expect(r.status).toBe(200);
  });
});

describe('docs/design-notes.md#statuses, docs/design-notes.md#limits: over the concurrent-request cap or the connection cap → 503 with Retry-After: 1', () => {
  it('maxConcurrent 1: a request still receiving its body holds the only slot; the next gets 503, then service resumes', async () => {
    const s = await startInProcess({ workspace: ws.dir, limits: { maxConcurrent: 1 } });
    try {
      const u = new URL(s.url);
      const body = JSON.stringify(request('handshake', 'tools/list').body);
      const slow = http.request({
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...bearer() },
      });
      const slowStatus = new Promise<number>((resolve, reject) => {
        slow.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        slow.on('error', reject);
      });
      slow.write(body.slice(0, 5)); // headers and a few bytes: the request is in flight
      const busy = await until(
        () => send(s.url, request('handshake', 'ping'), bearer()),
        (r) => r.status === 503,
      );
      expect(busy.status).toBe(503);
      expect(busy.headers['retry-after']).toBe('1');
      expect(busy.json?.error?.code).toBeTypeOf('number');
      slow.end(body.slice(5));
      expect(await slowStatus).toBe(200);
      const after = await until(
        () => send(s.url, request('handshake', 'ping'), bearer()),
        (r) => r.status === 200,
      );
      expect(after.status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('maxConnections 1: while the only connection carries an authenticated request, a second gets 503 with Retry-After: 1; after it is answered, service resumes', async () => {
    const s = await startInProcess({ workspace: ws.dir, limits: { maxConnections: 1 } });
    try {
      // An unused or idle connection would be evicted for the newcomer (test/http/pressure):
      // only authenticated work in flight holds a slot against it.
      const held = await inFlight(s.url);
      const busy = await until(
        () =>
          send(s.url, request('handshake', 'ping'), bearer()).catch(
            () => ({ status: 0, headers: {} }) as RawReply,
          ),
        (r) => r.status === 503,
      );
      expect(busy.status).toBe(503);
      expect(busy.headers['retry-after']).toBe('1');
      expect(await held.finish()).toBe(200);
      const after = await until(
        () => send(s.url, request('handshake', 'ping'), bearer()).catch(() => ({ status: 0 }) as RawReply),
        (r) => r.status === 200,
      );
      expect(after.status).toBe(200);
      held.socket.destroy();
    } finally {
      await s.close();
    }
  });
});

describe('docs/http.md#other-routes / contract step 8: no response ever carries Mcp-Session-Id', () => {
  it('none of the responses seen in this file did', () => {
    expect(seen.length).toBeGreaterThan(100);
    const carrying = seen.filter((r) =>
      Object.keys(r.headers).some((h) => h.toLowerCase() === 'mcp-session-id'),
    );
    expect(carrying).toEqual([]);
  });
});
