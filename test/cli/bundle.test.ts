// Fast start-up: the bin is bundled (scripts/bundle.mjs) and carries the tools/list data the build
// computed, so it answers without loading the tool modules. That data must be exactly what the sources give,
// in every catalog option; and a tool call, which loads the tools on first use, must work from the bin.
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/tools/registry.js';
import { BIN } from '../helpers/server.js';
import { makeWorkspace } from '../helpers/workspace.js';

const ws = makeWorkspace({ 'README.md': '# bundle\n' });
afterAll(() => ws.cleanup());

/** The answers of the built bin over stdio to `requests` (sent at once; stdin then closes). */
function askBin(requests: Array<{ method: string; params?: object }>, args: string[] = [], env = {}) {
  const input = requests
    .map((r, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: r.method, params: r.params ?? {} }))
    .join('\n');
  const run = spawnSync(BIN, ['--stdio', '--workspace', ws.dir, ...args], {
    input: input + '\n',
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', ...env },
  });
  expect(run.status, run.stderr).toBe(0);
  const replies = run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return requests.map((_, i) => replies.find((r) => r.id === i + 1));
}

describe('the bundled bin', () => {
  it.each([
    ['the default catalog', [], {}, { enableViewImage: true, fakeReadonly: false }],
    [
      'SERVICE_ENABLE_VIEW_IMAGE=0',
      [],
      { SERVICE_ENABLE_VIEW_IMAGE: '0' },
      { enableViewImage: false, fakeReadonly: false },
    ],
    [
      '--dangerously-fake-readonly-annotations',
      ['--dangerously-fake-readonly-annotations'],
      {},
      { enableViewImage: true, fakeReadonly: true },
    ],
  ])('%s: tools/list from the bin is the catalog built from the sources', (_name, args, env, opts) => {
    const [list] = askBin([{ method: 'tools/list' }], args, env);
    expect(list.result.tools).toEqual(buildCatalog(opts).listPayload);
  });

  it('a first tools/call, sent before the tools are loaded, is answered (and an unknown tool is -32602)', () => {
    const [call, unknown] = askBin([
      { method: 'tools/call', params: { name: 'read_file', arguments: { path: 'README.md' } } },
      { method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    ]);
    expect(call.result.structuredContent).toMatchObject({ ok: true, content: '# bundle\n' });
    expect(unknown.error.code).toBe(-32602);
  });
});
