// docs/tools.md#the-tools (search_text): both engines — ripgrep and the JS fallback — return the same
// results on the same tree for a matrix of requests; context, truncation, smart case, ignore rules, errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { findRipgrep } from '../../src/workspace/search/engines.js';

let ws: TempWorkspace;
let srv: InProcessServer;
const rg = findRipgrep({ PATH: process.env.PATH ?? '' });

beforeAll(async () => {
  ws = makeWorkspace(
    {
      'src/app.ts':
        'import x from "y";\nfunction isValid(a) {\n  return a && isValid(a.next);\n}\nconst ISVALID = 1;\n',
      'src/util.py': 'def is_valid(x):\n    return True  # isValid mirror\n',
      'src/ünï.txt': 'café isValid — naïve\n',
      'src/crlf.txt': 'first\r\nisValid here\r\nlast\r\n',
      'src/deep/more.ts': Array.from({ length: 30 }, (_, i) => `line ${i} isValid`).join('\n') + '\n',
      'src/long.txt': 'prefix ' + 'z'.repeat(2000) + ' isValid\n',
      // Past rg's --max-columns preview, with two-byte characters before the match: the column is finished from
      // the file (src/workspace/search/verify.ts), so both engines still agree.
      'src/long-utf8.txt': 'é'.repeat(700) + ' isValid ' + 'ü'.repeat(40) + '\n',
      'bin.dat': Buffer.concat([Buffer.from('isValid'), Buffer.from([0, 1, 2])]),
      '.hidden/h.ts': 'isValid hidden\n',
      'ignored.log': 'isValid ignored\n',
      '.gitignore': '*.log\n',
      'node_modules/m/index.js': 'isValid in node_modules\n',
      'docs/readme.md': 'Nothing here.\nisValid? maybe\n',
    },
    { git: true },
  );
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
});

const REQUESTS: Array<Record<string, unknown>> = [
  { query: 'isValid' },
  { query: 'isvalid' },
  { query: 'isvalid', case_sensitive: true },
  { query: 'ISVALID' },
  { query: 'isValid', context_lines: 2 },
  { query: 'isValid', max_results: 5 },
  { query: 'isValid', include_globs: ['*.ts'] },
  { query: 'isValid', include_globs: ['src/*.ts'] },
  { query: 'isValid', glob: '*.py', include_globs: ['*.md'] },
  { query: 'isValid', exclude_globs: ['deep'] },
  { query: 'isValid', path: 'src/deep' },
  { query: 'isValid', path: 'src/app.ts' },
  { query: 'isValid', include_hidden: true },
  { query: 'isValid', include_ignored: true },
  { query: 'is.?valid', regex: true },
  { query: 'is_?[Vv]alid\\(', regex: true },
  { query: 'isValid', max_preview_bytes: 32 },
  { query: 'naïve' },
  { query: 'a.next' },
  { query: 'no such text anywhere' },
  { query: 'isValid', max_results: 4, after: 'src/deep/more.ts:7' },
  { query: 'isValid', context_lines: 1, after: 'src/crlf.txt:2' },
  { query: 'here$', regex: true },
];

describe.skipIf(rg.kind !== 'ripgrep')('search_text: ripgrep and the JS engine agree', () => {
  it.each(REQUESTS.map((r) => [JSON.stringify(r), r] as const))('%s', async (_label, req) => {
    srv.runtime.search.use(rg);
    const a = await callTool(srv.url, 'search_text', req);
    srv.runtime.search.use({ kind: 'js' });
    const b = await callTool(srv.url, 'search_text', req);
    srv.runtime.search.use(rg);
    expect(a.isError).toBe(false);
    expect(a.structuredContent.engine).toBeUndefined(); // ripgrep, the default (docs/design-notes.md#lean-results)
    expect(b.structuredContent.engine).toBe('js');
    const strip = (s: Record<string, unknown>) => ({ ...s, engine: undefined, next_action: undefined });
    expect(strip(b.structuredContent)).toEqual(strip(a.structuredContent));
  });
});

describe('search_text behaviour', () => {
  const search = (args: Record<string, unknown>) => callTool(srv.url, 'search_text', args);
  it('reports path, 1-based line and character column, sorted', async () => {
    const r = await search({ query: 'isValid', path: 'src' });
    const m = r.structuredContent.matches as Array<{
      path: string;
      line: number;
      column: number;
      preview: string;
    }>;
    expect(m.find((x) => x.path === 'src/app.ts' && x.line === 2)).toMatchObject({
      column: 10,
      preview: 'function isValid(a) {',
    });
    expect(m.find((x) => x.path === 'src/ünï.txt')).toMatchObject({ column: 6 });
    expect(m.find((x) => x.path === 'src/crlf.txt')).toMatchObject({ line: 2, preview: 'isValid here' });
    const order = m.map((x) => `${x.path}:${String(x.line).padStart(4, '0')}`);
    expect(order).toEqual([...order].sort());
  });
  it('context lines come before and after; text shows them like grep', async () => {
    const r = await search({ query: 'ISVALID', path: 'src/app.ts', context_lines: 1 });
    expect(r.structuredContent.matches).toEqual([
      { path: 'src/app.ts', line: 5, column: 7, preview: 'const ISVALID = 1;', before: ['}'] },
    ]);
    expect(r.structuredContent).toEqual({ ok: true, matches: r.structuredContent.matches });
    expect(r.content[0]?.text).toContain('src/app.ts-4- }\nsrc/app.ts:5: const ISVALID = 1;');
  });
  it('skips binary, hidden, ignored and node_modules files by default', async () => {
    const paths = new Set(
      ((await search({ query: 'isValid' })).structuredContent.matches as Array<{ path: string }>).map(
        (m) => m.path,
      ),
    );
    for (const p of ['bin.dat', '.hidden/h.ts', 'ignored.log', 'node_modules/m/index.js'])
      expect(paths.has(p)).toBe(false);
  });
  it('truncation says how many, and next_action continues after the last match shown', async () => {
    const r = await search({ query: 'isValid', max_results: 3 });
    expect(r.structuredContent).toMatchObject({ truncated: true });
    expect(r.structuredContent.total_is_lower_bound).toBeUndefined();
    const shown = r.structuredContent.matches as Array<{ path: string; line: number }>;
    expect(shown).toHaveLength(3);
    expect(r.structuredContent.total_matches).toBeGreaterThan(30);
    const last = shown[2] as { path: string; line: number };
    expect(r.structuredContent.next_action).toEqual({
      tool: 'search_text',
      arguments: { query: 'isValid', max_results: 3, after: `${last.path}:${last.line}` },
    });
    expect(r.content[0]?.text).toMatch(/\[3 of \d+ matching lines shown/);
  });
  it('paging with next_action yields every match exactly once, in order, from both engines', async () => {
    const all = (await search({ query: 'isValid', max_results: 10_000 })).structuredContent.matches as Array<{
      path: string;
      line: number;
    }>;
    for (const engine of rg.kind === 'ripgrep' ? [rg, { kind: 'js' as const }] : [{ kind: 'js' as const }]) {
      srv.runtime.search.use(engine);
      const seen: Array<{ path: string; line: number }> = [];
      let args: Record<string, unknown> | undefined = { query: 'isValid', max_results: 7 };
      while (args) {
        const page = await search(args);
        seen.push(...(page.structuredContent.matches ?? []));
        args = page.structuredContent.next_action?.arguments;
      }
      expect(seen).toEqual(all);
    }
    srv.runtime.search.use(rg);
  });
  it('an after that is not "path:line" is INVALID_ARGUMENT', async () => {
    const r = await search({ query: 'isValid', after: 'src/app.ts' });
    expect(r.structuredContent.error.code).toBe('INVALID_ARGUMENT');
  });
  it('a match far into a long line has its character column, and the preview is the line start', async () => {
    const r = await callTool(srv.url, 'search_text', { query: 'isValid', path: 'src/long-utf8.txt' });
    expect(r.structuredContent.matches).toHaveLength(1);
    expect(r.structuredContent.matches[0]).toMatchObject({ line: 1, column: 702 });
    expect(r.structuredContent.matches[0].preview.startsWith('é'.repeat(100))).toBe(true);
  });
  it('previews are cut at max_preview_bytes', async () => {
    const r = await search({ query: 'isValid', path: 'src/long.txt', max_preview_bytes: 64 });
    const m = (r.structuredContent.matches as Array<{ preview: string; column: number }>)[0];
    expect(Buffer.byteLength(m?.preview ?? '')).toBeLessThanOrEqual(64);
    expect(m?.column).toBe(2009);
  });
  it('an invalid regex is INVALID_ARGUMENT naming the problem (both engines)', async () => {
    for (const engine of [rg, { kind: 'js' as const }]) {
      srv.runtime.search.use(engine);
      const r = await search({ query: 'a(', regex: true });
      expect(r.structuredContent.error.code).toBe('INVALID_ARGUMENT');
      expect(r.structuredContent.error.message).toMatch(/invalid regular expression/);
    }
    srv.runtime.search.use(rg);
  });
  it('confines the search path', async () => {
    expect((await search({ query: 'x', path: '../' })).structuredContent.error.code).toBe(
      'PATH_OUTSIDE_WORKSPACE',
    );
    expect((await search({ query: 'x', path: 'missing' })).structuredContent.error.code).toBe('NOT_FOUND');
    expect((await search({ query: '' })).structuredContent.error.code).toBe('INVALID_ARGUMENT');
  });
});
