// docs/tools.md#git: in a workspace that is not a repository, git_diff shows what apply_patch
// changed since start-up. Writers report a file through recordBeforeWrite (git/baseline) before changing it;
// here the test plays the writer on the server's own Runtime, then reads the diff over HTTP and checks that
// `git apply` turns a copy of the original tree into the current one.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBeforeWrite } from '../../src/git/baseline.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let srv: InProcessServer;
let original: string;
const many = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag} ${i}`.padEnd(40, '.')).join('\n') + '\n';

/** What apply_patch does, with the call its committer makes first. */
function patchWrite(rel: string, content: string | null): void {
  const abs = path.join(ws.dir, rel);
  recordBeforeWrite(srv.runtime, abs);
  if (content === null) unlinkSync(abs);
  else ws.write(rel, content);
}

beforeAll(async () => {
  ws = makeWorkspace({
    'src/app.ts': many(40, 'line'),
    'notes with space.txt': 'one\ntwo\nthree',
    'gone.txt': 'bye\n',
    'same.txt': 'unchanged\n',
    'img.bin': Buffer.from([0, 1, 2, 3]),
    'other/x.txt': 'x\n',
  });
  original = mkdtempSync(path.join(tmpdir(), 'wb-orig-'));
  cpSync(ws.dir, original, { recursive: true });
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
  rmSync(original, { recursive: true, force: true });
});

describe('git_diff outside a repository (changes made through apply_patch since start-up)', () => {
  it('is empty before anything changed', async () => {
    const r = await callTool(srv.url, 'git_diff', {});
    expect(r.structuredContent).toEqual({
      ok: true,
      reason: 'not inside a git repository',
      source: 'since_start',
    });
    expect(r.content[0]!.text).toContain('no changes since start-up');
  });

  it('shows modified, added, deleted and binary files as a diff git can apply', async () => {
    patchWrite(
      'src/app.ts',
      many(40, 'line')
        .replace(/^line 7\.+\n/m, 'line seven\n')
        .replace(/^line 30\.+\n/m, ''),
    );
    patchWrite('notes with space.txt', 'one\n2\nthree\n');
    patchWrite('new/dir/added.ts', 'export const added = true;\n');
    patchWrite('gone.txt', null);
    patchWrite('img.bin', '\0changed');
    patchWrite('same.txt', 'edited\n');
    patchWrite('same.txt', 'unchanged\n'); // changed back: no change to show; the second report is a no-op
    writeFileSync(path.join(ws.dir, 'other/x.txt'), 'changed without apply_patch\n'); // not reported: not shown

    const r = await callTool(srv.url, 'git_diff', {});
    const s = r.structuredContent;
    expect(s.source).toBe('since_start');
    expect(s.files.map((f: { path: string; kind: string }) => [f.path, f.kind])).toEqual([
      ['gone.txt', 'deleted'],
      ['img.bin', 'modified'],
      ['new/dir/added.ts', 'added'],
      ['notes with space.txt', 'modified'],
      ['src/app.ts', 'modified'],
    ]);
    expect(s.files.find((f: { path: string }) => f.path === 'src/app.ts')).toMatchObject({
      additions: 1,
      deletions: 2,
    });
    expect(s.files.find((f: { path: string }) => f.path === 'img.bin')).toMatchObject({ binary: true });
    expect(s.diff).toMatch(/-line 7\.+\n\+line seven\n/);
    expect(s.diff).toContain('-three\n\\ No newline at end of file\n');
    expect(s.diff).toContain('+three\n');
    expect(r.content[0]!.text).toContain('not in a git repository');

    // Apply the text diff (binary excluded) to the original tree: it must become the current tree.
    const textOnly = s.diff
      .split(/(?=^diff --git )/m)
      .filter((sec: string) => !sec.includes('Binary files'))
      .join('');
    writeFileSync(path.join(original, 'changes.diff'), textOnly);
    execFileSync('git', ['apply', 'changes.diff'], { cwd: original });
    for (const rel of ['src/app.ts', 'notes with space.txt', 'new/dir/added.ts']) {
      expect(readFileSync(path.join(original, rel), 'utf8'), rel).toBe(
        readFileSync(path.join(ws.dir, rel), 'utf8'),
      );
    }
    expect(() => readFileSync(path.join(original, 'gone.txt'))).toThrow();
  });

  it('path and paths filter the changes; staged-only has nothing outside a repository', async () => {
    const d = await callTool(srv.url, 'git_diff', { path: 'src' });
    expect(d.structuredContent.files.map((f: { path: string }) => f.path)).toEqual(['src/app.ts']);
    const p = await callTool(srv.url, 'git_diff', { paths: ['new', 'gone.txt'] });
    expect(p.structuredContent.files.map((f: { path: string }) => f.path)).toEqual([
      'gone.txt',
      'new/dir/added.ts',
    ]);
    const staged = await callTool(srv.url, 'git_diff', { staged: true, unstaged: false });
    expect(staged.structuredContent.files).toBeUndefined();
  });

  it('truncates by whole files and pages with next_action', async () => {
    const r = await callTool(srv.url, 'git_diff', { max_bytes: 1024, context_lines: 20 });
    expect(r.structuredContent.truncated).toBe(true);
    const next = r.structuredContent.next_action;
    expect(next.tool).toBe('git_diff');
    const page = await callTool(srv.url, 'git_diff', next.arguments);
    expect(page.structuredContent.files.length).toBeGreaterThan(0);
  });

  it('git_status points to git_diff; recordBeforeWrite ignores paths outside the workspace', async () => {
    recordBeforeWrite(srv.runtime, '/etc/hostname');
    recordBeforeWrite(srv.runtime, path.join(ws.dir, '..', 'elsewhere.txt'));
    const st = await callTool(srv.url, 'git_status', {});
    expect(st.structuredContent.reason).toBe('not inside a git repository');
    expect(st.content[0]!.text).toContain('5 file(s) were changed through apply_patch since start-up');
  });
});
