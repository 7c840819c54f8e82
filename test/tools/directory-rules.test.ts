// The catalog against the rules of the two app directories people install MCP servers from, and its size
// (docs/tools.md#annotations). Each rule is written down once here, with what it asks; the catalog is taken
// over the wire from a server with the default configuration, and built for the other catalog options
// (test/cli/bundle.test.ts proves the bin sends exactly what buildCatalog gives).
import { afterAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/tools/registry.js';
import { startInProcess } from '../helpers/server.js';
import { makeWorkspace } from '../helpers/workspace.js';
import { bearer, request, send } from '../helpers/raw-http.js';
import { readFileSync } from 'node:fs';

type Tool = { name: string; title?: unknown; annotations?: Record<string, unknown> };

/** The most bytes tools/list's `tools` array may take as JSON (docs/tools.md#what-the-model-reads). */
const MAX_CATALOG_BYTES = 22_000;

const isBool = (v: unknown) => typeof v === 'boolean';

const RULES: ReadonlyArray<readonly [string, (t: Tool) => boolean]> = [
  // OpenAI (ChatGPT apps and connectors, and its directory's scan): every tool states the three hints as booleans.
  ['OpenAI: readOnlyHint is a boolean', (t) => isBool(t.annotations?.readOnlyHint)],
  ['OpenAI: destructiveHint is a boolean', (t) => isBool(t.annotations?.destructiveHint)],
  ['OpenAI: openWorldHint is a boolean', (t) => isBool(t.annotations?.openWorldHint)],
  // Anthropic's connector directory: every tool has a human-readable title and says whether it reads or writes.
  ['Anthropic: a non-empty title', (t) => typeof t.title === 'string' && t.title.trim().length > 0],
  [
    'Anthropic: readOnlyHint and destructiveHint both stated',
    (t) => isBool(t.annotations?.readOnlyHint) && isBool(t.annotations?.destructiveHint),
  ],
  // Both, from the MCP meaning of the hints: a read-only tool cannot be destructive; idempotentHint, when
  // stated, is a boolean.
  [
    'a read-only tool is not destructive',
    (t) => !(t.annotations?.readOnlyHint === true && t.annotations?.destructiveHint === true),
  ],
  [
    'idempotentHint, when present, is a boolean',
    (t) => t.annotations?.idempotentHint === undefined || isBool(t.annotations.idempotentHint),
  ],
];

const ws = makeWorkspace({ 'README.md': '# directories\n' });
const server = await startInProcess({ workspace: ws.dir });
const listed = await send(server.url, request('handshake', 'tools/list'), bearer());
const WIRE = (listed.json?.result?.tools ?? []) as Tool[];

afterAll(async () => {
  await server.close();
  ws.cleanup();
});

const broken = (tools: readonly Tool[]) =>
  tools.flatMap((t) => RULES.filter(([, ok]) => !ok(t)).map(([rule]) => `${t.name}: ${rule}`));

describe('the catalog and the app directories', () => {
  it('every tool of tools/list meets every rule', () => {
    expect(WIRE.length).toBe(20);
    expect(broken(WIRE)).toEqual([]);
  });

  it.each([
    ['SERVICE_ENABLE_VIEW_IMAGE=0', { enableViewImage: false, fakeReadonly: false }],
    ['--dangerously-fake-readonly-annotations', { enableViewImage: true, fakeReadonly: true }],
  ])('with %s too', (_name, opts) => {
    expect(broken(buildCatalog(opts).listPayload as Tool[])).toEqual([]);
  });

  it('the hints say what each tool does: only these write, only these destroy, only exec_command reaches out', () => {
    const where = (hint: string) => WIRE.filter((t) => t.annotations?.[hint] === true).map((t) => t.name);
    expect(WIRE.filter((t) => t.annotations?.readOnlyHint === false).map((t) => t.name)).toEqual([
      'apply_patch',
      'edit_file',
      'exec_command',
      'write_stdin',
      'kill_command',
      'show_changes',
    ]);
    expect(where('destructiveHint')).toEqual(['apply_patch', 'exec_command', 'kill_command']);
    expect(where('openWorldHint')).toEqual(['exec_command']);
    expect(where('idempotentHint')).toEqual(['kill_command']);
  });

  it(`tools/list's tools take at most ${MAX_CATALOG_BYTES} bytes`, () => {
    expect(Buffer.byteLength(JSON.stringify(WIRE))).toBeLessThanOrEqual(MAX_CATALOG_BYTES);
  });

  it('differs from the catalog before show_changes only by the show_changes entry, after git_blame', () => {
    // test/fixtures/catalog-branch-point.json: tools/list's tools as the commit before show_changes built them.
    const before = JSON.parse(
      readFileSync(new URL('../fixtures/catalog-branch-point.json', import.meta.url), 'utf8'),
    ) as Tool[];
    const names = WIRE.map((t) => t.name);
    expect(names.indexOf('show_changes')).toBe(names.indexOf('git_blame') + 1);
    expect(WIRE.filter((t) => t.name !== 'show_changes')).toEqual(before);
    // App-only tools (revert_changes) are not in it.
    expect(names).not.toContain('revert_changes');
  });
});
