// The catalog with and without project roots (docs/tools.md#several-workspaces): without --projects,
// tools/list is byte for byte the catalog of test/golden/tools-list/ (captured before workspaces existed) and a
// `workspace` argument is refused as any unknown argument; with --projects, open_workspace and
// close_workspace are listed, every tool acting on a workspace takes an optional `workspace`, the whole
// tools/list stays under 24 KB, and a call without `workspace` runs on the default workspace.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../exec/exec-support.js';
import { bearer, request, send } from '../helpers/raw-http.js';
import { REPO_ROOT, startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { CONTRACT_ORDER } from '../helpers/catalog-order.js';

const golden = (name: string) =>
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/golden/tools-list', `${name}.json`), 'utf8')) as unknown;

let ws: TempWorkspace;
let plain: InProcessServer;
let projects: InProcessServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'main/README.md': '# main\n', 'other/README.md': '# other\n' });
  plain = await startInProcess({ workspace: path.join(ws.dir, 'main') });
  projects = await startInProcess({
    workspace: path.join(ws.dir, 'main'),
    env: { SERVICE_PROJECTS: ws.dir },
  });
});

afterAll(async () => {
  await plain?.close();
  await projects?.close();
  ws?.cleanup();
});

describe('without project roots', () => {
  it('tools/list is byte for byte the captured catalog', async () => {
    const r = await send(plain.url, request('handshake', 'tools/list', {}, 7), bearer());
    const tools = JSON.stringify(CONTRACT_ORDER.map(golden));
    expect(r.text).toBe(`{"jsonrpc":"2.0","id":7,"result":{"tools":${tools}}}`);
  });

  it('a `workspace` argument is an unknown argument', async () => {
    const r = await call(plain.url, 'read_file', { path: 'README.md', workspace: 'abcd0123' });
    expect(r.sc.error?.code).toBe('INVALID_ARGUMENT');
    expect(r.text).toContain('workspace');
    const o = await send(
      plain.url,
      request('handshake', 'tools/call', { name: 'open_workspace', arguments: { path: 'other' } }),
      bearer(),
    );
    expect(o.json.error?.message).toContain('Unknown tool: open_workspace');
  });
});

describe('with project roots', () => {
  let tools: Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }>;
  let bytes: number;
  beforeAll(async () => {
    const r = await send(projects.url, request('modern', 'tools/list'), bearer());
    bytes = Buffer.byteLength(r.text);
    tools = r.json.result.tools;
  });

  it('lists open_workspace and close_workspace and a `workspace` on every tool that acts on one', () => {
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...CONTRACT_ORDER, 'open_workspace', 'close_workspace']);
    for (const t of tools) {
      const has = 'workspace' in t.inputSchema.properties;
      const own = ['server_info', 'open_workspace'].includes(t.name);
      expect(has, t.name).toBe(!own);
    }
  });

  it('keeps the whole tools/list under 24 KB', () => {
    expect(bytes).toBeLessThanOrEqual(24 * 1024);
  });

  it('a call without `workspace` runs on the default workspace; a bad `workspace` is INVALID_ARGUMENT', async () => {
    const r = await call(projects.url, 'read_file', { path: 'README.md' });
    expect(r.text).toContain('# main');
    const bad = await call(projects.url, 'read_file', { path: 'README.md', workspace: 7 });
    expect(bad.sc.error?.code).toBe('INVALID_ARGUMENT');
    const o = await call(projects.url, 'open_workspace', { path: 'other' });
    expect(o.isError, o.text).toBe(false);
    const other = await call(projects.url, 'read_file', { path: 'README.md', workspace: o.sc.workspace });
    expect(other.text).toContain('# other');
    const again = await call(projects.url, 'open_workspace', { path: path.join(ws.dir, 'other') });
    expect(again.sc.workspace).toBe(o.sc.workspace);
    const info = await call(projects.url, 'server_info', {});
    expect(info.sc.workspaces.kept).toBe(false);
    expect(info.sc.workspaces.open.map((w: { id: string }) => w.id)).toEqual([o.sc.workspace]);
  });

  it('worktree mode needs a repository and says so', async () => {
    mkdirSync(path.join(ws.dir, 'notrepo'));
    writeFileSync(path.join(ws.dir, 'notrepo', 'a.txt'), 'a\n');
    const r = await call(projects.url, 'open_workspace', { path: 'notrepo', mode: 'worktree' });
    expect(r.sc.error?.code).toBe('GIT_ERROR');
    expect(r.text).toContain('checkout');
  });
});
