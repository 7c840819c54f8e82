// Real peers against the spawned bin: the official SDK clients, v1 `@modelcontextprotocol/sdk` (handshake era
// only) and v2 `@modelcontextprotocol/client` (pinned to 2026-07-28, and `auto`), over HTTP with a bearer
// token and over stdio. Checks docs/http.md#eras, docs/design-notes.md#command-line (stdio),
// docs/design-notes.md#output-schemas-accept-errors (output schemas accept the error shape; the v1 client
// validates structuredContent against outputSchema even on isError). See docs/oauth.md#tested-with.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { BIN, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

// A 1×1 PNG, so view_image has something real to show.
const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let ws: TempWorkspace;
let server: SpawnedServer;

beforeAll(async () => {
  ws = makeWorkspace({
    'README.md': '# demo\n',
    'AGENTS.md': 'Run the tests before you finish.\n',
    'src/app.ts': 'export function greet() {\n  return "needle in a haystack";\n}\n',
    'src/util/strings.ts': 'export const NEEDLE = "needle";\n',
    'img/dot.png': PNG_1x1,
  });
  server = await startServer({ workspace: ws.dir, env: { HOME: '/nonexistent-home' } });
});

afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

type AnyClient = {
  listTools(): Promise<{
    tools: Array<{ name: string; outputSchema?: unknown; annotations?: Record<string, unknown> }>;
  }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
};
type Result = {
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  structuredContent?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  isError?: boolean;
};

/** What every real client must be able to do with the workspace (list tools, read a file, search). */
async function exercise(client: AnyClient) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['server_info', 'read_file', 'list_dir', 'list_files', 'search_text'])
    expect(names).toContain(n);
  for (const t of tools) expect(t.outputSchema, t.name).toBeDefined();

  const read = (await client.callTool({ name: 'read_file', arguments: { path: 'src/app.ts' } })) as Result;
  expect(read.isError).toBe(false);
  expect(read.content[0]?.text).toContain('needle in a haystack');
  expect(read.structuredContent).toMatchObject({ ok: true, path: 'src/app.ts', total_lines: 3 });

  const search = (await client.callTool({ name: 'search_text', arguments: { query: 'needle' } })) as Result;
  expect(search.isError).toBe(false);
  expect(search.structuredContent?.matches.map((m: { path: string }) => m.path)).toEqual([
    'src/app.ts',
    'src/util/strings.ts',
  ]);

  const list = (await client.callTool({
    name: 'list_files',
    arguments: { patterns: ['**/*.ts'] },
  })) as Result;
  expect(list.structuredContent?.files.map((f: { path: string }) => f.path).sort()).toEqual([
    'src/app.ts',
    'src/util/strings.ts',
  ]);

  // A failing tool after tools/list: the client has the output schemas now and validates the error result.
  const missing = (await client.callTool({
    name: 'read_file',
    arguments: { path: 'no/such/file.ts' },
  })) as Result;
  expect(missing.isError).toBe(true);
  expect(missing.structuredContent).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  const escape = (await client.callTool({
    name: 'read_file',
    arguments: { path: '../../etc/passwd' },
  })) as Result;
  expect(escape.isError).toBe(true);
  expect(escape.structuredContent?.error.code).toBe('PATH_OUTSIDE_WORKSPACE');
  return names;
}

/**
 * docs/design-notes.md#output-schemas-accept-errors, for every tool in the catalog (it grows as tools land):
 * an INVALID_ARGUMENT result goes through the client's outputSchema validation without an exception; so do
 * the read-only tools' successes.
 */
async function everyOutputSchema(client: AnyClient) {
  const { tools } = await client.listTools();
  for (const t of tools) {
    const bad = (await client.callTool({ name: t.name, arguments: { __not_an_argument__: true } })) as Result;
    expect({ tool: t.name, isError: bad.isError, code: bad.structuredContent?.error?.code }).toEqual({
      tool: t.name,
      isError: true,
      code: 'INVALID_ARGUMENT',
    });
  }
  const successes: Record<string, Record<string, unknown>> = {
    server_info: {},
    read_file: { path: 'README.md' },
    list_dir: { path: '.', recursive: true, max_depth: 3 },
    list_files: {},
    search_text: { query: 'needle', context_lines: 1 },
    view_image: { path: 'img/dot.png' },
    // Not a repository: the git tools answer with a reason (docs/design-notes.md#lean-results: lean results,
    // optional fields).
    git_status: {},
    git_diff: {},
    git_log: {},
    git_show: {},
    git_blame: { path: 'README.md' },
    apply_patch: { patch: '*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch', dry_run: true },
  };
  for (const [name, args] of Object.entries(successes)) {
    if (!tools.some((t) => t.name === name)) continue;
    const ok = (await client.callTool({ name, arguments: args })) as Result;
    expect({ tool: name, isError: ok.isError }).toEqual({ tool: name, isError: false });
  }
}

/**
 * edit_file through a real client (README "Editing files"): create, edit, a near miss answered with the exact
 * retry (sent back verbatim), an ambiguous match, replace_all. The client validates each structuredContent
 * against edit_file's outputSchema (the v1 client errors included).
 */
async function editFile(client: AnyClient, tag: string) {
  const file = `edits/${tag}.txt`;
  const call = async (args: Record<string, unknown>) =>
    (await client.callTool({ name: 'edit_file', arguments: { path: file, ...args } })) as Result;
  const created = await call({ old_string: '', new_string: 'alpha\nbeta\n' });
  expect(created.structuredContent).toEqual({
    ok: true,
    affected_files: [{ path: file, operation: 'add' }],
    additions: 2,
  });
  expect(created.content).toEqual([{ type: 'text', text: `Created ${file} (+2).` }]);
  const edited = await call({ old_string: 'beta', new_string: 'BETA' });
  expect(edited.structuredContent).toEqual({
    ok: true,
    affected_files: [{ path: file, operation: 'update' }],
    additions: 1,
    removals: 1,
  });
  expect(edited.content[0]?.text).toBe(`Edited ${file} (+1 -1).`);
  const near = await call({ old_string: '    alpha', new_string: 'ALPHA' });
  expect(near.isError).toBe(true);
  expect(near.structuredContent?.error).toMatchObject({
    code: 'EDIT_NOT_FOUND',
    retryable: true,
    details: { near_miss: 'whitespace', line: 1 },
  });
  const next = near.structuredContent?.error.details.next_action;
  expect(next).toEqual({
    tool: 'edit_file',
    arguments: { path: file, old_string: 'alpha', new_string: 'ALPHA' },
  });
  expect(((await client.callTool({ name: next.tool, arguments: next.arguments })) as Result).isError).toBe(
    false,
  );
  const ambiguous = await call({ old_string: 'A', new_string: 'a' });
  expect(ambiguous.structuredContent?.error).toMatchObject({
    code: 'EDIT_AMBIGUOUS',
    details: { match_count: 3, match_lines: [1, 1, 2] },
  });
  const all = await call({ old_string: 'A', new_string: 'a', replace_all: true });
  expect(all.content[0]?.text).toBe(`Edited ${file}: 3 replacements (+2 -2).`);
  expect(readFileSync(path.join(ws.dir, file), 'utf8')).toBe('aLPHa\nBETa\n');
}

/** A fetch that records each POSTed JSON-RPC method and the era headers it carried. */
function recordingFetch(
  log: Array<{ method: string; httpMethod: string; version: string | null; status: number }>,
) {
  return async (url: string | URL, init?: RequestInit) => {
    const res = await fetch(url, init);
    let method = '';
    try {
      method = JSON.parse(String(init?.body ?? '{}')).method ?? '';
    } catch {
      method = '?';
    }
    const headers = new Headers(init?.headers);
    log.push({
      method,
      httpMethod: init?.method ?? 'GET',
      version: headers.get('mcp-protocol-version'),
      status: res.status,
    });
    return res;
  };
}

describe('v1 @modelcontextprotocol/sdk client over HTTP with a bearer token (handshake era)', () => {
  it('lists tools, reads a file, searches, and gets tool failures as results', async () => {
    const client = new ClientV1({ name: 'v1-http', version: '1.0.0' });
    const log: Parameters<typeof recordingFetch>[0] = [];
    const transport = new HttpV1(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${TEST_TOKEN}` } },
      fetch: recordingFetch(log),
    });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'workbench-mcp' });
      expect(client.getInstructions()).toContain('Run the tests before you finish.');
      await exercise(client as unknown as AnyClient);
      await everyOutputSchema(client as unknown as AnyClient);
      await editFile(client as unknown as AnyClient, 'v1-http');
      expect(transport.sessionId).toBeUndefined();
    } finally {
      await client.close();
    }
    expect(log[0]).toMatchObject({ method: 'initialize', status: 200 });
    expect(log.some((l) => l.method === 'notifications/initialized' && l.status === 202)).toBe(true);
    // It opens a GET stream after initialize and tolerates the 405 (docs/http.md#other-routes).
    expect(log.filter((l) => l.httpMethod === 'GET').every((l) => l.status === 405)).toBe(true);
    expect(
      log
        .filter((l) => l.httpMethod === 'POST' && l.method !== 'initialize')
        .every((l) => l.version === '2025-11-25'),
    ).toBe(true);
  });

  it('a wrong token is refused (the client reports 401)', async () => {
    const client = new ClientV1({ name: 'v1-bad', version: '1.0.0' });
    const transport = new HttpV1(new URL(server.url), {
      requestInit: { headers: { Authorization: 'Bearer wrong-token-0123456789' } },
    });
    await expect(client.connect(transport)).rejects.toThrow(/invalid_token|401|nauthorized/);
    await client.close().catch(() => undefined);
  });
});

describe('v2 @modelcontextprotocol/client over HTTP with a bearer token', () => {
  // | versionNegotiation.mode | expected era | first POST |
  const MODES: Array<[string, 'modern' | 'legacy', unknown, string]> = [
    ['pinned 2026-07-28', 'modern', { pin: '2026-07-28' }, 'server/discover'],
    ['auto', 'modern', 'auto', 'server/discover'],
    ['legacy (the default)', 'legacy', 'legacy', 'initialize'],
  ];
  it.each(MODES)(
    'mode %s → %s era; lists tools, reads, searches, tool failures as results',
    async (name, era, mode, first) => {
      const client = new ClientV2(
        { name: 'v2-http', version: '2.0.0' },
        { versionNegotiation: { mode: mode as 'auto' } },
      );
      const log: Parameters<typeof recordingFetch>[0] = [];
      const transport = new HttpV2(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${TEST_TOKEN}` } },
        fetch: recordingFetch(log),
      });
      await client.connect(transport);
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(client.getInstructions()).toContain('Run the tests before you finish.');
        if (era === 'modern') {
          expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
          expect(client.getDiscoverResult()?.supportedVersions).toEqual(
            expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18']),
          );
        }
        await exercise(client as unknown as AnyClient);
        await everyOutputSchema(client as unknown as AnyClient);
        await editFile(client as unknown as AnyClient, `v2-${String(name).replace(/\W+/g, '-')}`);
      } finally {
        await client.close();
      }
      expect(log[0]?.method).toBe(first);
      const posts = log.filter((l) => l.httpMethod === 'POST');
      if (era === 'modern') {
        expect(posts.map((p) => p.method)).not.toContain('initialize');
        expect(posts.every((p) => p.version === '2026-07-28' && p.status < 300)).toBe(true);
      }
    },
  );

  it('auth via authProvider.token() works the same as a static header', async () => {
    const client = new ClientV2(
      { name: 'v2-provider', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const transport = new HttpV2(new URL(server.url), {
      authProvider: { token: async () => TEST_TOKEN },
    } as ConstructorParameters<typeof HttpV2>[1]);
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

const stdioEnv = () => ({
  PATH: process.env.PATH ?? '',
  HOME: '/nonexistent-home',
  SERVICE_LOG_LEVEL: 'debug',
});

describe('stdio (docs/design-notes.md#command-line: --stdio)', () => {
  it('v1 client over stdio (handshake era): lists tools, reads, searches, tool failures as results', async () => {
    const transport = new StdioV1({
      command: process.execPath,
      args: [BIN, '--stdio', '--workspace', ws.dir],
      env: stdioEnv(),
      stderr: 'pipe',
    });
    const client = new ClientV1({ name: 'v1-stdio', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getInstructions()).toContain('Run the tests before you finish.');
      await exercise(client as unknown as AnyClient);
      await everyOutputSchema(client as unknown as AnyClient);
      const info = (await client.callTool({ name: 'server_info', arguments: {} })) as Result;
      expect(info.structuredContent?.auth_mode).toBe('stdio');
    } finally {
      await client.close();
    }
  });

  it.each([
    ['pinned 2026-07-28', 'modern', { pin: '2026-07-28' }],
    ['auto', 'modern', 'auto'],
  ] as const)(
    'v2 client over stdio, mode %s → %s era; lists tools, reads, searches',
    async (_name, era, mode) => {
      const transport = new StdioV2({
        command: process.execPath,
        args: [BIN, '--stdio', '--workspace', ws.dir],
        env: stdioEnv(),
        stderr: 'pipe',
      });
      const client = new ClientV2(
        { name: 'v2-stdio', version: '2.0.0' },
        { versionNegotiation: { mode: mode as 'auto' } },
      );
      await client.connect(transport);
      try {
        expect(client.getProtocolEra()).toBe(era);
        await exercise(client as unknown as AnyClient);
      } finally {
        await client.close();
      }
    },
  );

  it('raw: bad JSON → -32700, batch → -32600, notifications get no line, stdout is JSON lines only, logs on stderr, EOF answers what is in flight and exits 0', async () => {
    const proc = spawn(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
      env: stdioEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    const lines = [
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      'this is not json',
      '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
      '{"jsonrpc":"2.0","id":3,"method":"ping"}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}',
      '',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'read_file', arguments: { path: 'README.md' } },
      }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 6,
        method: 'no/such',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      '{"jsonrpc":"2.0","id":7,"method":"no/such"}',
    ];
    // EOF right behind the requests: what is in flight is still answered before the clean exit.
    proc.stdin.end(lines.join('\n') + '\n');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(timer);
    expect(code).toBe(0);

    const msgs = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; result?: any; error?: { code: number; message: string } }); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(msgs).toHaveLength(8);
    const byId = (id: unknown) => msgs.filter((m) => m.id === id);
    const nullIds = byId(null)
      .map((m) => m.error?.code)
      .sort();
    expect(nullIds).toEqual([-32700, -32600].sort());
    // Errors speak of what a stdio client sends: lines, not bodies or POSTs.
    const nullMessages = byId(null).map((m) => m.error?.message ?? '');
    expect(nullMessages.join('\n')).toMatch(/the line is not valid JSON/);
    expect(nullMessages.join('\n')).toMatch(/one message per line/);
    expect(nullMessages.join('\n')).not.toMatch(/POST|body/);
    expect(byId(1)[0]?.result.protocolVersion).toBe('2025-11-25');
    expect(byId(3)[0]?.result).toEqual({});
    expect(byId(4)[0]?.result.content[0].text).toContain('# demo');
    expect(byId(5)[0]?.result).toMatchObject({
      resultType: 'complete',
      ttlMs: 300_000,
      cacheScope: 'private',
    });
    expect(byId(6)[0]?.error?.code).toBe(-32601);
    expect(byId(7)[0]?.error?.code).toBe(-32601);
    expect(err).toMatch(/workbench-mcp: serving .* on stdio/);
    expect(out).not.toMatch(/workbench-mcp (debug|info|warn|error):/);
  });

  it('the client closes its end of stdout → clean shutdown: exit 0 and the runtime directory removed (no EPIPE crash)', async () => {
    const rt = mkdtempSync(path.join(tmpdir(), 'wb-rt-'));
    try {
      const proc = spawn(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
        env: { ...stdioEnv(), SERVICE_RUNTIME_ROOT: rt },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let err = '';
      proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
      proc.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
      await new Promise((r) => proc.stdout.once('data', r));
      const pidDirs = () =>
        readdirSync(rt, { recursive: true })
          .map(String)
          .filter((p) => p.split(path.sep).length === 3);
      expect(pidDirs()).toHaveLength(1);
      proc.stdout.destroy();
      // The server ends once an answer finds its stdout closed (what this test wants); a request written after
      // that fails with EPIPE on this side, which is no finding.
      proc.stdin.on('error', () => {});
      for (let i = 0; i < 3 && proc.exitCode === null; i++) {
        proc.stdin.write('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
        await new Promise((r) => setTimeout(r, 50));
      }
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
      expect(await exited, err).toBe(0);
      clearTimeout(timer);
      expect(err).not.toMatch(/EPIPE.*\n\s+at /s);
      expect(pidDirs()).toEqual([]);
    } finally {
      rmSync(rt, { recursive: true, force: true });
    }
  });

  it('a line over SERVICE_MAX_REQUEST_BYTES → -32600 whether it arrives whole or in pieces; the next line is served', async () => {
    const proc = spawn(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
      env: { ...stdioEnv(), SERVICE_MAX_REQUEST_BYTES: '2048' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    const big = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', params: { pad: 'x'.repeat(3000) } });
    const bigUtf8 = JSON.stringify({
      jsonrpc: '2.0',
      id: 10,
      method: 'ping',
      params: { pad: 'é'.repeat(1100) },
    }); // < 2048 chars, > 2048 bytes
    proc.stdin.write(big + '\n' + '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'); // whole, in one write
    await new Promise((r) => setTimeout(r, 200));
    proc.stdin.write(big.slice(0, 1500));
    await new Promise((r) => setTimeout(r, 100));
    proc.stdin.write(big.slice(1500) + '\n');
    await new Promise((r) => setTimeout(r, 100));
    proc.stdin.write(bigUtf8 + '\n');
    proc.stdin.end('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
    const msgs = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number } });
    expect(msgs.filter((m) => m.error?.code === -32600)).toHaveLength(3);
    expect(msgs.filter((m) => m.id === 9 || m.id === 10)).toEqual([]);
    expect(msgs.filter((m) => m.id === 1 || m.id === 2).map((m) => m.result)).toEqual([{}, {}]);
  });

  it('stdin EOF with nothing sent → clean exit 0', async () => {
    const proc = spawn(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
      env: stdioEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.stdin.end();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
    expect(out).toBe('');
  });
});
