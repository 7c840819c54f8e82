// docs/tools.md#paths (default excludes, hidden, .gitignore, one glob meaning) and docs/tools.md#the-tools
// (list_dir, list_files): real trees with real ignore files, through a real HTTP server.
import { symlinkSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dirEntries, textOrder } from '../helpers/list-dir.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let outside: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  outside = makeWorkspace({ 'o.txt': 'outside\n' });
  ws = makeWorkspace(
    {
      'README.md': '# root file\n',
      'root.ts': 'export {};\n',
      'src/a.ts': 'a\n',
      'src/b.js': 'b\n',
      'src/deep/c.ts': 'c\n',
      'src/deep/keep.log': 'kept by negation\n',
      'src/deep/drop.log': 'ignored\n',
      'src/deep/.gitignore': '!keep.log\n',
      '.gitignore': '*.log\ngenerated/\n',
      'generated/out.ts': 'gen\n',
      '.hidden/h.ts': 'h\n',
      '.env': 'X=1\n',
      'node_modules/pkg/index.js': 'nm\n',
      'dist/bundle.js': 'dist\n',
      'dist/nested/more.js': 'dist\n',
      'docs/dist/page.md': 'nested dist dir is excluded too\n',
    },
    { git: true },
  );
  symlinkSync(path.join(outside.dir, 'o.txt'), path.join(ws.dir, 'src', 'out-link.txt'));
  symlinkSync(path.join(ws.dir, 'src', 'a.ts'), path.join(ws.dir, 'src', 'in-link.ts'));
  utimesSync(path.join(ws.dir, 'src/b.js'), new Date('2030-01-01'), new Date('2030-01-01'));
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
  outside.cleanup();
});

const files = async (args: Record<string, unknown>) => {
  const r = await callTool(srv.url, 'list_files', args);
  expect(r.isError, JSON.stringify(r.structuredContent)).toBe(false);
  // No files: `files` is left out (docs/design-notes.md#lean-results).
  return ((r.structuredContent.files ?? []) as Array<{ path: string }>).map((f) => f.path);
};

describe('list_files: one glob meaning, ignore rules, default excludes', () => {
  it('"**/*" includes root-level files; ignored, hidden and default-excluded paths are skipped', async () => {
    expect(await files({ patterns: ['**/*'] })).toEqual([
      'README.md',
      'root.ts',
      'src/a.ts',
      'src/b.js',
      'src/deep/c.ts',
      'src/deep/keep.log',
      'src/in-link.ts',
    ]);
  });
  it('no pattern lists the same set', async () => {
    expect(await files({})).toEqual(await files({ patterns: ['**/*'] }));
  });
  it('a pattern without a slash matches the basename at any depth; with a slash, the whole path', async () => {
    expect(await files({ patterns: ['*.ts'] })).toEqual([
      'root.ts',
      'src/a.ts',
      'src/deep/c.ts',
      'src/in-link.ts',
    ]);
    expect(await files({ patterns: ['src/*.ts'] })).toEqual(['src/a.ts', 'src/in-link.ts']);
    expect(await files({ patterns: ['src/**/*.ts'] })).toEqual([
      'src/a.ts',
      'src/deep/c.ts',
      'src/in-link.ts',
    ]);
  });
  it('glob is one more include pattern; exclude_patterns drop whole directories', async () => {
    expect(await files({ patterns: ['*.md'], glob: '*.js' })).toEqual(['README.md', 'src/b.js']);
    expect(await files({ exclude_patterns: ['deep'] })).toEqual([
      'README.md',
      'root.ts',
      'src/a.ts',
      'src/b.js',
      'src/in-link.ts',
    ]);
  });
  it('patterns are relative to path', async () => {
    expect(await files({ path: 'src', patterns: ['deep/*'] })).toEqual([
      'src/deep/c.ts',
      'src/deep/keep.log',
    ]);
  });
  it('include_hidden and include_ignored lift their filters', async () => {
    const hidden = await files({ include_hidden: true });
    expect(hidden).toContain('.hidden/h.ts');
    expect(hidden).toContain('.env');
    expect(hidden).toContain('.gitignore');
    expect(hidden).not.toContain('.git/HEAD');
    const ignored = await files({ include_ignored: true });
    expect(ignored).toEqual(
      expect.arrayContaining([
        'src/deep/drop.log',
        'generated/out.ts',
        'node_modules/pkg/index.js',
        'dist/bundle.js',
      ]),
    );
  });
  it('default excludes apply below path only: naming dist lists it', async () => {
    expect(await files({ path: 'dist' })).toEqual(['dist/bundle.js', 'dist/nested/more.js']);
    expect(await files({ path: 'docs' })).toEqual([]);
  });
  it('symlinks leading outside are dropped, inside ones kept', async () => {
    const all = await files({ include_hidden: true });
    expect(all).not.toContain('src/out-link.txt');
    expect(all).toContain('src/in-link.ts');
  });
  it('truncation is deterministic, says so, and next_action continues after the last path', async () => {
    const r = await callTool(srv.url, 'list_files', { max_results: 2 });
    expect(r.structuredContent).toMatchObject({ truncated: true });
    expect(r.structuredContent.total_files).toBeUndefined(); // a page does not walk the rest to count it
    expect((r.structuredContent.files as Array<{ path: string }>).map((f) => f.path)).toEqual([
      'README.md',
      'root.ts',
    ]);
    expect(r.structuredContent.next_action).toEqual({
      tool: 'list_files',
      arguments: { max_results: 2, after: 'root.ts' },
    });
    expect(r.content[0]?.text).toContain(
      '[2 files shown; more follow: list_files {"max_results":2,"after":"root.ts"}]',
    );
    const seen: string[] = [];
    let args: Record<string, unknown> | undefined = { max_results: 2 };
    while (args) {
      const page = await callTool(srv.url, 'list_files', args);
      seen.push(...(page.structuredContent.files as Array<{ path: string }>).map((f) => f.path));
      args = page.structuredContent.next_action?.arguments;
    }
    expect(seen).toEqual(await files({}));
  });
  it('sort=modified puts the newest first', async () => {
    expect((await files({ sort: 'modified' }))[0]).toBe('src/b.js');
  });
  it('a file as path is NOT_A_DIRECTORY with the read_file call to make', async () => {
    const r = await callTool(srv.url, 'list_files', { path: 'root.ts' });
    expect(r.structuredContent.error.code).toBe('NOT_A_DIRECTORY');
    expect(r.content[0]?.text).toContain('Retry: read_file {"path":"root.ts"}');
  });
});

describe('list_dir', () => {
  it('lists one level lean: names grouped by kind, sizes for files, no times unless asked', async () => {
    const r = await callTool(srv.url, 'list_dir', {});
    expect(r.structuredContent).toEqual({
      ok: true,
      dirs: ['docs', 'src'],
      files: { 'README.md': 12, 'root.ts': 11 },
    });
    expect(r.content[0]?.text).toBe('README.md (12 B)\ndocs/\nroot.ts (11 B)\nsrc/');
    const timed = await callTool(srv.url, 'list_dir', { times: true });
    const entries = dirEntries(timed.structuredContent);
    expect(entries.map((e) => e.path)).toEqual(['README.md', 'docs', 'root.ts', 'src']);
    for (const e of entries) expect(Date.parse(e.modified ?? ''), e.path).not.toBeNaN();
  });
  it('recursive with max_depth, sorted by type, names relative to path, shows symlink targets', async () => {
    const r = await callTool(srv.url, 'list_dir', { path: 'src', recursive: true, sort: 'type' });
    const sc = r.structuredContent;
    expect(sc.dirs).toEqual(['deep']);
    expect(sc.files).toEqual({ 'a.ts': 2, 'b.js': 2, 'deep/c.ts': 2, 'deep/keep.log': 17 });
    expect(sc.links).toEqual({ 'in-link.ts': 'src/a.ts', 'out-link.txt': '(outside the workspace)' });
    expect(textOrder(r.content[0]?.text ?? '')).toEqual([
      'deep',
      'a.ts',
      'b.js',
      'deep/c.ts',
      'deep/keep.log',
      'in-link.ts',
      'out-link.txt',
    ]);
    expect(r.content[0]?.text).toMatch(/^\(in src\/\)\n/);
    expect(r.content[0]?.text).toContain(
      '[sorting by type read all 7 entries; sort by name reads only a page]',
    );
    const shallow = await callTool(srv.url, 'list_dir', { path: 'src', max_depth: 1 });
    expect(dirEntries(shallow.structuredContent).some((e) => e.path.startsWith('deep/'))).toBe(false);
  });
  it('sort=modified lists the newest entry first, with times', async () => {
    const r = await callTool(srv.url, 'list_dir', { path: 'src', sort: 'modified' });
    expect(textOrder(r.content[0]?.text ?? '')[0]).toBe('b.js');
    const times = textOrder(r.content[0]?.text ?? '').map((n) => r.structuredContent.modified[n]);
    expect(times.every((t) => typeof t === 'string')).toBe(true);
    expect(times).toEqual([...times].sort().reverse());
  });
  it('pages follow the sort: after continues where the page stopped, for every sort', async () => {
    const first = await callTool(srv.url, 'list_dir', { recursive: true, max_entries: 3 });
    expect(dirEntries(first.structuredContent).map((e) => e.path)).toEqual(['README.md', 'docs', 'root.ts']);
    expect(first.structuredContent.next_action.tool).toBe('list_dir');
    for (const sort of ['name', 'type', 'modified'] as const) {
      const all = await callTool(srv.url, 'list_dir', { recursive: true, sort });
      const whole = textOrder(all.content[0]?.text ?? '');
      const seen: string[] = [];
      let args: Record<string, unknown> | undefined = { recursive: true, sort, max_entries: 2 };
      for (let n = 0; args && n < 20; n++) {
        const page = await callTool(srv.url, 'list_dir', args);
        seen.push(...textOrder(page.content[0]?.text ?? '').filter((l) => !l.startsWith('(no more')));
        args = page.structuredContent.next_action?.arguments;
      }
      expect(seen, sort).toEqual(whole);
    }
  });
  it('refuses paths outside and files', async () => {
    expect((await callTool(srv.url, 'list_dir', { path: '..' })).structuredContent.error.code).toBe(
      'PATH_OUTSIDE_WORKSPACE',
    );
    expect((await callTool(srv.url, 'list_dir', { path: 'README.md' })).structuredContent.error.code).toBe(
      'NOT_A_DIRECTORY',
    );
    expect((await callTool(srv.url, 'list_dir', { path: 'nope' })).structuredContent.error.code).toBe(
      'NOT_FOUND',
    );
  });
});
