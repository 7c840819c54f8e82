// docs/design-notes.md#output-schemas-accept-errors, docs/design-notes.md#lean-results: the results of the
// file, patch, git and permission tools leave out what is at its default, and every one of them (successes,
// the variants of each tool, errors) validates against the outputSchema its tool advertises, compiled as the
// v1 SDK client compiles it. The advertised schemas carry no type arrays and no untyped node (the MCP
// Inspector's portability warnings).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { lean } from '../../src/tools/result.js';
import { handshake } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { png } from '../helpers/confinement.js';
import { CONTRACT_ORDER } from '../helpers/catalog-order.js';

/** The file, patch, git and permission tools: the catalog's order (test/helpers/catalog-order.ts) less the others. */
const NOT_IN_SLICE = new Set([
  'server_info',
  'check_exec_environment',
  'exec_command',
  'write_stdin',
  'kill_command',
  'read_output',
]);
const SLICE = CONTRACT_ORDER.filter((n) => !NOT_IN_SLICE.has(n));

type Json = Record<string, unknown>;
type Tool = { name: string; inputSchema: Json; outputSchema: Json };

let ws: TempWorkspace;
let plain: TempWorkspace;
let srv: InProcessServer;
let plainSrv: InProcessServer;
let tools: Tool[];

beforeAll(async () => {
  ws = makeWorkspace(
    {
      'a.txt': 'one\ntwo\nthree\n',
      'src/app.ts': 'export const a = 1;\nexport function isValid() {}\n',
      'img.png': png(3, 2),
      'empty.txt': '',
    },
    { git: true },
  );
  git(ws.dir, 'add', '-A');
  git(ws.dir, 'commit', '-q', '-m', 'first\n\nbody');
  ws.write('a.txt', 'one\nTWO\nthree\n');
  ws.write('new.txt', 'n\n');
  plain = makeWorkspace({ 'p.txt': 'p\n' });
  srv = await startInProcess({ workspace: ws.dir });
  plainSrv = await startInProcess({ workspace: plain.dir });
  tools = (await handshake(srv.url, 1, 'tools/list', {})).json.result.tools;
});
afterAll(async () => {
  await srv.close();
  await plainSrv.close();
  ws.cleanup();
  plain.cleanup();
});

/** Every schema node below `node` (properties, items, anyOf, additionalProperties), with its path. */
function* nodes(node: unknown, at: string): Generator<[string, Json]> {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return;
  const o = node as Json;
  yield [at, o];
  for (const [k, v] of Object.entries((o.properties ?? {}) as Json)) yield* nodes(v, `${at}.properties.${k}`);
  if (o.items) yield* nodes(o.items, `${at}.items`);
  if (o.additionalProperties && typeof o.additionalProperties === 'object')
    yield* nodes(o.additionalProperties, `${at}.additionalProperties`);
  for (const [i, v] of ((o.anyOf ?? []) as unknown[]).entries()) yield* nodes(v, `${at}.anyOf[${i}]`);
}

const CONSTRAINS = [
  'type',
  'enum',
  'const',
  'anyOf',
  'properties',
  'required',
  'items',
  'additionalProperties',
];

describe('advertised schemas (zero Inspector portability warnings)', () => {
  it.each(SLICE)('%s: no type arrays, no untyped node, no null', (name) => {
    const t = tools.find((x) => x.name === name)!;
    expect(t, name).toBeDefined();
    for (const [schema, root] of [
      ['inputSchema', t.inputSchema],
      ['outputSchema', t.outputSchema],
    ] as const) {
      for (const [at, n] of nodes(root, schema)) {
        expect(Array.isArray(n.type), `${name} ${at}: type array`).toBe(false);
        expect(n.type, `${name} ${at}`).not.toBe('null');
        expect(
          CONSTRAINS.some((k) => k in n),
          `${name} ${at}: untyped`,
        ).toBe(true);
      }
    }
  });

  it('output schemas are anyOf the success shape (ok: true) and the error shape (docs/design-notes.md#output-schemas-accept-errors)', () => {
    for (const name of SLICE) {
      const out = tools.find((x) => x.name === name)!.outputSchema;
      expect(out.type).toBe('object');
      const [success, error] = out.anyOf as Json[];
      expect((success!.properties as Json).ok).toEqual({ const: true });
      expect(success!.required).toContain('ok');
      expect(error).toEqual({ required: ['ok', 'error'] });
    }
  });
});

describe('lean results (docs/design-notes.md#lean-results)', () => {
  it('leaves out false, 0, null, "" and empty lists at any depth, keeps ALWAYS fields and next_action as sent', () => {
    expect(
      lean({
        a: false,
        b: 0,
        c: null,
        d: '',
        e: [],
        f: {},
        g: [{ x: 0, y: 'y', z: [] }],
        h: { i: null },
        ok: true,
        status: 'exited',
        exit_code: 0,
        command_id: 'c',
        next_action: { tool: 't', arguments: { staged: false, chars: '' } },
      }),
    ).toEqual({
      g: [{ y: 'y' }],
      ok: true,
      status: 'exited',
      exit_code: 0,
      command_id: 'c',
      next_action: { tool: 't', arguments: { staged: false, chars: '' } },
    });
    expect(lean({ exit_code: null, content: '' }, ['content'])).toEqual({ content: '' });
  });
});

const CALLS: Array<[string, Json, 'repo' | 'plain']> = [
  ['read_file', { path: 'a.txt' }, 'repo'],
  ['read_file', { path: 'a.txt', start_line: 2, max_lines: 1 }, 'repo'],
  ['read_file', { path: 'empty.txt' }, 'repo'],
  ['read_file', { path: 'missing.txt' }, 'repo'],
  ['list_dir', {}, 'repo'],
  ['list_dir', { path: 'src', recursive: true, max_entries: 1 }, 'repo'],
  ['list_files', {}, 'repo'],
  ['list_files', { patterns: ['*.nothing'] }, 'repo'],
  ['list_files', { max_results: 1 }, 'repo'],
  ['search_text', { query: 'isValid' }, 'repo'],
  ['search_text', { query: 'e', max_results: 1, context_lines: 1 }, 'repo'],
  ['search_text', { query: 'no such text' }, 'repo'],
  ['search_text', { query: 'a(', regex: true }, 'repo'],
  ['view_image', { path: 'img.png' }, 'repo'],
  ['view_image', { path: 'a.txt' }, 'repo'],
  [
    'apply_patch',
    { patch: '*** Begin Patch\n*** Add File: added.txt\n+x\n*** End Patch', dry_run: true },
    'repo',
  ],
  ['apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n-nope\n+x\n*** End Patch' }, 'repo'],
  ['edit_file', { path: 'created.txt', old_string: '', new_string: 'c\n' }, 'repo'],
  ['edit_file', { path: 'created.txt', old_string: 'c', new_string: 'C' }, 'repo'],
  [
    'edit_file',
    { path: 'src/app.ts', old_string: 'export', new_string: 'export', replace_all: true },
    'repo',
  ],
  ['edit_file', { path: 'src/app.ts', old_string: 'export', new_string: 'export ' }, 'repo'],
  ['edit_file', { path: 'src/app.ts', old_string: 'export const a = 2;', new_string: 'x' }, 'repo'],
  ['edit_file', { path: 'src/app.ts', old_string: ' export const a = 1;', new_string: 'x' }, 'repo'],
  ['edit_file', { path: 'img.png', old_string: 'PNG', new_string: 'x' }, 'repo'],
  ['git_status', {}, 'repo'],
  ['git_status', { max_entries: 1 }, 'repo'],
  ['git_status', {}, 'plain'],
  ['git_diff', {}, 'repo'],
  ['git_diff', { staged: true }, 'repo'],
  ['git_diff', {}, 'plain'],
  ['git_log', {}, 'repo'],
  ['git_log', {}, 'plain'],
  ['git_show', {}, 'repo'],
  ['git_show', { rev: 'HEAD:a.txt' }, 'repo'],
  ['git_show', {}, 'plain'],
  ['git_blame', { path: 'a.txt' }, 'repo'],
  ['git_blame', { path: 'a.txt', max_lines: 1 }, 'repo'],
  ['git_blame', { path: 'p.txt' }, 'plain'],
  ['show_changes', {}, 'repo'],
  ['show_changes', {}, 'repo'],
  ['show_changes', {}, 'plain'],
  [
    'request_permissions',
    { tool_name: 'exec_command', permission: 'network', reason: 'npm install' },
    'repo',
  ],
];

describe('every result validates against its outputSchema as the v1 SDK client checks it (docs/design-notes.md#output-schemas-accept-errors, docs/design-notes.md#lean-results)', () => {
  it.each(CALLS.map(([t, a, w]) => [`${t} ${JSON.stringify(a)} (${w})`, t, a, w] as const))(
    '%s',
    async (_label, name, args, where) => {
      const url = where === 'repo' ? srv.url : plainSrv.url;
      const r = await handshake(url, 1, 'tools/call', { name, arguments: args });
      const result = r.json.result;
      const validate = new AjvJsonSchemaValidator().getValidator(
        tools.find((t) => t.name === name)!.outputSchema as never,
      );
      const v = validate(result.structuredContent);
      expect(v.valid, `${v.errorMessage}: ${JSON.stringify(result.structuredContent)}`).toBe(true);
      if (!result.isError) {
        // Nothing at its default (a file's content excepted; next_action is a call, sent as is; list_dir's
        // `files` maps names to sizes, where 0 is a size like any other).
        const { next_action: _next, content, ...rest } = result.structuredContent;
        if (name === 'list_dir') delete rest.files;
        expect(JSON.stringify(rest), name).not.toMatch(/:null|:false|:0[,}]|:\[\]|:""|:\{\}/);
        if (content !== undefined) expect(typeof content).toBe('string');
      }
    },
  );

  it('a field the result may leave out is optional, not nullable: null is refused', () => {
    const validate = new AjvJsonSchemaValidator().getValidator(
      tools.find((t) => t.name === 'read_file')!.outputSchema as never,
    );
    expect(validate({ ok: true, path: 'a', content: '' }).valid).toBe(true);
    expect(validate({ ok: true, path: 'a', content: '', truncated_by: null }).valid).toBe(false);
  });
});
