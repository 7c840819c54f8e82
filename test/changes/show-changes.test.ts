// docs/tools.md#review-points and docs/tools.md#review-points: review points in a real git repository and in a
// plain directory, through a real in-process HTTP server; changes made by apply_patch, edit_file and a
// command; `since` leaves the point; renames; the user's refs and .git untouched; the diff for MCP Apps hosts
// (diffMeta) through the tool handler; revert and its PATCH_CONFLICT.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { APP_TOOLS, ALL_TOOLS } from '../../src/tools/registry.js';
import { DIFF_META_KEY, MAX_META_HUNK_BYTES, type DiffMeta } from '../../src/tools/changes/diff-meta.js';
import { MAX_SNAPSHOT_FILES } from '../../src/git/review-plain.js';
import type { ToolContext } from '../../src/tools/define.js';

const all: Array<{ close(): Promise<void> } | TempWorkspace> = [];
afterAll(async () => {
  for (const x of all.reverse()) {
    if ('cleanup' in x) x.cleanup();
    else await x.close();
  }
});

/** `inMemory` for a tree of thousands of files (made in a tenth of the time on a tmpfs). */
async function setup(files: Record<string, string>, gitRepo: boolean, inMemory = false) {
  const ws = makeWorkspace(files, { git: gitRepo, inMemory });
  all.push(ws);
  if (gitRepo) {
    git(ws.dir, 'add', '-A');
    git(ws.dir, 'commit', '-q', '-m', 'base');
  }
  const srv = await startInProcess({ workspace: ws.dir });
  all.push(srv);
  return { ws, srv };
}

const show = async (srv: InProcessServer, args: Record<string, unknown> = {}) => {
  const r = await callTool(srv.url, 'show_changes', args);
  if (r.isError) throw new Error(r.content[0]?.text);
  return { s: r.structuredContent, text: r.content[0]!.text! };
};

/** Every file under `dir` with its size and mtime: what "nothing written" is checked against. */
function treeState(dir: string): string {
  const out: string[] = [];
  const visit = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else {
        const st = statSync(p);
        out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      }
    }
  };
  visit(dir);
  return out.join('\n');
}

/** The paths of show_changes' file lines (`M a.txt +1`, `R from -> to`: the path it has now). */
function pathsOf(files: unknown): string[] {
  return (files as string[]).map(
    (l) => (l.includes(' -> ') ? l.split(' -> ')[1]! : l.slice(2)).split(' ')[0]!,
  );
}

/** The handler of a tool run with the server's own services, as the protocol layer runs it. */
function handlerCall(srv: InProcessServer, name: string, args: unknown, ui: boolean) {
  const tool = [...ALL_TOOLS, ...APP_TOOLS].find((t) => t.name === name)!;
  const ctx = {
    runtime: srv.runtime,
    principal: { kind: 'test', id: 't' },
    signal: new AbortController().signal,
    ui,
  } as unknown as ToolContext;
  return tool.call(args, ctx);
}

describe('show_changes in a git repository', () => {
  it('sees apply_patch, edit_file and a command; a second call reports nothing new; since moves nothing', async () => {
    const { ws, srv } = await setup(
      { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n', 'old.txt': 'rename me\n'.repeat(5) },
      true,
    );
    const refsBefore = git(ws.dir, 'for-each-ref', 'refs/heads', 'refs/remotes', 'refs/tags');
    const gitBefore = treeState(path.join(ws.dir, '.git'));
    const first = await show(srv);
    expect(first.s.first).toBe('HEAD');
    expect(first.s.files).toBeUndefined();
    const p1 = first.s.point as string;

    const patch = await callTool(srv.url, 'apply_patch', {
      patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n+three\n*** End Patch\n',
    });
    expect(patch.isError).toBe(false);
    expect(
      (await callTool(srv.url, 'edit_file', { path: 'new.txt', old_string: '', new_string: 'n\n' })).isError,
    ).toBe(false);
    const cmd = await callTool(srv.url, 'exec_command', {
      cmd: 'rm b.txt && mv old.txt moved.txt',
      yield_time_ms: 10000,
    });
    expect(cmd.isError).toBe(false);
    expect(existsSync(path.join(ws.dir, 'moved.txt'))).toBe(true);

    const second = await show(srv);
    expect(second.s.since).toBe(p1);
    const p2 = second.s.point as string;
    expect(p2).not.toBe(p1);
    expect(second.s.files).toEqual(['M a.txt +2 -1', 'D b.txt -1', 'R old.txt -> moved.txt', 'A new.txt +1']);
    expect(second.s.totals).toEqual({ files: 4, added: 3, removed: 2 });
    expect(second.text).toContain('R old.txt -> moved.txt');

    const third = await show(srv);
    expect(third.s.files).toBeUndefined();
    expect(third.s.point).toBe(p2);
    expect(third.text).toContain('Nothing new');

    ws.write('a.txt', 'changed again\n');
    const look = await show(srv, { since: p1 });
    expect(look.s.point).toBe('now');
    expect(pathsOf(look.s.files)).toEqual(['a.txt', 'b.txt', 'moved.txt', 'new.txt']);
    // `since` moved nothing: the next plain call compares with p2 still.
    const after = await show(srv);
    expect(after.s.since).toBe(p2);
    expect(after.s.files).toEqual(['M a.txt +1 -3']);

    // The user's branches, tags and remotes, and everything in .git, untouched by the points.
    expect(git(ws.dir, 'for-each-ref', 'refs/heads', 'refs/remotes', 'refs/tags')).toBe(refsBefore);
    expect(git(ws.dir, 'log', '--all', '--format=%H')).toBe(git(ws.dir, 'log', '--format=%H'));
    expect(treeState(path.join(ws.dir, '.git'))).toBe(gitBefore);
    // The points' refs live in the runtime directory's private repository.
    const priv = path.join(srv.runtime.dirs.root, 'review', 'git');
    expect(readdirSync(path.join(priv, 'refs', 'workbench', 'review')).sort()).toContain(p2);
    // Each point is a real commit there (git reads it, its parent the point before, its tree the work tree's).
    const pg = (...a: string[]) => git(ws.dir, '--git-dir', priv, ...a).trim();
    expect(pg('cat-file', '-t', `refs/workbench/review/${p2}`)).toBe('commit');
    expect(pg('rev-parse', `refs/workbench/review/${p2}^`)).toBe(
      pg('rev-parse', `refs/workbench/review/${p1}`),
    );
    const env = { ...process.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(ws.dir, '.git', 'objects') };
    const files = execFileSync(
      'git',
      ['--git-dir', priv, 'ls-tree', '-r', '--name-only', `refs/workbench/review/${p2}`],
      {
        env,
      },
    ).toString();
    expect(files.split('\n').filter(Boolean).sort()).toEqual(['a.txt', 'moved.txt', 'new.txt']);
  }, 60_000);

  it('an unknown point is REVIEW_POINT_UNKNOWN with the next step', async () => {
    const { srv } = await setup({ 'a.txt': 'a\n' }, true);
    const r = await callTool(srv.url, 'show_changes', { since: 'r9-zzzz' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.code).toBe('REVIEW_POINT_UNKNOWN');
    expect(r.content[0]!.text).toContain('Call show_changes without since');
  }, 30_000);

  it('a 20-file change reads in at most 1 KB; the full patch goes to _meta only when asked', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`src/module/file${String(i).padStart(2, '0')}.ts`] = 'x\n'.repeat(50);
    files['big.txt'] = 'line\n'.repeat(10);
    const { ws, srv } = await setup(files, true);
    await show(srv);
    for (let i = 0; i < 20; i++)
      ws.write(`src/module/file${String(i).padStart(2, '0')}.ts`, 'y\n' + 'x\n'.repeat(49));
    const plain = await handlerCall(srv, 'show_changes', {}, false);
    expect(plain.meta).toBeUndefined();
    expect(Buffer.byteLength(plain.text)).toBeLessThanOrEqual(1024);
    // Claude Code and Codex show the model the structured result: it is as short.
    expect(Buffer.byteLength(JSON.stringify(plain.structured))).toBeLessThanOrEqual(1024);
    expect((plain.structured as { files: string[] }).files).toHaveLength(20);
    const p = plain.structured as { point: string; since: string };
    const again = await handlerCall(srv, 'show_changes', { since: p.since, point: p.point }, true);
    const meta = again.meta?.[DIFF_META_KEY] as DiffMeta;
    expect(meta.files).toHaveLength(20);
    expect(meta.files[0]!.hunks).toMatch(/^@@ -1,4 \+1,4 @@\n-x\n\+y\n/);
    expect(meta.cut).toBeUndefined();
    // A diff over 256 KiB of hunks is cut, and cut.next returns the rest.
    ws.write('big.txt', 'a fairly long changed line of text\n'.repeat(12_000));
    const big = await handlerCall(srv, 'show_changes', {}, true);
    const m1 = big.meta?.[DIFF_META_KEY] as DiffMeta;
    expect(m1.files[0]).toMatchObject({ path: 'big.txt', cut: true });
    expect(m1.cut!.shownBytes).toBeLessThanOrEqual(MAX_META_HUNK_BYTES);
    expect(m1.cut!.next.arguments).toMatchObject({ since: m1.since, point: m1.point });
    let text = m1.files[0]!.hunks;
    let next: DiffMeta['cut'] = m1.cut;
    while (next) {
      const r = await handlerCall(srv, 'show_changes', next.next.arguments, true);
      const m = r.meta?.[DIFF_META_KEY] as DiffMeta;
      text += m.files.find((f) => f.path === 'big.txt')?.hunks ?? '';
      next = m.cut;
    }
    expect(Buffer.byteLength(text)).toBe(m1.cut!.totalBytes);
    expect(text.split('\n').filter((l) => l.startsWith('+')).length).toBe(12_000);
  }, 60_000);
});

describe('show_changes in a directory without git', () => {
  it('the first call makes a point; then it sees every change, renames by content', async () => {
    const { ws, srv } = await setup(
      { 'a.txt': 'one\n', 'b.txt': 'b\n', 'keep.txt': 'some content to move\n' },
      false,
    );
    const first = await show(srv);
    expect(first.s.first).toBe('nothing');
    expect(first.s.files).toBeUndefined();
    await callTool(srv.url, 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'uno' });
    await callTool(srv.url, 'exec_command', {
      cmd: 'rm b.txt; mv keep.txt kept.txt; printf "c\\n" > c.txt',
      yield_time_ms: 10000,
    });
    const second = await show(srv);
    expect(second.s.since).toBe(first.s.point);
    expect(second.s.files).toEqual(['M a.txt +1 -1', 'D b.txt -1', 'A c.txt +1', 'R keep.txt -> kept.txt']);
    expect((await show(srv)).s.files).toBeUndefined();
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('uno\n');
  }, 60_000);

  it(`past ${MAX_SNAPSHOT_FILES} files the answer is REVIEW_TOO_LARGE, naming git init`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i <= MAX_SNAPSHOT_FILES; i++) files[`d${i % 50}/f${i}.txt`] = `${i}\n`;
    const { srv } = await setup(files, false, true);
    const r = await callTool(srv.url, 'show_changes', {});
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.code).toBe('REVIEW_TOO_LARGE');
    expect(r.content[0]!.text).toContain('git init');
  }, 60_000);
});

describe('revert_changes', () => {
  for (const gitRepo of [true, false]) {
    it(`restores a point (adds, deletes, renames) and refuses unreviewed work (${gitRepo ? 'git' : 'no git'})`, async () => {
      const { ws, srv } = await setup(
        { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'move me around\n' },
        gitRepo,
      );
      const p1 = (await show(srv)).s.point as string;
      ws.write('a.txt', 'A\n');
      ws.write('new.txt', 'new\n');
      await callTool(srv.url, 'exec_command', { cmd: 'rm b.txt; mv c.txt d.txt', yield_time_ms: 10000 });
      await show(srv); // reviewed: p2
      ws.write('new.txt', 'not reviewed\n');
      const refused = await handlerCall(srv, 'revert_changes', { point: p1 }, false).catch((e) => e);
      expect(refused.code).toBe('PATCH_CONFLICT');
      expect(refused.message).toContain('new.txt');
      expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('A\n');
      await show(srv); // p3 reviews it
      const done = await handlerCall(srv, 'revert_changes', { point: p1 }, false);
      expect(done.text).toContain('Restored 5 file(s)');
      expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('a\n');
      expect(readFileSync(path.join(ws.dir, 'b.txt'), 'utf8')).toBe('b\n');
      expect(readFileSync(path.join(ws.dir, 'c.txt'), 'utf8')).toBe('move me around\n');
      expect(existsSync(path.join(ws.dir, 'd.txt'))).toBe(false);
      expect(existsSync(path.join(ws.dir, 'new.txt'))).toBe(false);
      // A revert is an edit: the console's journal keeps it.
      expect(srv.runtime.edits?.list().at(-1)?.tool).toBe('revert_changes');
      // And what show_changes sees next is the revert (d.txt back to c.txt is one rename).
      const after = await show(srv);
      expect(pathsOf(after.s.files)).toEqual(['a.txt', 'b.txt', 'c.txt', 'new.txt']);
    }, 60_000);
  }

  it('refuses with PATCH_FAILED, writing nothing, a revert that would write a symlink (git)', async () => {
    const { ws, srv } = await setup({ 'a.txt': 'a\n' }, true);
    const p1 = (await show(srv)).s.point as string;
    ws.write('a.txt', 'A\n');
    symlinkSync('a.txt', path.join(ws.dir, 'link'));
    await show(srv);
    const refused = await handlerCall(srv, 'revert_changes', { point: p1 }, false).catch((e) => e);
    expect(refused.code).toBe('PATCH_FAILED');
    expect(refused.message).toContain('link is a symlink');
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('A\n');
  }, 60_000);
});
