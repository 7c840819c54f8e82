// Both protocol eras from one stateless dispatcher, over real HTTP (startInProcess) and the spawned bin for
// start-up refusals. Checks docs/http.md#eras and #order-of-checks, docs/design-notes.md#statuses,
// #stateless-era-order, #cache-hints, #output-schemas-accept-errors, #server-card and #fake-read-only-annotations.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog, ALL_TOOLS, erase } from '../../src/tools/registry.js';
import { defineTool } from '../../src/tools/define.js';
import { BIN, REPO_ROOT, startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { bearer, type Era, META, raw, request, send, type RawReply } from '../helpers/raw-http.js';

const PKG_VERSION = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const MODERN_FIELDS = ['resultType', '_meta', 'ttlMs', 'cacheScope', 'supportedVersions'];
const ERAS: Era[] = ['handshake', 'modern'];

let ws: TempWorkspace;
let s: InProcessServer;

beforeAll(async () => {
  ws = makeWorkspace({
    'AGENTS.md': 'Always run the linter before committing.\n',
    'src/main.ts': 'export const answer = 42;\n',
  });
  s = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await s?.close();
  ws?.cleanup();
});

const call = (
  era: Era,
  method: string,
  params: Record<string, unknown> = {},
  extra: Record<string, string | string[] | undefined> = {},
) => send(s.url, request(era, method, params), { ...bearer(), ...extra });
const INIT = (protocolVersion?: string) => ({
  ...(protocolVersion ? { protocolVersion } : {}),
  capabilities: {},
  clientInfo: { name: 'eras-test', version: '1.0.0' },
});

function result(r: RawReply) {
  expect(r.status, r.text).toBe(200);
  expect(r.json.error, r.text).toBeUndefined();
  return r.json.result;
}
function rpcError(r: RawReply, status: number, code: number) {
  expect({ status: r.status, code: r.json?.error?.code }, r.text).toEqual({ status, code });
  return r.json.error;
}

describe('handshake era (docs/http.md#eras)', () => {
  it('initialize is optional: tools/list and tools/call work on a fresh server without it', async () => {
    const fresh = await startInProcess({ workspace: ws.dir });
    try {
      const list = result(await send(fresh.url, request('handshake', 'tools/list'), bearer()));
      expect(list.tools.length).toBeGreaterThan(0);
      const r = result(
        await send(
          fresh.url,
          request('handshake', 'tools/call', { name: 'read_file', arguments: { path: 'src/main.ts' } }),
          bearer(),
        ),
      );
      expect(r.isError).toBe(false);
      expect(r.content[0].text).toContain('answer = 42');
    } finally {
      await fresh.close();
    }
  });

  it('initialize is idempotent: the same request twice gets the same answer', async () => {
    const a = result(await call('handshake', 'initialize', INIT('2025-11-25')));
    const b = result(await call('handshake', 'initialize', INIT('2025-11-25')));
    expect(b).toEqual(a);
    expect(a.capabilities).toEqual({ tools: { listChanged: false } });
    expect(a.serverInfo).toMatchObject({ name: 'workbench-mcp', version: PKG_VERSION });
  });

  // | requested protocolVersion | answered |
  const NEGOTIATION: Array<[string | undefined, string]> = [
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-11-25'],
    ['2024-11-05', '2025-11-25'],
    ['2026-07-28', '2025-11-25'],
    ['9999-01-01', '2025-11-25'],
    [undefined, '2025-11-25'],
  ];
  it.each(NEGOTIATION)('initialize requesting %s answers %s', async (requested, answered) => {
    const r = result(await call('handshake', 'initialize', INIT(requested)));
    expect(r.protocolVersion).toBe(answered);
  });

  it('instructions come from AGENTS.md and CLAUDE.md and are re-read after they change on disk', async () => {
    const init = async () =>
      result(await call('handshake', 'initialize', INIT('2025-11-25'))).instructions as string;
    const discover = async () => result(await call('modern', 'server/discover')).instructions as string;
    expect(await init()).toContain('Always run the linter before committing.');
    expect(await discover()).toContain('Always run the linter before committing.');

    writeFileSync(path.join(ws.dir, 'AGENTS.md'), 'Use tabs. Never spaces.\n');
    for (const text of [await init(), await discover()]) {
      expect(text).toContain('Use tabs. Never spaces.');
      expect(text).not.toContain('Always run the linter');
    }
    writeFileSync(path.join(ws.dir, 'CLAUDE.md'), 'Prefer small commits.\n');
    for (const text of [await init(), await discover()]) {
      expect(text).toContain('Use tabs. Never spaces.');
      expect(text).toContain('Prefer small commits.');
    }
    rmSync(path.join(ws.dir, 'AGENTS.md'));
    rmSync(path.join(ws.dir, 'CLAUDE.md'));
    for (const text of [await init(), await discover()]) {
      expect(text ?? '').not.toContain('Use tabs');
      expect(text ?? '').not.toContain('Prefer small commits');
    }
    writeFileSync(path.join(ws.dir, 'AGENTS.md'), 'Always run the linter before committing.\n');
  });

  it('ping answers an empty result', async () => {
    expect(result(await call('handshake', 'ping'))).toEqual({});
  });

  it('tools/list and tools/call', async () => {
    const list = result(await call('handshake', 'tools/list'));
    expect(list.tools.map((t: { name: string }) => t.name)).toContain('read_file');
    const r = result(
      await call('handshake', 'tools/call', { name: 'search_text', arguments: { query: 'answer' } }),
    );
    expect(r.isError).toBe(false);
    expect(r.structuredContent.ok).toBe(true);
    expect(r.structuredContent.matches[0]).toMatchObject({ path: 'src/main.ts', line: 1 });
  });

  it('an unknown method → HTTP 200 with -32601 (docs/design-notes.md#statuses)', async () => {
    rpcError(await call('handshake', 'no/such'), 200, -32601);
    rpcError(await call('handshake', 'server/discover'), 200, -32601);
    rpcError(await call('handshake', 'logging/setLevel', { level: 'info' }), 200, -32601);
  });

  // | MCP-Protocol-Version header on a body without _meta | method | status | code |
  // A 2026-07-28 header there (docs/design-notes.md#stateless-era-order, conformance server-stateless): a method that does not exist in
  // that era → 404/-32601; any other request is missing its _meta → 400/-32602.
  const HEADER_TABLE: Array<[string, string, number, number | null]> = [
    ...['tools/list', 'ping', 'initialize'].flatMap((m): Array<[string, string, number, number | null]> => [
      ['2025-11-25', m, 200, null],
      ['2025-06-18', m, 200, null],
      ['2024-11-05', m, 400, -32600],
      ['banana', m, 400, -32600],
    ]),
    ['2026-07-28', 'tools/list', 400, -32602],
    ['2026-07-28', 'server/discover', 400, -32602],
    ['2026-07-28', 'ping', 404, -32601],
    ['2026-07-28', 'initialize', 404, -32601],
  ];
  it.each(HEADER_TABLE)('MCP-Protocol-Version: %s, %s → %i %s', async (version, method, status, code) => {
    const r = await call('handshake', method, method === 'initialize' ? INIT('2025-11-25') : {}, {
      'mcp-protocol-version': version,
    });
    expect({ status: r.status, code: r.json?.error?.code ?? null }).toEqual({ status, code });
  });

  it('responses to handshake clients carry none of the modern fields', async () => {
    const results = [
      result(await call('handshake', 'initialize', INIT('2025-11-25'))),
      result(await call('handshake', 'ping')),
      result(await call('handshake', 'tools/list')),
      result(
        await call('handshake', 'tools/call', { name: 'read_file', arguments: { path: 'src/main.ts' } }),
      ),
      result(await call('handshake', 'tools/call', { name: 'read_file', arguments: { path: 'missing.ts' } })),
    ];
    for (const r of results) for (const f of MODERN_FIELDS) expect(Object.keys(r)).not.toContain(f);
  });
});

describe('modern era 2026-07-28 (docs/http.md#eras, docs/design-notes.md#statuses)', () => {
  it('server/discover: supportedVersions, capabilities, instructions, ttlMs, cacheScope, resultType, serverInfo in _meta', async () => {
    const r = result(await call('modern', 'server/discover'));
    expect(r.supportedVersions).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18']));
    expect(r.capabilities).toEqual({ tools: { listChanged: false } });
    expect(r.instructions).toContain('Always run the linter');
    expect(r.ttlMs).toBe(60_000);
    expect(r.cacheScope).toBe('private');
    expect(r.resultType).toBe('complete');
    expect(r._meta[SERVER_INFO_KEY]).toMatchObject({ name: 'workbench-mcp', version: PKG_VERSION });
    expect(r).not.toHaveProperty('protocolVersion');
  });

  it('tools/list: the same tools as the handshake era, plus ttlMs 300000, cacheScope private, resultType, serverInfo', async () => {
    const r = result(await call('modern', 'tools/list'));
    expect(r.ttlMs).toBe(300_000);
    expect(r.cacheScope).toBe('private');
    expect(r.resultType).toBe('complete');
    expect(r._meta[SERVER_INFO_KEY]).toMatchObject({ name: 'workbench-mcp', version: PKG_VERSION });
    expect(r.tools).toEqual(result(await call('handshake', 'tools/list')).tools);
  });

  it('tools/call: resultType complete and serverInfo in _meta, success and tool failure alike', async () => {
    const ok = result(
      await call('modern', 'tools/call', { name: 'read_file', arguments: { path: 'src/main.ts' } }),
    );
    expect(ok).toMatchObject({ isError: false, resultType: 'complete' });
    expect(ok._meta[SERVER_INFO_KEY].name).toBe('workbench-mcp');
    expect(ok.content[0].text).toContain('answer = 42');
    const bad = result(
      await call('modern', 'tools/call', { name: 'read_file', arguments: { path: 'missing.ts' } }),
    );
    expect(bad).toMatchObject({
      isError: true,
      resultType: 'complete',
      structuredContent: { ok: false, error: { code: 'NOT_FOUND' } },
    });
  });

  // | _meta | status | code |
  const ENVELOPE: Array<[string, Record<string, unknown>, number, number]> = [
    [
      'version is a number',
      {
        'io.modelcontextprotocol/protocolVersion': 20260728,
        'io.modelcontextprotocol/clientCapabilities': {},
      },
      400,
      -32602,
    ],
    [
      'version is null',
      { 'io.modelcontextprotocol/protocolVersion': null, 'io.modelcontextprotocol/clientCapabilities': {} },
      400,
      -32602,
    ],
    ['clientCapabilities missing', { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }, 400, -32602],
    [
      'clientCapabilities an array',
      {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': [],
      },
      400,
      -32602,
    ],
    [
      'clientCapabilities a string',
      {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': 'all',
      },
      400,
      -32602,
    ],
    [
      'clientCapabilities null',
      {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': null,
      },
      400,
      -32602,
    ],
  ];
  it.each(ENVELOPE)('_meta %s → %i %i', async (_why, meta, status, code) => {
    const r = await raw(s.url, {
      headers: {
        'content-type': 'application/json',
        ...bearer(),
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: meta } }),
    });
    rpcError(r, status, code);
    expect(r.json.id).toBe(3);
  });

  it('header 2026-07-28 contradicting an unsupported _meta version v999.0.0 → 400 -32020 (docs/design-notes.md#stateless-era-order)', async () => {
    const r = await raw(s.url, {
      headers: {
        'content-type': 'application/json',
        ...bearer(),
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/list',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
      }),
    });
    rpcError(r, 400, -32020);
  });

  it.each(['2099-01-01', '2025-11-25', '2025-06-18', ''])(
    'unsupported _meta version %j → 400 -32022 with data {supported, requested}',
    async (v) => {
      const r = await raw(s.url, {
        headers: {
          'content-type': 'application/json',
          ...bearer(),
          ...(v ? { 'mcp-protocol-version': v } : {}),
          'mcp-method': 'tools/list',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/list',
          params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': v } },
        }),
      });
      const e = rpcError(r, 400, -32022);
      expect(e.data.requested).toBe(v);
      expect(e.data.supported).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18']));
    },
  );

  // | header problem | method | status | code |
  const b64 = (t: string) => `=?base64?${Buffer.from(t, 'utf8').toString('base64')}?=`;
  const MIRROR: Array<
    [
      string,
      string,
      Record<string, unknown>,
      Record<string, string | string[] | undefined>,
      number,
      number | null,
    ]
  > = [
    ['MCP-Protocol-Version missing', 'tools/list', {}, { 'mcp-protocol-version': undefined }, 400, -32020],
    [
      'MCP-Protocol-Version mismatched',
      'tools/list',
      {},
      { 'mcp-protocol-version': '2025-11-25' },
      400,
      -32020,
    ],
    [
      'MCP-Protocol-Version duplicated',
      'server/discover',
      {},
      { 'mcp-protocol-version': ['2026-07-28', '2026-07-28'] },
      400,
      -32020,
    ],
    ['Mcp-Method missing', 'server/discover', {}, { 'mcp-method': undefined }, 400, -32020],
    ['Mcp-Method mismatched', 'tools/list', {}, { 'mcp-method': 'server/discover' }, 400, -32020],
    ['Mcp-Method duplicated', 'tools/list', {}, { 'mcp-method': ['tools/list', 'tools/list'] }, 400, -32020],
    [
      'Mcp-Name missing',
      'tools/call',
      { name: 'read_file', arguments: { path: 'src/main.ts' } },
      { 'mcp-name': undefined },
      400,
      -32020,
    ],
    [
      'Mcp-Name mismatched',
      'tools/call',
      { name: 'read_file', arguments: { path: 'src/main.ts' } },
      { 'mcp-name': 'search_text' },
      400,
      -32020,
    ],
    [
      'Mcp-Name duplicated',
      'tools/call',
      { name: 'read_file', arguments: { path: 'src/main.ts' } },
      { 'mcp-name': ['read_file', 'read_file'] },
      400,
      -32020,
    ],
    [
      'Mcp-Name base64 of the same ASCII name',
      'tools/call',
      { name: 'read_file', arguments: { path: 'src/main.ts' } },
      { 'mcp-name': b64('read_file') },
      200,
      null,
    ],
    [
      'Mcp-Name base64 of a non-ASCII name, matching (then: unknown tool)',
      'tools/call',
      { name: 'outil_été', arguments: {} },
      { 'mcp-name': b64('outil_été') },
      200,
      -32602,
    ],
    [
      'Mcp-Name base64 of a non-ASCII name, mismatched',
      'tools/call',
      { name: 'outil_été', arguments: {} },
      { 'mcp-name': b64('outil_ete') },
      400,
      -32020,
    ],
    [
      'Mcp-Name base64 malformed',
      'tools/call',
      { name: 'read_file', arguments: {} },
      { 'mcp-name': '=?base64?!!!?=' },
      400,
      -32020,
    ],
  ];
  it.each(MIRROR)('%s (%s) → %i %s', async (_why, method, params, extra, status, code) => {
    const r = await call('modern', method, params, extra);
    expect({ status: r.status, code: r.json?.error?.code ?? null }, r.text).toEqual({ status, code });
  });

  // | method | extra headers | status | code | (docs/design-notes.md#statuses: mirror headers first, then -32601)
  const METHODS: Array<
    [string, Record<string, unknown>, Record<string, string | undefined>, number, number | null]
  > = [
    ['no/such', {}, {}, 404, -32601],
    ['ping', {}, {}, 404, -32601],
    ['logging/setLevel', { level: 'info' }, {}, 404, -32601],
    ['resources/read', { uri: 'file:///etc/passwd' }, { 'mcp-name': undefined }, 400, -32020],
    ['resources/read', { uri: 'file:///etc/passwd' }, {}, 404, -32601],
    ['prompts/get', { name: 'review' }, { 'mcp-name': undefined }, 400, -32020],
    ['prompts/get', { name: 'review' }, { 'mcp-name': 'other' }, 400, -32020],
    ['prompts/get', { name: 'review' }, {}, 404, -32601],
    ['resources/list', {}, {}, 404, -32601],
    ['prompts/list', {}, {}, 404, -32601],
  ];
  it.each(METHODS)('%s %j %j → %i %s', async (method, params, extra, status, code) => {
    const r = await call('modern', method, params, extra);
    expect({ status: r.status, code: r.json?.error?.code ?? null }, r.text).toEqual({ status, code });
  });

  it('initialize with _meta is the handshake era (no modern fields); with a 2026-07-28 header it does not exist (404/-32601, docs/design-notes.md#stateless-era-order)', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 9,
      method: 'initialize',
      params: { ...INIT('2025-06-18'), _meta: META },
    };
    const plain = await raw(s.url, {
      headers: { 'content-type': 'application/json', ...bearer() },
      body: JSON.stringify(body),
    });
    const r = result(plain);
    expect(r.protocolVersion).toBe('2025-06-18');
    for (const f of MODERN_FIELDS) expect(Object.keys(r)).not.toContain(f);
    const withHeaders = await raw(s.url, {
      headers: {
        'content-type': 'application/json',
        ...bearer(),
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'initialize',
      },
      body: JSON.stringify(body),
    });
    rpcError(withHeaders, 404, -32601);
  });
});

describe('both eras: unknown tool and invalid arguments (docs/design-notes.md#statuses)', () => {
  it.each(ERAS)('%s: unknown tool → -32602 with HTTP 200', async (era) => {
    const e = rpcError(await call(era, 'tools/call', { name: 'no_such_tool', arguments: {} }), 200, -32602);
    expect(e.message).toContain('no_such_tool');
  });

  // | arguments | why |
  const INVALID: Array<[string, unknown]> = [
    ['wrong type', { path: 5 }],
    ['unknown property', { path: 'src/main.ts', colour: 'red' }],
    ['missing required', {}],
    ['out of range', { path: 'src/main.ts', max_lines: 0 }],
    ['not an object', ['src/main.ts']],
  ];
  for (const era of ERAS) {
    it.each(INVALID)(
      `${era}: read_file with %s arguments → isError result INVALID_ARGUMENT, HTTP 200`,
      async (_why, args) => {
        const r = result(await call(era, 'tools/call', { name: 'read_file', arguments: args }));
        expect(r.isError).toBe(true);
        expect(r.structuredContent).toMatchObject({
          ok: false,
          error: { code: 'INVALID_ARGUMENT', category: 'validation', retryable: false },
        });
        expect(r.content[0].text).toMatch(/^INVALID_ARGUMENT: /);
      },
    );
  }
});

describe('--dangerously-fake-readonly-annotations (docs/design-notes.md#fake-read-only-annotations)', () => {
  let fake: InProcessServer;
  beforeAll(async () => {
    fake = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_DANGEROUSLY_FAKE_READONLY_ANNOTATIONS: '1' },
    });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('tools/list reports every tool read-only and non-destructive in both eras', async () => {
    for (const era of ERAS) {
      const r = result(await send(fake.url, request(era, 'tools/list'), bearer()));
      for (const t of r.tools)
        expect({ name: t.name, ro: t.annotations.readOnlyHint, d: t.annotations.destructiveHint }).toEqual({
          name: t.name,
          ro: true,
          d: false,
        });
    }
  });

  it('the server card and server_info tell the truth (annotationOverride "fake_readonly")', async () => {
    const truth = result(await call('handshake', 'tools/list')).tools as Array<{
      name: string;
      annotations: { readOnlyHint: boolean };
    }>;
    const realRo = truth.filter((t) => t.annotations.readOnlyHint).map((t) => t.name);
    const realRw = truth.filter((t) => !t.annotations.readOnlyHint).map((t) => t.name);
    for (const p of ['/.well-known/mcp.json', '/.well-known/mcp/server-card.json']) {
      const card = await raw(fake.url, { method: 'GET', path: p });
      expect(card.status).toBe(200);
      expect(card.json.tools).toMatchObject({
        annotationOverride: 'fake_readonly',
        readOnlyHintTrue: realRo,
        readOnlyHintFalse: realRw,
        count: truth.length,
      });
      const normal = await raw(s.url, { method: 'GET', path: p });
      expect(normal.json.tools.annotationOverride).toBeNull();
    }
    const info = result(
      await send(fake.url, request('modern', 'tools/call', { name: 'server_info', arguments: {} }), bearer()),
    );
    expect(info.structuredContent.annotation_override).toBe('fake_readonly');
    expect(info.content[0].text).toMatch(/read-only/);
    const normalInfo = result(await call('modern', 'tools/call', { name: 'server_info', arguments: {} }));
    expect(normalInfo.structuredContent.annotation_override).toBeNull();
  });

  it('a mutating tool is reported read-only by tools/list while the real annotations keep the truth', () => {
    const writer = erase(
      defineTool({
        name: 'apply_patch',
        title: 'Apply patch',
        description: 'stand-in writer',
        uses: [],
        input: z.object({ patch: z.string() }),
        output: z.object({ applied: z.boolean() }),
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
        handler: () => ({ structured: { applied: true }, text: 'ok' }),
      }),
    );
    const tools = [...ALL_TOOLS, writer];
    const faked = buildCatalog({ enableViewImage: true, fakeReadonly: true }, tools);
    const honest = buildCatalog({ enableViewImage: true, fakeReadonly: false }, tools);
    const entry = (c: typeof faked) =>
      c.listPayload.find((t) => t.name === 'apply_patch') as { annotations: Record<string, unknown> };
    expect(entry(faked).annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    // Every hint stated, false ones included (docs/tools.md#annotations).
    expect(entry(honest).annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: false,
    });
    expect(faked.realAnnotations.get('apply_patch')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it('refused at start with noauth over HTTP (exit 2, one line naming the problem), by flag and by variable', () => {
    const env = { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', SERVICE_AUTH_MODE: 'noauth' };
    for (const [args, extraEnv] of [
      [['--dangerously-fake-readonly-annotations'], {}],
      [[], { SERVICE_DANGEROUSLY_FAKE_READONLY_ANNOTATIONS: '1' }],
      [['--auth-mode', 'noauth', '--dangerously-fake-readonly-annotations'], { SERVICE_AUTH_MODE: 'bearer' }],
    ] as Array<[string[], Record<string, string>]>) {
      const r = spawnSync(process.execPath, [BIN, '--workspace', ws.dir, '--port', '0', ...args], {
        env: { ...env, ...extraEnv },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/dangerously-fake-readonly-annotations/);
      expect(r.stdout).toBe('');
    }
  });
});
