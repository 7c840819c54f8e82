// MCP Apps only where declared (docs/review-card.md#who-sees-it), against the spawned bin over real HTTP and
// stdio, raw and with the official SDK clients. A client that declares `io.modelcontextprotocol/ui` with
// `text/html;profile=mcp-app` — at initialize (kept for its session) or, in 2026-07-28, on the request — sees
// the extension in the server's capabilities, `_meta.ui.resourceUri` on the tools with a card, the card through
// resources/list and resources/read, and the edit's patch in apply_patch's and edit_file's `_meta`. Any other
// client sees tools/list byte for byte as before MCP Apps (test/golden/catalog-before-apps.json, captured from
// the build before them; a show_changes entry aside), no resources methods and no `_meta` on results.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { BIN, REPO_ROOT, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { MODERN, post } from '../helpers/rpc.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const CARD = 'ui://workbench/changes.html';
const DIFF = 'io.github.workbench-mcp/diff';
const DECLARED = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const BEFORE = readFileSync(path.join(REPO_ROOT, 'test/golden/catalog-before-apps.json'), 'utf8').trim();

let ws: TempWorkspace;
let srv: SpawnedServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' });
  srv = await startServer({ workspace: ws.dir });
});

afterAll(async () => {
  await srv?.stop();
  ws?.cleanup();
});

const rpc = (method: string, params: Record<string, unknown> = {}, id = 1) =>
  post(srv.url, { jsonrpc: '2.0', id, method, params });

function modern(method: string, caps: Record<string, unknown>, params: Record<string, unknown> = {}) {
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN, 'mcp-method': method };
  const name = method === 'tools/call' ? params.name : method === 'resources/read' ? params.uri : undefined;
  if (typeof name === 'string') headers['mcp-name'] = name;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': caps,
  };
  return post(srv.url, { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }, headers);
}

const initialize = (capabilities: Record<string, unknown>) =>
  rpc('initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 't', version: '1' } });

/** The `tools` array as the server wrote it, with show_changes (added beside MCP Apps) left out. */
function toolsText(body: string): string {
  const tools = JSON.parse(body).result.tools as Array<{ name: string }>;
  return JSON.stringify(tools.filter((t) => t.name !== 'show_changes'));
}

const editCall = { name: 'edit_file', arguments: { path: 'a.txt', old_string: 'two', new_string: 'TWO' } };

describe('a client without the extension sees no trace of MCP Apps', () => {
  it('handshake era: capabilities, tools/list byte for byte, no resources methods, no _meta on results', async () => {
    const init = await initialize({});
    expect(init.json.result.capabilities).toEqual({ tools: { listChanged: false } });
    const list = await rpc('tools/list');
    expect(toolsText(list.text)).toBe(BEFORE);
    expect(list.text).not.toContain('ui://');
    for (const [method, params] of [
      ['resources/list', {}],
      ['resources/read', { uri: CARD }],
    ] as const) {
      const r = await rpc(method, params);
      expect(r.status).toBe(200);
      expect(r.json.error).toEqual({ code: -32601, message: `Method not found: ${method}` });
    }
    const call = await rpc('tools/call', editCall);
    expect(call.json.result.isError).toBe(false);
    expect(call.json.result._meta).toBeUndefined();
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
  });

  it('2026-07-28: discover and tools/list as before; resources/read is 404 Method not found', async () => {
    const d = await modern('server/discover', {});
    expect(d.json.result.capabilities).toEqual({ tools: { listChanged: false } });
    const list = await modern('tools/list', {});
    expect(toolsText(list.text)).toBe(BEFORE);
    const r = await modern('resources/read', {}, { uri: CARD });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe(-32601);
    // A declaration without the MCP App MIME type is no declaration.
    const other = await modern('tools/list', { extensions: { [UI]: { mimeTypes: ['text/html'] } } });
    expect(toolsText(other.text)).toBe(BEFORE);
  });
});

describe('a client that declares the extension sees the card', () => {
  function checkList(body: string): void {
    const tools = JSON.parse(body).result.tools as Any[];
    const before = new Map((JSON.parse(BEFORE) as Any[]).map((t) => [t.name, t]));
    for (const t of tools) {
      if (['apply_patch', 'edit_file', 'show_changes'].includes(t.name)) {
        expect(t._meta, t.name).toEqual({ ui: { resourceUri: CARD } });
        const { _meta, ...rest } = t;
        void _meta;
        if (before.has(t.name)) expect(rest).toEqual(before.get(t.name));
      } else if (before.has(t.name)) expect(JSON.stringify(t)).toBe(JSON.stringify(before.get(t.name)));
      else expect(t._meta?.ui?.visibility, t.name).toEqual(['app']);
    }
  }

  it('handshake era: declared at initialize, kept for the client until it initializes without it', async () => {
    const init = await initialize(DECLARED);
    expect(init.json.result.capabilities).toEqual({
      tools: { listChanged: false },
      resources: { listChanged: false },
      extensions: { [UI]: { mimeTypes: [MIME] } },
    });
    checkList((await rpc('tools/list')).text);
    const listed = await rpc('resources/list');
    expect(listed.json.result.resources).toEqual([expect.objectContaining({ uri: CARD, mimeType: MIME })]);
    const read = await rpc('resources/read', { uri: CARD });
    const [page] = read.json.result.contents;
    expect(page).toMatchObject({ uri: CARD, mimeType: MIME });
    expect(page._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [] });
    expect(page.text).toBe(readFileSync(path.join(REPO_ROOT, 'dist/apps/card/changes.html'), 'utf8'));
    expect(page.text).toMatch(
      /http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/,
    );
    const missing = await rpc('resources/read', { uri: 'ui://workbench/other.html' });
    expect(missing.json.error).toMatchObject({ code: -32002, data: { uri: 'ui://workbench/other.html' } });
    expect(missing.json.error.message).toContain('resources/list');

    const call = await rpc('tools/call', {
      name: 'edit_file',
      arguments: { path: 'a.txt', old_string: 'TWO', new_string: 'deux' },
    });
    expect(call.json.result._meta[DIFF]).toEqual({
      files: [
        {
          path: 'a.txt',
          status: 'modified',
          added: 1,
          removed: 1,
          hunks: '@@ -1,3 +1,3 @@\n one\n-TWO\n+deux\n three\n',
        },
      ],
    });
    // The model's part of the result is what any client gets.
    expect(call.json.result.structuredContent).toEqual({
      ok: true,
      affected_files: [{ path: 'a.txt', operation: 'update' }],
      additions: 1,
      removals: 1,
    });

    await initialize({});
    expect(toolsText((await rpc('tools/list')).text)).toBe(BEFORE);
    expect((await rpc('resources/list')).json.error.code).toBe(-32601);
  });

  it('2026-07-28: declared on the request; the result keeps the server info beside the patch', async () => {
    const d = await modern('server/discover', DECLARED);
    expect(d.json.result.capabilities.extensions).toEqual({ [UI]: { mimeTypes: [MIME] } });
    checkList((await modern('tools/list', DECLARED)).text);
    const read = await modern('resources/read', DECLARED, { uri: CARD });
    expect(read.status).toBe(200);
    expect(read.json.result.contents[0].mimeType).toBe(MIME);
    const patch = [
      '*** Begin Patch',
      '*** Update File: b.txt',
      '*** Move to: c.txt',
      '@@',
      '-b',
      '+c',
      '*** Add File: new.txt',
      '+fresh',
      '*** End Patch',
    ].join('\n');
    const call = await modern('tools/call', DECLARED, { name: 'apply_patch', arguments: { patch } });
    const meta = call.json.result._meta;
    expect(meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'workbench-mcp' });
    expect(meta[DIFF].files).toEqual([
      {
        path: 'c.txt',
        status: 'renamed',
        from: 'b.txt',
        added: 1,
        removed: 1,
        hunks: '@@ -1 +1 @@\n-b\n+c\n',
      },
      { path: 'new.txt', status: 'added', added: 1, removed: 0, hunks: '@@ -0,0 +1 @@\n+fresh\n' },
    ]);
  });
});

describe('the official SDK clients', () => {
  it('v2 over HTTP, declaring the extension: tools with a card, the card readable', async () => {
    const client = new ClientV2({ name: 'apps-v2', version: '1' }, { capabilities: DECLARED as Any });
    const transport = new HttpV2(new URL(srv.url), {
      requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } },
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t: Any) => t.name === 'edit_file')?._meta).toEqual({ ui: { resourceUri: CARD } });
      const r = await client.readResource({ uri: CARD });
      expect((r.contents[0] as Any).text).toContain('<main id="card"');
    } finally {
      await client.close();
    }
  });

  it('v1 over stdio: declared at initialize for its connection; a second connection without it sees nothing', async () => {
    const open = async (capabilities: Record<string, unknown>) => {
      const client = new ClientV1({ name: 'apps-v1', version: '1' }, { capabilities: capabilities as Any });
      await client.connect(
        new StdioV1({ command: process.execPath, args: [BIN, '--stdio'], cwd: ws.dir, stderr: 'ignore' }),
      );
      return client;
    };
    const [withUi, without] = await Promise.all([open(DECLARED), open({})]);
    try {
      const a = await withUi.listTools();
      expect(a.tools.find((t) => t.name === 'apply_patch')?._meta).toEqual({ ui: { resourceUri: CARD } });
      const b = await without.listTools();
      expect(b.tools.some((t) => t._meta !== undefined)).toBe(false);
      const edit = await withUi.callTool({
        name: 'edit_file',
        arguments: { path: 'stdio.txt', old_string: '', new_string: 'hello\n' },
      });
      expect((edit._meta as Any)[DIFF].files[0]).toMatchObject({
        path: 'stdio.txt',
        status: 'added',
        added: 1,
      });
    } finally {
      await Promise.all([withUi.close(), without.close()]);
    }
  });
});
