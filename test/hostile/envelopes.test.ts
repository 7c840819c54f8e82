// Generated JSON-RPC envelopes and _meta: property-based, over real HTTP on 127.0.0.1, in both protocol eras
// — the handshake era (2025-11-25: initialize, then requests; a Mcp-Session-Id sent by the client is ignored)
// and the stateless 2026-07-28 era (`_meta` version and capabilities in every request, the
// MCP-Protocol-Version / Mcp-Method / Mcp-Name mirror headers). Generated: wrong types, missing and extra
// fields, huge and odd ids, nested junk, batches, whole bodies of any JSON, raw bytes that are not JSON or
// not UTF-8. Each answer is checked against the documented order of checks (docs/http.md#order-of-checks,
// steps 3–8; docs/design-notes.md#statuses, docs/design-notes.md#stateless-era-order): the exact HTTP status
// and JSON-RPC code, the id echoed, never -32603, never a session id, no logged server error, and a valid
// call still served after each property.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../../src/protocol/json-shape.js';
import { hostileString } from './arbitraries.js';
import {
  fcParams,
  printTallies,
  GOOD_HEADERS,
  judge,
  makeLayout,
  postRaw,
  snapshot,
  startHostile,
  stillServing,
  type HostileServer,
  type Layout,
} from './support.js';
import { treeChanges } from '../helpers/tree-snapshot.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const MODERN = '2026-07-28';
const V = 'io.modelcontextprotocol/protocolVersion';
const C = 'io.modelcontextprotocol/clientCapabilities';
const ABSENT = Symbol('absent');
type Maybe<T> = T | typeof ABSENT;

let L: Layout;
let srv: HostileServer;
let before: { ws: Record<string, string>; canary: Record<string, string> };

beforeAll(async () => {
  L = makeLayout();
  srv = await startHostile({
    workspace: L.ws,
    env: { SERVICE_AUDIT_LOG: path.join(L.parent, 'audit.jsonl') },
  });
  before = { ws: snapshot(L.ws), canary: snapshot(L.canary) };
});
afterAll(async () => {
  printTallies();
  // Nothing in this file may change a file anywhere.
  expect(treeChanges(before.canary, snapshot(L.canary))).toEqual([]);
  expect(treeChanges(before.ws, snapshot(L.ws))).toEqual([]);
  await srv?.close();
  L?.cleanup();
});

/** Reply checked for what every answer must be (judge), plus no error in the server's log. */
async function post(
  body: string | Buffer,
  headers: Record<string, string | string[]> = GOOD_HEADERS,
  label = '',
) {
  srv.takeErrors();
  const r = await postRaw(srv.url, body, headers);
  expect(srv.takeErrors(), `${label}: the server logged an error`).toEqual([]);
  return { r, v: judge(r, `${label} body=${String(body).slice(0, 300)}`) };
}

describe('any JSON value as the body (contract step 3)', () => {
  it('arrays are batches → 400/-32600, other non-objects → 400/-32600, objects → a specific answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const body = JSON.stringify(value);
        const { r, v } = await post(body, GOOD_HEADERS, 'json value');
        if (Array.isArray(value) || typeof value !== 'object' || value === null)
          expect({ status: r.status, v }, body).toEqual({ status: 400, v: { kind: 'rpc', code: -32600 } });
      }),
      fcParams(200),
    );
    await stillServing(srv.url);
  });

  it('batches of valid requests, of notifications, empty and nested → 400/-32600, none of them run', async () => {
    const one = fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.integer(),
      method: fc.constantFrom('tools/list', 'ping', 'initialize', 'tools/call'),
      params: fc.constant({ name: 'server_info', arguments: {} }),
    });
    const batch = fc.oneof(
      fc.array(one, { maxLength: 20 }),
      fc.array(fc.array(one, { maxLength: 3 }), { maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(batch, async (b) => {
        const { r, v } = await post(JSON.stringify(b), GOOD_HEADERS, 'batch');
        expect({ status: r.status, v, id: r.json.id }).toEqual({
          status: 400,
          v: { kind: 'rpc', code: -32600 },
          id: null,
        });
      }),
      fcParams(100),
    );
    await stillServing(srv.url);
  });
});

describe('bodies that are not JSON, or not UTF-8 (contract step 3)', () => {
  it('truncated, garbage, NUL, invalid UTF-8, BOM, lone surrogate escapes → -32700 or a specific answer', async () => {
    const valid = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'read_file', arguments: { path: 'src/main.ts' } },
    });
    const mutation = fc.oneof(
      fc.integer({ min: 0, max: valid.length - 1 }).map((n) => Buffer.from(valid.slice(0, n))),
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      fc
        .tuple(fc.integer({ min: 0, max: valid.length }), fc.uint8Array({ minLength: 1, maxLength: 6 }))
        .map(([at, bytes]) =>
          Buffer.concat([Buffer.from(valid.slice(0, at)), Buffer.from(bytes), Buffer.from(valid.slice(at))]),
        ),
      fc.constantFrom(
        Buffer.from('\uFEFF' + valid),
        Buffer.from(valid + '\0'),
        Buffer.from(valid.replace('src/main.ts', 'src/\\ud800main.ts')),
        Buffer.from(valid.replace('src/main.ts', 'src/main.ts\\u0000')),
        Buffer.from(valid.replace('"2.0"', '"2.0\\u0000"')),
        Buffer.concat([
          Buffer.from(valid.slice(0, 10)),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(valid.slice(10)),
        ]),
        Buffer.from(valid + valid),
        Buffer.from(' \t\r\n' + valid + ' \n'),
        Buffer.from(''),
        Buffer.from('null'),
        Buffer.from('1e999'),
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}'),
        Buffer.from('{"jsonrpc":"2.0","id":1e999,"method":"ping"}'),
        Buffer.from('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}'),
        Buffer.from('{"__proto__":{"jsonrpc":"2.0"},"id":1,"method":"ping"}'),
      ),
    );
    await fc.assert(
      fc.asyncProperty(mutation, async (body) => {
        const { v } = await post(body, GOOD_HEADERS, `bytes ${body.toString('hex').slice(0, 200)}`);
        let parses = true;
        try {
          JSON.parse(body.toString('utf8'));
        } catch {
          parses = false;
        }
        if (!parses) expect(v, body.toString('hex').slice(0, 200)).toEqual({ kind: 'rpc', code: -32700 });
      }),
      fcParams(200),
    );
    await stillServing(srv.url);
  });
});

// ---- The structured envelope and its oracle: the documented order of checks. ----

interface Envelope {
  era: 'handshake' | 'modern';
  jsonrpc: Maybe<unknown>;
  id: Maybe<unknown>;
  method: Maybe<unknown>;
  params: Maybe<unknown>;
  /** For tools/call: name and arguments inside params (when params is an object). */
  name: Maybe<unknown>;
  args: Maybe<unknown>;
  /** Modern: the _meta version and capabilities (ABSENT leaves the key out). */
  version: Maybe<unknown>;
  caps: Maybe<unknown>;
  metaJunk: Record<string, unknown>;
  extra: Record<string, unknown>;
  /** Header plan: mirror headers right, missing, wrong or doubled; MCP-Protocol-Version for the handshake era. */
  mpv: 'right' | 'missing' | 'wrong' | 'double' | string;
  mmethod: 'right' | 'missing' | 'wrong' | 'double';
  mname: 'right' | 'missing' | 'wrong' | 'double';
  sessionId: Maybe<string>;
}

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'server/discover',
  'notifications/initialized',
  'notifications/cancelled',
  'resources/read',
  'prompts/get',
  'logging/setLevel',
  'no/such',
  'rpc.discover',
  '__proto__',
  'tools/list\u0000',
  'x'.repeat(5000),
];
const IDS = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 5e-324),
  fc.string({ maxLength: 20 }),
  fc.constantFrom('', '\u0000', '😀', '\ud800', 'x'.repeat(100_000)),
  fc.constantFrom(null, true, false, {}, [], [1], { id: 1 }),
);
const junkValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostileString);
const junkObject = fc.dictionary(
  fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__'),
  junkValue,
  { maxKeys: 4 },
);

const envelope: fc.Arbitrary<Envelope> = fc.record({
  era: fc.constantFrom('handshake', 'modern'),
  jsonrpc: fc.oneof(
    { weight: 20, arbitrary: fc.constant('2.0') },
    fc.constantFrom<Maybe<unknown>>('1.0', 2, 2.0, null, '', ' 2.0', ABSENT),
  ),
  id: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: 1000 }) },
    { weight: 3, arbitrary: IDS },
    fc.constant<Maybe<unknown>>(ABSENT),
  ),
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('tools/call', 'tools/list', 'server/discover') },
    { weight: 8, arbitrary: fc.constantFrom(...METHODS) },
    fc.constantFrom<Maybe<unknown>>('', 5, null, [], {}, ABSENT),
  ),
  params: fc.oneof(
    { weight: 20, arbitrary: fc.constant<Maybe<unknown>>({}) },
    fc.constantFrom<Maybe<unknown>>(ABSENT, [], 'x', 0, null, true),
  ),
  name: fc.oneof(
    { weight: 4, arbitrary: fc.constant('server_info') },
    fc.constantFrom<Maybe<unknown>>('no_such_tool', 'réad_file', '😀', '', 5, null, ABSENT),
  ),
  args: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Maybe<unknown>>({}) },
    fc.constantFrom<Maybe<unknown>>(ABSENT, null, [], 'x', 1),
    junkObject,
  ),
  version: fc.oneof(
    { weight: 6, arbitrary: fc.constant(MODERN) },
    fc.constantFrom<Maybe<unknown>>('2025-11-25', '9999-01-01', '', 5, null, {}, ABSENT),
  ),
  caps: fc.oneof(
    { weight: 6, arbitrary: fc.constant<Maybe<unknown>>({}) },
    fc.constantFrom<Maybe<unknown>>(ABSENT, [], null, 'x', 1, { elicitation: {} }),
    junkObject,
  ),
  metaJunk: junkObject,
  extra: junkObject.map((o) => {
    for (const k of ['jsonrpc', 'id', 'method', 'params', 'result', 'error']) delete o[k];
    return o;
  }),
  mpv: fc.oneof(
    { weight: 6, arbitrary: fc.constant('right') },
    fc.constantFrom('missing', 'wrong', 'double', '2025-11-25', '2025-06-18', MODERN, 'garbage', ''),
  ),
  mmethod: fc.oneof(
    { weight: 6, arbitrary: fc.constant('right' as const) },
    fc.constantFrom('missing' as const, 'wrong' as const, 'double' as const),
  ),
  mname: fc.oneof(
    { weight: 6, arbitrary: fc.constant('right' as const) },
    fc.constantFrom('missing' as const, 'wrong' as const, 'double' as const),
  ),
  sessionId: fc.oneof(
    fc.constant<Maybe<string>>(ABSENT),
    fc.string({ unit: 'grapheme-ascii', maxLength: 60 }),
  ),
});

/** The body and headers an envelope stands for. */
function render(e: Envelope): { body: Record<string, unknown>; headers: Record<string, string | string[]> } {
  const body: Record<string, unknown> = { ...e.extra };
  if (e.jsonrpc !== ABSENT) body.jsonrpc = e.jsonrpc;
  if (e.id !== ABSENT) body.id = e.id;
  if (e.method !== ABSENT) body.method = e.method;
  let params = e.params;
  if (params !== ABSENT && typeof params === 'object' && params !== null && !Array.isArray(params)) {
    const p: Record<string, unknown> = {};
    if (e.method === 'tools/call' || e.method === 'prompts/get') {
      if (e.name !== ABSENT) p.name = e.name;
      if (e.args !== ABSENT) p.arguments = e.args;
    }
    if (e.method === 'resources/read' && e.name !== ABSENT) p.uri = e.name;
    if (e.era === 'modern') {
      const meta: Record<string, unknown> = { ...e.metaJunk };
      delete meta[V];
      delete meta[C];
      if (e.version !== ABSENT) meta[V] = e.version;
      if (e.caps !== ABSENT) meta[C] = e.caps;
      p._meta = meta;
    } else if (Object.keys(e.metaJunk).length) {
      const meta = { ...e.metaJunk };
      delete meta[V];
      p._meta = meta;
    }
    params = p;
  }
  if (params !== ABSENT) body.params = params;

  const headers: Record<string, string | string[]> = { ...GOOD_HEADERS };
  if (e.sessionId !== ABSENT) headers['mcp-session-id'] = e.sessionId;
  const mirror = (name: string, plan: string, right: string) => {
    if (plan === 'missing') return;
    if (plan === 'wrong') headers[name] = `${right}-not`;
    else if (plan === 'double') headers[name] = [right, right];
    else headers[name] = right;
  };
  const headerValue = (s: string) =>
    /^[\x20-\x7e]*$/.test(s) ? s : `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
  if (e.era === 'modern') {
    mirror(
      'mcp-protocol-version',
      ['right', 'missing', 'wrong', 'double'].includes(e.mpv) ? e.mpv : 'right',
      typeof e.version === 'string' ? e.version : MODERN,
    );
    if (typeof e.method === 'string') mirror('mcp-method', e.mmethod, headerValue(e.method));
    const nameField = e.method === 'resources/read' ? 'uri' : 'name';
    const p = body.params as Record<string, unknown> | undefined;
    if (
      typeof p === 'object' &&
      p !== null &&
      ['tools/call', 'prompts/get', 'resources/read'].includes(e.method as string)
    )
      mirror('mcp-name', e.mname, headerValue(String(p[nameField] ?? '')));
  } else if (!['right', 'missing'].includes(e.mpv)) {
    headers['mcp-protocol-version'] =
      e.mpv === 'double' ? ['2025-11-25', '2025-11-25'] : e.mpv === 'wrong' ? 'garbage' : e.mpv;
  }
  return { body, headers };
}

type Expect =
  { status: number; code: number } | { status: 200; result: 'ok' | 'tool-error' } | { status: 202 };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The documented verdict (docs/http.md#order-of-checks; docs/design-notes.md#statuses, docs/design-notes.md#stateless-era-order). */
function oracle(body: Record<string, unknown>, headers: Record<string, string | string[]>): Expect {
  const bad = (status: number, code: number) => ({ status, code });
  if (body.jsonrpc !== '2.0') return bad(400, -32600);
  if (typeof body.method !== 'string' || body.method === '') return bad(400, -32600);
  if (body.params !== undefined && !isObj(body.params)) return bad(400, -32600);
  const isRequest = 'id' in body;
  if (isRequest && typeof body.id !== 'string' && typeof body.id !== 'number') return bad(400, -32600);
  const method = body.method;
  const params = body.params as Record<string, unknown> | undefined;
  const meta = params?._meta;
  const h = (n: string) => {
    const v = headers[n];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  };
  const decode = (v: string) => {
    const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(v);
    return m ? Buffer.from(m[1] as string, 'base64').toString('utf8') : v;
  };
  const mirrorFails = (n: string, expected: string, required: boolean) => {
    const vals = h(n);
    if (vals.length === 0) return required;
    return vals.length > 1 || decode(vals[0] as string) !== expected;
  };
  const NAMED: Record<string, string> = {
    'tools/call': 'name',
    'prompts/get': 'name',
    'resources/read': 'uri',
  };
  let era: 'modern' | 'handshake' = 'handshake';
  if (method !== 'initialize' && isObj(meta) && V in meta) {
    era = 'modern';
    const version = meta[V];
    if (typeof version !== 'string') return bad(400, -32602);
    if (!isObj(meta[C])) return bad(400, -32602);
    if (mirrorFails('mcp-protocol-version', version, false)) return bad(400, -32020);
    if (version !== MODERN) return bad(400, -32022);
    if (mirrorFails('mcp-protocol-version', version, isRequest)) return bad(400, -32020);
    if (mirrorFails('mcp-method', method, isRequest)) return bad(400, -32020);
    if (NAMED[method] && mirrorFails('mcp-name', String(params?.[NAMED[method] as string] ?? ''), isRequest))
      return bad(400, -32020);
  } else {
    const mpv = h('mcp-protocol-version');
    if (mpv.length > 1) return bad(400, -32600);
    if (mpv.length === 1) {
      if (mpv[0] === MODERN) {
        if (isRequest && !['server/discover', 'tools/list', 'tools/call'].includes(method) && !NAMED[method])
          return bad(404, -32601);
        return bad(400, -32602);
      }
      if (!['2025-11-25', '2025-06-18'].includes(mpv[0] as string)) return bad(400, -32600);
    }
  }
  if (!isRequest) return { status: 202 };
  const known =
    era === 'modern'
      ? ['server/discover', 'tools/list', 'tools/call']
      : ['initialize', 'ping', 'tools/list', 'tools/call'];
  if (!known.includes(method)) return bad(era === 'modern' ? 404 : 200, -32601);
  if (method !== 'tools/call') return { status: 200, result: 'ok' };
  if (typeof params?.name !== 'string') return bad(200, -32602);
  if (params.name !== 'server_info') return bad(200, -32602);
  const args = params.arguments ?? {};
  if (!isObj(args) || Object.keys(args).length > 0) return { status: 200, result: 'tool-error' };
  return { status: 200, result: 'ok' };
}

describe('generated envelopes and _meta in both eras (contract steps 3–8)', () => {
  it('each envelope gets exactly the status and code of the first check it fails, and its id back', async () => {
    await fc.assert(
      fc.asyncProperty(envelope, async (e) => {
        const { body, headers } = render(e);
        const text = JSON.stringify(body);
        const label = `${e.era} ${text.slice(0, 300)} headers=${JSON.stringify(headers).slice(0, 300)}`;
        const { r, v } = await post(text, headers, label);
        // Over SERVICE_MAX_REQUEST_BYTES (4 MiB) the size decides first (contract step 3).
        const want: Expect =
          Buffer.byteLength(text) > 4 * 1024 * 1024
            ? { status: 413, code: -32600 }
            : oracle(JSON.parse(text), headers);
        const got: Expect =
          v.kind === 'accepted'
            ? { status: 202 }
            : v.kind === 'rpc'
              ? { status: r.status, code: v.code }
              : { status: 200, result: v.kind === 'tool' ? 'tool-error' : 'ok' };
        expect(got, `${label}\n→ ${r.text.slice(0, 300)}`).toEqual(want);
        if (v.kind === 'tool') expect(v.code).toBe('INVALID_ARGUMENT');
        if (r.status !== 202) {
          // The id comes back as sent (as JSON reads it) when it is a string or a number, else null.
          const sent = JSON.parse(text).id;
          const echo =
            r.status !== 413 && (typeof sent === 'string' || typeof sent === 'number') ? sent : null; // 413: never parsed
          expect(
            Object.is(r.json.id, echo) || (r.json.id === 0 && echo === 0),
            `${label}: id ${r.json.id}`,
          ).toBe(true);
        }
        if (v.kind === 'ok' || v.kind === 'tool') {
          const modern = r.json.result.resultType !== undefined;
          const wasModern =
            isObj(JSON.parse(text).params?._meta) &&
            V in JSON.parse(text).params._meta &&
            JSON.parse(text).method !== 'initialize';
          // docs/design-notes.md#statuses: modern results carry resultType and serverInfo; handshake results
          // carry none.
          expect(modern, label).toBe(wasModern);
        }
      }),
      fcParams(300),
    );
    await stillServing(srv.url);
  });

  it('a client response (result or error, no method) is acknowledged with 202 whatever it holds', async () => {
    const resp = fc.record(
      { jsonrpc: fc.constant('2.0'), id: IDS, result: junkValue },
      { requiredKeys: ['jsonrpc'] },
    );
    const err = fc.record(
      { jsonrpc: fc.constant('2.0'), id: IDS, error: junkValue },
      { requiredKeys: ['jsonrpc', 'error'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(resp, err), async (m) => {
        const { r, v } = await post(JSON.stringify(m), GOOD_HEADERS, 'client response');
        if ('result' in m || 'error' in m)
          expect({ status: r.status, v }).toEqual({ status: 202, v: { kind: 'accepted' } });
      }),
      fcParams(100),
    );
    await stillServing(srv.url);
  });
});

describe('nested junk and huge values in every position', () => {
  const deep = (n: number, open: string, close: string, leaf = '1') =>
    open.repeat(n) + leaf + close.repeat(n);
  const DEPTHS = [10, 1000, 5000, 20_000, 200_000];

  it('deeply nested objects and arrays in params, _meta, arguments and id → a specific answer, never -32603', async () => {
    const positions = [
      (j: string) =>
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"request_permissions","arguments":{"tool_name":"exec_command","permission":"network","reason":"x","arguments":${j}}}}`,
      (j: string) =>
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.ts","junk":${j}}}}`,
      (j: string) =>
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":${j}}}`,
      (j: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${j}}}`,
      (j: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${j}}}`,
      (j: string) =>
        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"${V}":"${MODERN}","${C}":${j}}}}`,
      (j: string) => `{"jsonrpc":"2.0","id":${j},"method":"ping"}`,
      (j: string) => `{"jsonrpc":"2.0","id":1,"method":"ping","extra":${j}}`,
      (j: string) =>
        `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":${j},"clientInfo":${j}}}`,
      (j: string) => j,
    ];
    const arb = fc.tuple(
      fc.constantFrom(...positions),
      fc.constantFrom(...DEPTHS),
      fc.constantFrom(['{"a":', '}'], ['[', ']'], ['{"a":[', ']}']),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([place, depth, [open, close]]) => {
        const body = place(deep(depth, open as string, close as string));
        const modern = body.includes(V);
        const headers = modern
          ? { ...GOOD_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' }
          : GOOD_HEADERS;
        await post(body, headers, `depth ${depth} ${body.slice(0, 160)}`);
      }),
      fcParams(100),
    );
    await stillServing(srv.url);
  });

  it('regression: deeply nested tool arguments with the audit log on → a tool answer, recorded (was -32603)', async () => {
    // As deep as a body may nest (src/protocol/json-shape.ts): the envelope's three levels and 61 more.
    const j = deep(MAX_JSON_DEPTH - 3, '{"a":', '}');
    const r = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.ts","x":${j}}}}`,
      GOOD_HEADERS,
      'deep read_file',
    );
    expect(r.v).toEqual({ kind: 'tool', code: 'INVALID_ARGUMENT' });
    const audit = readFileSync(path.join(L.parent, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(audit[audit.length - 1] as string)).toMatchObject({
      tool: 'read_file',
      ok: false,
      error: 'INVALID_ARGUMENT',
    });
    const p = await post(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_permissions","arguments":{"tool_name":"exec_command","permission":"network","reason":"x","arguments":${j}}}}`,
      GOOD_HEADERS,
      'deep request_permissions',
    );
    expect(p.v).toEqual({ kind: 'tool', code: 'ELICITATION_UNSUPPORTED' });
  });

  it('deeper than MAX_JSON_DEPTH, or more than MAX_JSON_VALUES values → 400/-32600 naming the limit, unparsed', async () => {
    const call = (j: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.ts","x":${j}}}}`;
    const cases: Array<[string, string, RegExp]> = [
      ['one level too deep', call(deep(MAX_JSON_DEPTH - 2, '[', ']')), /more than 64 levels deep/],
      ['6000 levels', call(deep(6000, '{"a":', '}')), /more than 64 levels deep/],
      ['too many values', call(`[${'0,'.repeat(MAX_JSON_VALUES)}0]`), /more than 100000 JSON values/],
    ];
    for (const [label, body, message] of cases) {
      const { r, v } = await post(body, GOOD_HEADERS, label);
      expect({ status: r.status, v }, label).toEqual({ status: 400, v: { kind: 'rpc', code: -32600 } });
      expect(r.json.error.message, label).toMatch(message);
    }
    // Brackets and quotes inside strings do not count.
    const inString = call(JSON.stringify('[{'.repeat(10_000) + '\\"' + ']'.repeat(10)));
    const { v } = await post(inString, GOOD_HEADERS, 'brackets in a string');
    expect(v).toEqual({ kind: 'tool', code: 'INVALID_ARGUMENT' });
  });
});

describe('the handshake era after initialize, with session ids the server ignores (contract step 8)', () => {
  it('initialize with generated params, then calls with generated Mcp-Session-Id: answers never depend on it', async () => {
    const init = fc.record(
      {
        protocolVersion: fc.oneof(
          fc.constantFrom('2025-11-25', '2025-06-18', '2024-11-05', MODERN),
          hostileString,
          fc.integer(),
        ),
        capabilities: fc.oneof(junkObject, junkValue),
        clientInfo: fc.oneof(fc.record({ name: hostileString, version: hostileString }), junkValue),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(init, fc.string({ unit: 'grapheme-ascii', maxLength: 80 }), async (params, sid) => {
        const text = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params });
        const { r, v } = await post(text, { ...GOOD_HEADERS, 'mcp-session-id': sid }, 'initialize');
        // Several big generated strings can pass SERVICE_MAX_REQUEST_BYTES (4 MiB): the size decides first.
        if (Buffer.byteLength(text) > 4 * 1024 * 1024) {
          expect({ status: r.status, v }, r.text).toEqual({ status: 413, v: { kind: 'rpc', code: -32600 } });
          return;
        }
        expect(v.kind, r.text).toBe('ok');
        const pv = (params as any).protocolVersion;
        expect(r.json.result.protocolVersion).toBe(pv === '2025-06-18' ? '2025-06-18' : '2025-11-25');
        const l = await post(
          JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'tools/list' }),
          { ...GOOD_HEADERS, 'mcp-session-id': sid },
          'tools/list',
        );
        expect(l.v.kind).toBe('ok');
        expect(l.r.json.result.tools).toHaveLength(20);
      }),
      fcParams(100),
    );
    await stillServing(srv.url);
  });
});
