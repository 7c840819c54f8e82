// docs/tools.md#git (arguments, results, truncation, next_action), docs/tools.md#results-and-errors (text +
// structuredContent, INVALID_ARGUMENT) and docs/tools.md#paths (confinement),
// docs/design-notes.md#git-hardening (path defaults to ".", a directory or a file): the five git tools on
// real repositories through a real in-process HTTP server.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const all: Array<{ close(): Promise<void> } | TempWorkspace> = [];
afterAll(async () => {
  for (const x of all.reverse()) {
    if ('cleanup' in x) x.cleanup();
    else await x.close();
  }
});

async function serve(ws: TempWorkspace): Promise<InProcessServer> {
  const srv = await startInProcess({ workspace: ws.dir });
  all.push(srv);
  return srv;
}
function workspace(files: Record<string, string> = {}, gitRepo = true): TempWorkspace {
  const ws = makeWorkspace(files, { git: gitRepo });
  all.push(ws);
  return ws;
}
const commitAll = (ws: TempWorkspace, msg: string) => {
  git(ws.dir, 'add', '-A');
  git(ws.dir, 'commit', '-q', '-m', msg);
};

describe('git_status — staged, unstaged, untracked, renamed, conflicted, unicode and spaces', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  beforeAll(async () => {
    ws = workspace({
      'conflict.txt': 'base\n',
      'staged.txt': 's\n',
      'unstaged.txt': 'u\n',
      'old name.txt': 'rename me please\n',
      'ünï/ïn.txt': 'x\n',
    });
    commitAll(ws, 'base');
    git(ws.dir, 'checkout', '-q', '-b', 'other');
    ws.write('conflict.txt', 'theirs\n');
    commitAll(ws, 'theirs');
    git(ws.dir, 'checkout', '-q', 'main');
    ws.write('conflict.txt', 'ours\n');
    commitAll(ws, 'ours');
    expect(() => git(ws.dir, 'merge', '-q', 'other')).toThrow(); // a real conflict
    ws.write('staged.txt', 's2\n');
    git(ws.dir, 'add', 'staged.txt');
    ws.write('unstaged.txt', 'u2\n');
    git(ws.dir, 'mv', 'old name.txt', 'new näme.txt');
    ws.write('new file with spaces.txt', 'n\n');
    ws.write('ünï/ïn.txt', 'changed\n');
    srv = await serve(ws);
  });

  it('lists each kind with its short code, in text and structured (nothing at its default: docs/design-notes.md#lean-results)', async () => {
    const r = await callTool(srv.url, 'git_status', {});
    expect(r.isError).toBe(false);
    const s = r.structuredContent;
    // The repository is the workspace: no repo_root; every entry is listed: no totals, no truncated.
    expect(Object.keys(s).sort()).toEqual(['branch', 'entries', 'ok']);
    expect(s.branch).toMatchObject({ head: 'main' });
    const by = Object.fromEntries(s.entries.map((e: { path: string }) => [e.path, e]));
    expect(by['staged.txt']).toEqual({ path: 'staged.txt', code: 'M ' });
    expect(by['unstaged.txt']).toEqual({ path: 'unstaged.txt', code: ' M' });
    expect(by['new näme.txt']).toEqual({ path: 'new näme.txt', code: 'R ', orig_path: 'old name.txt' });
    expect(by['conflict.txt']).toMatchObject({ code: 'UU' });
    expect(by['new file with spaces.txt']).toMatchObject({ code: '??' });
    expect(by['ünï/ïn.txt']).toMatchObject({ code: ' M' });
    const text = r.content[0]!.text!;
    expect(text).toContain('## main');
    expect(text).toContain('M  staged.txt');
    expect(text).toContain(' M unstaged.txt');
    expect(text).toContain('R  old name.txt -> new näme.txt');
    expect(text).toContain('UU conflict.txt');
    expect(text).toContain('?? new file with spaces.txt');
    expect(text).not.toContain('{'); // a status listing, not a JSON dump
  });

  it('include_untracked=false hides untracked files; max_entries truncates with next_action', async () => {
    const r = await callTool(srv.url, 'git_status', { include_untracked: false });
    expect(r.structuredContent.entries.some((e: { code: string }) => e.code === '??')).toBe(false);
    const t = await callTool(srv.url, 'git_status', { max_entries: 2 });
    expect(t.structuredContent).toMatchObject({ truncated: true, total_entries: 6 });
    expect(t.structuredContent.counts).toEqual({ staged: 2, unstaged: 2, untracked: 1, conflicted: 1 });
    expect(t.structuredContent.entries).toHaveLength(2);
    expect(t.structuredContent.next_action).toEqual({
      tool: 'git_status',
      arguments: { max_entries: 10000 },
    });
    const next = await callTool(srv.url, 'git_status', t.structuredContent.next_action.arguments);
    expect(next.structuredContent.entries).toHaveLength(6);
  });

  it('path limits the listing to a directory or to one file (docs/design-notes.md#git-hardening)', async () => {
    const r = await callTool(srv.url, 'git_status', { path: 'ünï' });
    expect(r.structuredContent.entries.map((e: { path: string }) => e.path)).toEqual(['ünï/ïn.txt']);
    const f = await callTool(srv.url, 'git_status', { path: 'staged.txt' });
    expect(f.isError, f.content[0]?.text).toBe(false);
    expect(f.structuredContent.entries.map((e: { path: string }) => e.path)).toEqual(['staged.txt']);
  });

  it('paths outside the workspace are refused (docs/tools.md#paths)', async () => {
    const r = await callTool(srv.url, 'git_status', { path: '..' });
    expect(r.structuredContent.error.code).toBe('PATH_OUTSIDE_WORKSPACE');
    const d = await callTool(srv.url, 'git_diff', { paths: ['../../etc/passwd'] });
    expect(d.structuredContent.error.code).toBe('PATH_OUTSIDE_WORKSPACE');
  });
});

describe('git_diff — staged and unstaged, path filters, truncation', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  const block = (tag: string) =>
    Array.from({ length: 30 }, (_, i) => `${tag} line ${i} ${'x'.repeat(20)}`).join('\n') + '\n';
  beforeAll(async () => {
    ws = workspace({
      'a.txt': 'one\ntwo\nthree\n',
      'src/b.ts': 'export const b = 1;\n',
      'dir with space/c.txt': 'c\n',
    });
    for (let i = 0; i < 6; i++) ws.write(`big/f${i}.txt`, block(`old${i}`));
    commitAll(ws, 'base');
    ws.write('a.txt', 'one\nTWO\nthree\n');
    ws.write('src/b.ts', 'export const b = 2;\n');
    git(ws.dir, 'add', 'src/b.ts');
    ws.write('dir with space/c.txt', 'c changed\n');
    for (let i = 0; i < 6; i++) ws.write(`big/f${i}.txt`, block(`new${i}`));
    srv = await serve(ws);
  });

  it('unstaged by default; staged on request; both in labelled sections', async () => {
    const u = await callTool(srv.url, 'git_diff', { paths: ['a.txt', 'src'] });
    expect(u.structuredContent.files).toEqual([
      { path: 'a.txt', kind: 'modified', additions: 1, deletions: 1 },
    ]);
    expect(u.structuredContent.diff).not.toMatch(/^index /m); // blob ids tell a model nothing
    expect(u.content[0]!.text).toContain('-two\n+TWO');
    const s = await callTool(srv.url, 'git_diff', { staged: true, unstaged: false });
    expect(s.structuredContent.files.map((f: { path: string }) => f.path)).toEqual(['src/b.ts']);
    expect(s.structuredContent.diff).toContain('+export const b = 2;');
    const both = await callTool(srv.url, 'git_diff', { staged: true, paths: ['src/b.ts', 'a.txt'] });
    expect(both.structuredContent.files.map((f: { section: string }) => f.section)).toEqual([
      'staged',
      'unstaged',
    ]);
    expect(both.content[0]!.text).toContain('# staged (index vs HEAD)');
    expect(both.content[0]!.text).toContain('# unstaged (working tree vs index)');
  });

  it('path (a directory) limits the diff; names with spaces come back intact', async () => {
    const r = await callTool(srv.url, 'git_diff', { path: 'dir with space' });
    expect(r.structuredContent.files.map((f: { path: string }) => f.path)).toEqual(['dir with space/c.txt']);
    expect(r.structuredContent.diff).toContain('+c changed');
  });

  it('context_lines changes the hunk size', async () => {
    const r = await callTool(srv.url, 'git_diff', { paths: ['a.txt'], context_lines: 0 });
    expect(r.structuredContent.diff).toMatch(/@@ -2 \+2 @@.*\n-two\n\+TWO\n$/);
  });

  it('cuts by whole files at max_bytes and next_action pages through the rest', async () => {
    const first = await callTool(srv.url, 'git_diff', { path: 'big', max_bytes: 4096 });
    const s = first.structuredContent;
    expect(s.truncated).toBe(true);
    expect(s.files).toHaveLength(6);
    expect(Buffer.byteLength(s.diff)).toBeLessThanOrEqual(4096);
    const shown = s.files
      .filter((f: { shown?: string }) => f.shown === undefined) // in full: the default, left out
      .map((f: { path: string }) => f.path);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(6);
    expect(first.content[0]!.text).toMatch(
      /\[diff cut at max_bytes=4096: \d of 6 files shown in full; more: git_diff \{/,
    );
    const seen = new Set<string>(shown);
    let next = s.next_action;
    for (let guard = 0; next && guard < 10; guard++) {
      expect(next.tool).toBe('git_diff');
      const r = await callTool(srv.url, 'git_diff', next.arguments);
      for (const f of r.structuredContent.files) if (f.shown === undefined) seen.add(f.path);
      next = r.structuredContent.next_action;
    }
    expect([...seen].sort()).toEqual(Array.from({ length: 6 }, (_, i) => `big/f${i}.txt`));
  });

  it('a single file larger than max_bytes is shown partially, with a larger budget as next_action', async () => {
    ws.write('huge.txt', 'a\n'.repeat(10));
    commitAll(ws, 'huge');
    ws.write('huge.txt', 'b\n'.repeat(2000));
    const r = await callTool(srv.url, 'git_diff', { paths: ['huge.txt'], max_bytes: 1024 });
    expect(r.structuredContent.files[0]).toMatchObject({ path: 'huge.txt', shown: 'partial' });
    expect(Buffer.byteLength(r.structuredContent.diff)).toBeLessThanOrEqual(1024);
    expect(r.structuredContent.next_action.arguments).toMatchObject({
      paths: ['huge.txt'],
      max_bytes: 4 * 1024 * 1024,
    });
    git(ws.dir, 'checkout', '-q', '--', 'huge.txt');
  });

  it('staged and unstaged both false is INVALID_ARGUMENT with the corrected call', async () => {
    const r = await callTool(srv.url, 'git_diff', { staged: false, unstaged: false });
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.code).toBe('INVALID_ARGUMENT');
    expect(r.content[0]!.text).toContain('Retry: git_diff');
  });
});

describe('git_log — paging with next_action, path limit, refs', () => {
  let srv: InProcessServer;
  beforeAll(async () => {
    const ws = workspace({ 'a.txt': '0\n', 'docs/readme.md': 'r\n' });
    commitAll(ws, 'commit 0');
    for (let i = 1; i <= 6; i++) {
      ws.write('a.txt', `${i}\n`);
      if (i % 3 === 0) ws.write('docs/readme.md', `r${i}\n`);
      commitAll(ws, `commit ${i}\n\nbody of ${i}`);
    }
    git(ws.dir, 'tag', 'v1', 'HEAD~2');
    srv = await serve(ws);
  });

  it('pages newest first through every commit', async () => {
    const subjects: string[] = [];
    let args: Record<string, unknown> | undefined = { max_count: 3 };
    let calls = 0;
    while (args) {
      const r = await callTool(srv.url, 'git_log', args);
      expect(r.isError).toBe(false);
      subjects.push(...r.structuredContent.commits.map((c: { subject: string }) => c.subject));
      args = r.structuredContent.next_action?.arguments;
      if (args) expect(r.content[0]!.text).toContain('[more: git_log {');
      calls++;
    }
    expect(calls).toBe(3);
    expect(subjects).toEqual([
      'commit 6',
      'commit 5',
      'commit 4',
      'commit 3',
      'commit 2',
      'commit 1',
      'commit 0',
    ]);
  });

  it('one line per commit; structured has body, parents, refs', async () => {
    const r = await callTool(srv.url, 'git_log', { max_count: 3 });
    const lines = r.content[0]!.text!.split('\n');
    expect(lines[0]).toMatch(/^[0-9a-f]{10} \d{4}-\d\d-\d\d test: commit 6 \(HEAD -> main\)$/);
    expect(r.structuredContent.commits[0]).toMatchObject({
      body: 'body of 6',
      author: { name: 'test', email: 'test@localhost' },
    });
    expect(r.structuredContent.commits[2].refs).toContain('tag: v1');
    expect(r.structuredContent.next_action).toEqual({
      tool: 'git_log',
      arguments: { max_count: 3, skip: 3 },
    });
  });

  it('a directory path lists only the commits that touched it; a ref starts elsewhere', async () => {
    const d = await callTool(srv.url, 'git_log', { path: 'docs' });
    expect(d.structuredContent.commits.map((c: { subject: string }) => c.subject)).toEqual([
      'commit 6',
      'commit 3',
      'commit 0',
    ]);
    const t = await callTool(srv.url, 'git_log', { ref: 'v1', max_count: 1 });
    expect(t.structuredContent.commits[0].subject).toBe('commit 4');
    const missing = await callTool(srv.url, 'git_log', { ref: 'no-such-branch' });
    expect(missing.structuredContent.error.code).toBe('NOT_FOUND');
  });
});

describe('git_show — with and without diff, blobs, paging', () => {
  let srv: InProcessServer;
  beforeAll(async () => {
    const big = (t: string) =>
      Array.from({ length: 40 }, (_, i) => `${t} ${i} ${'y'.repeat(24)}`).join('\n') + '\n';
    const ws = workspace({
      'a.txt': 'alpha\n',
      'b.txt': 'beta\n',
      'big1.txt': big('one'),
      'big2.txt': big('two'),
      'big3.txt': big('three'),
    });
    commitAll(ws, 'first');
    ws.write('a.txt', 'ALPHA\n');
    ws.write('b.txt', 'BETA\n');
    ws.write('sp ace/ü.txt', 'new\n');
    commitAll(ws, 'second\n\nwhy it changed');
    srv = await serve(ws);
  });

  it('shows header, files and diff', async () => {
    const r = await callTool(srv.url, 'git_show', {});
    const s = r.structuredContent;
    expect(s).toMatchObject({ type: 'commit' });
    expect(s.truncated).toBeUndefined();
    expect(s.commit).toMatchObject({ subject: 'second', body: 'why it changed' });
    expect(s.files.map((f: { path: string; kind: string }) => [f.path, f.kind])).toEqual([
      ['a.txt', 'modified'],
      ['b.txt', 'modified'],
      ['sp ace/ü.txt', 'added'],
    ]);
    expect(s.diff).toContain('-alpha\n+ALPHA');
    const text = r.content[0]!.text!;
    expect(text).toMatch(/^commit [0-9a-f]{40} \(HEAD -> main\)\nAuthor: test <test@localhost>/);
    expect(text).toContain('    second\n\n    why it changed');
    expect(text).toContain('+1 -0  sp ace/ü.txt (added)');
  });

  it('include_diff=false lists files only; paths limit the commit view', async () => {
    const r = await callTool(srv.url, 'git_show', { include_diff: false });
    expect(r.structuredContent.diff).toBeUndefined();
    expect(r.structuredContent.files).toHaveLength(3);
    expect(r.content[0]!.text).not.toContain('@@');
    const p = await callTool(srv.url, 'git_show', { rev: 'HEAD', paths: ['b.txt'] });
    expect(p.structuredContent.files.map((f: { path: string }) => f.path)).toEqual(['b.txt']);
    expect(p.structuredContent.diff).not.toContain('alpha');
  });

  it('paths the commit does not touch (existing or not): the commit, no files, said so (docs/tools.md#git)', async () => {
    for (const paths of [['big1.txt'], ['no/such/deep.txt']]) {
      const r = await callTool(srv.url, 'git_show', { rev: 'HEAD', paths });
      expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
      expect(r.structuredContent.commit).toMatchObject({ subject: 'second' });
      expect(r.structuredContent.files).toBeUndefined();
      expect(r.content[0]!.text).toContain('(no changes to the given paths)');
    }
  });

  it('truncates by whole files with a next_action pinned to the commit id', async () => {
    const r = await callTool(srv.url, 'git_show', { rev: 'HEAD~1', max_bytes: 2048 });
    const s = r.structuredContent;
    expect(s.truncated).toBe(true);
    expect(Buffer.byteLength(s.diff)).toBeLessThanOrEqual(2048);
    const sha = s.commit.sha;
    const seen = new Set<string>(
      s.files.filter((f: { shown?: string }) => f.shown === undefined).map((f: { path: string }) => f.path),
    );
    let next = s.next_action;
    expect(next.arguments.rev).toBe(sha);
    for (let guard = 0; next && guard < 10; guard++) {
      const page = await callTool(srv.url, 'git_show', next.arguments);
      expect(page.structuredContent.commit.sha).toBe(sha);
      for (const f of page.structuredContent.files) if (f.shown === undefined) seen.add(f.path);
      next = page.structuredContent.next_action;
    }
    expect([...seen].sort()).toEqual(['a.txt', 'b.txt', 'big1.txt', 'big2.txt', 'big3.txt']);
  });

  it('a blob revision shows the file as of that commit; an unknown one is NOT_FOUND', async () => {
    const r = await callTool(srv.url, 'git_show', { rev: 'HEAD~1:a.txt' });
    expect(r.structuredContent).toEqual({ ok: true, type: 'blob', content: 'alpha\n' });
    expect(r.content[0]!.text).toBe('alpha\n');
    const bad = await callTool(srv.url, 'git_show', { rev: 'deadbeef' });
    expect(bad.structuredContent.error.code).toBe('NOT_FOUND');
  });
});

describe('git_blame — ranges and paging', () => {
  let srv: InProcessServer;
  beforeAll(async () => {
    const ws = workspace({ 'f.txt': 'l1\nl2\nl3\nl4\nl5\n' });
    commitAll(ws, 'first');
    ws.write('f.txt', 'l1\nL2 changed\nl3\nl4\nl5\nl6\n');
    commitAll(ws, 'second');
    ws.write('f.txt', 'l1\nL2 changed\nl3\nl4 dirty\nl5\nl6\n');
    srv = await serve(ws);
  });

  it('returns the asked range with commit, author and content', async () => {
    const r = await callTool(srv.url, 'git_blame', { path: 'f.txt', start_line: 2, end_line: 4 });
    const s = r.structuredContent;
    expect(s).toMatchObject({ path: 'f.txt', start_line: 2, end_line: 4 });
    expect(s.has_more).toBeUndefined();
    // Each commit's details once, in `commits`; the lines name their commit.
    expect(
      s.lines.map((l: { line: number; commit: string; content: string }) => [
        l.line,
        s.commits[l.commit].summary,
        l.content,
        s.commits[l.commit].uncommitted ?? false,
      ]),
    ).toEqual([
      [2, 'second', 'L2 changed', false],
      [3, 'first', 'l3', false],
      [4, 'Version of f.txt from f.txt', 'l4 dirty', true],
    ]);
    expect(Object.keys(s.commits)).toHaveLength(3);
    expect(r.content[0]!.text).toMatch(/^[0-9a-f]{10} \(test \d{4}-\d\d-\d\d 2\) L2 changed$/m);
    expect(s.next_action).toBeUndefined();
  });

  it('pages with max_lines and next_action; rev blames history', async () => {
    const first = await callTool(srv.url, 'git_blame', { path: 'f.txt', max_lines: 4 });
    expect(first.structuredContent).toMatchObject({ end_line: 4, has_more: true });
    expect(first.structuredContent.next_action).toEqual({
      tool: 'git_blame',
      arguments: { path: 'f.txt', start_line: 5, max_lines: 4 },
    });
    const second = await callTool(srv.url, 'git_blame', first.structuredContent.next_action.arguments);
    expect(second.structuredContent).toMatchObject({ start_line: 5, end_line: 6 });
    expect(second.structuredContent.has_more).toBeUndefined();
    const old = await callTool(srv.url, 'git_blame', { path: 'f.txt', rev: 'HEAD~1' });
    expect(old.structuredContent.lines.map((l: { content: string }) => l.content)).toEqual([
      'l1',
      'l2',
      'l3',
      'l4',
      'l5',
    ]);
  });

  it('a start past the end is INVALID_ARGUMENT with a retry; a directory is IS_DIRECTORY', async () => {
    const r = await callTool(srv.url, 'git_blame', { path: 'f.txt', start_line: 50 });
    expect(r.structuredContent.error.code).toBe('INVALID_ARGUMENT');
    expect(r.content[0]!.text).toContain('Retry: git_blame');
    const d = await callTool(srv.url, 'git_blame', { path: '.' });
    expect(d.structuredContent.error.code).toBe('IS_DIRECTORY');
  });
});

describe('revisions that look like options are refused (docs/tools.md#git)', () => {
  let srv: InProcessServer;
  let ws: TempWorkspace;
  beforeAll(async () => {
    ws = workspace({ 'a.txt': 'a\n' });
    commitAll(ws, 'first');
    srv = await serve(ws);
  });

  it('--output=… as rev/ref is INVALID_ARGUMENT and writes nothing', async () => {
    const target = path.join(ws.dir, '..', `wb-output-${process.pid}`);
    const tmpX = '/tmp/x';
    const tmpXBefore = existsSync(tmpX);
    for (const [tool, args] of [
      ['git_log', { ref: `--output=${target}` }],
      ['git_show', { rev: `--output=${target}` }],
      ['git_blame', { path: 'a.txt', rev: `--output=${target}` }],
      ['git_log', { ref: '--output=/tmp/x' }],
      ['git_show', { rev: '--output=/tmp/x' }],
      ['git_show', { rev: 'HEAD\n--output=/tmp/x' }],
    ] as const) {
      const r = await callTool(srv.url, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(r.structuredContent.error.code).toBe('INVALID_ARGUMENT');
    }
    expect(existsSync(target)).toBe(false);
    if (!tmpXBefore) expect(existsSync(tmpX)).toBe(false);
  });
});

describe('outside a repository (a reason, not a crash)', () => {
  let srv: InProcessServer;
  beforeAll(async () => {
    srv = await serve(workspace({ 'plain.txt': 'p\n' }, false));
  });

  it('every tool answers with the reason, and no repo_root', async () => {
    for (const [tool, args] of [
      ['git_status', {}],
      ['git_diff', {}],
      ['git_log', {}],
      ['git_show', {}],
      ['git_blame', { path: 'plain.txt' }],
    ] as const) {
      const r = await callTool(srv.url, tool, args);
      expect(r.isError, tool).toBe(false);
      expect(r.structuredContent.reason, tool).toMatch(/not inside a git repository/);
      expect(r.structuredContent.repo_root, tool).toBeUndefined();
    }
  });
});

describe('results match the advertised outputSchema (docs/design-notes.md#output-schemas-accept-errors)', () => {
  it('successes, non-repository answers and errors of all five tools validate', async () => {
    const { Ajv } = await import('ajv');
    const ws = workspace({ 'a.txt': 'a\nb\n' });
    commitAll(ws, 'first');
    ws.write('a.txt', 'a\nB\n');
    ws.write('new.txt', 'n\n');
    const srv = await serve(ws);
    const plain = await serve(workspace({ 'p.txt': 'p\n' }, false));
    const list = await handshakeList(srv.url);
    const ajv = new Ajv({ strict: false, allErrors: true });
    const calls: Array<[string, string, Record<string, unknown>]> = [
      [srv.url, 'git_status', {}],
      [srv.url, 'git_status', { max_entries: 1 }],
      [srv.url, 'git_diff', { staged: true }],
      [srv.url, 'git_diff', { max_bytes: 1024, context_lines: 0 }],
      [srv.url, 'git_log', {}],
      [srv.url, 'git_show', {}],
      [srv.url, 'git_show', { rev: 'HEAD:a.txt' }],
      [srv.url, 'git_blame', { path: 'a.txt', max_lines: 1 }],
      [srv.url, 'git_log', { ref: '-x' }],
      [srv.url, 'git_show', { rev: 'nope' }],
      [plain.url, 'git_status', {}],
      [plain.url, 'git_diff', {}],
      [plain.url, 'git_log', {}],
      [plain.url, 'git_show', {}],
      [plain.url, 'git_blame', { path: 'p.txt' }],
    ];
    for (const [url, tool, args] of calls) {
      const schema = list.find((t) => t.name === tool)!.outputSchema;
      const validate = ajv.compile(schema);
      const r = await callTool(url, tool, args);
      expect(
        validate(r.structuredContent),
        `${tool} ${JSON.stringify(args)}: ${ajv.errorsText(validate.errors)}`,
      ).toBe(true);
    }
    const names = list.map((t) => t.name).filter((n) => n.startsWith('git_'));
    expect(names).toEqual(['git_status', 'git_diff', 'git_log', 'git_show', 'git_blame']);
    for (const t of list.filter((x) => x.name.startsWith('git_'))) {
      // Every hint stated (docs/tools.md#annotations); idempotentHint means nothing for a read-only tool.
      expect(t.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    }
  });
});

async function handshakeList(
  url: string,
): Promise<Array<{ name: string; outputSchema: object; annotations: object }>> {
  const { handshake } = await import('../helpers/rpc.js');
  const r = await handshake(url, 1, 'tools/list', {});
  return r.json.result.tools;
}

// A workspace inside a larger repository is GIT_ERROR (docs/design-notes.md#git-hardening):
// test/git-confinement.test.ts.

describe('a repository nested in a workspace that is not one (docs/design-notes.md#git-hardening: path locates the repository)', () => {
  it('path and paths find the nested repository; results are workspace-relative', async () => {
    const outer = workspace({ 'loose.txt': 'l\n' }, false);
    const inner = path.join(outer.dir, 'repoA');
    outer.write('repoA/x.txt', 'x\n');
    git(inner, 'init', '-q', '-b', 'main');
    git(inner, 'add', '-A');
    git(inner, 'commit', '-q', '-m', 'inner first');
    outer.write('repoA/x.txt', 'x2\n');
    const srv = await serve(outer);
    const root = await callTool(srv.url, 'git_status', {});
    expect(root.structuredContent.reason).toBeDefined();
    const st = await callTool(srv.url, 'git_status', { path: 'repoA' });
    expect(st.structuredContent).toMatchObject({ repo_root: 'repoA' });
    expect(st.structuredContent.reason).toBeUndefined();
    expect(st.structuredContent.entries.map((e: { path: string }) => e.path)).toEqual(['repoA/x.txt']);
    const d = await callTool(srv.url, 'git_diff', { path: 'repoA' });
    expect(d.structuredContent.files.map((f: { path: string }) => f.path)).toEqual(['repoA/x.txt']);
    const sh = await callTool(srv.url, 'git_show', { paths: ['repoA/x.txt'] });
    expect(sh.structuredContent.commit.subject).toBe('inner first');
    expect(sh.structuredContent.files.map((f: { path: string }) => f.path)).toEqual(['repoA/x.txt']);
    const bl = await callTool(srv.url, 'git_blame', { path: 'repoA/x.txt', rev: 'HEAD' });
    expect(bl.structuredContent.lines[0]).toMatchObject({ content: 'x' });
    expect(bl.structuredContent.commits[bl.structuredContent.lines[0].commit].summary).toBe('inner first');
  });
});

describe('a repository without commits', () => {
  it('status shows the unborn branch, log is empty, show says the revision does not exist', async () => {
    const ws = workspace({ 'first.txt': 'f\n' });
    git(ws.dir, 'add', 'first.txt');
    const srv = await serve(ws);
    const st = await callTool(srv.url, 'git_status', {});
    expect(st.structuredContent.branch).toEqual({ head: 'main' }); // no oid: no commit yet
    expect(st.content[0]!.text).toBe('## No commits yet on main\nA  first.txt');
    const log = await callTool(srv.url, 'git_log', {});
    expect(log.structuredContent).toEqual({ ok: true });
    expect(log.content[0]!.text).toBe('no commits yet');
    const d = await callTool(srv.url, 'git_diff', { staged: true, unstaged: false });
    expect(d.structuredContent.files).toMatchObject([
      { path: 'first.txt', kind: 'added', section: 'staged' },
    ]);
    const sh = await callTool(srv.url, 'git_show', {});
    expect(sh.structuredContent.error.code).toBe('NOT_FOUND');
  });
});
