// docs/design-notes.md#git-hardening ("path may name a file"): git_status shows an untracked directory
// as "dir/", as git prints it, so a model can tell it from a file; git_status, git_diff and git_log take a
// file as path and limit the command to that file (also one that exists only in history). Real repository,
// real in-process HTTP server.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let srv: InProcessServer;
const commitAll = (msg: string) => {
  git(ws.dir, 'add', '-A');
  git(ws.dir, 'commit', '-q', '-m', msg);
};
const paths = (xs: Array<{ path: string }>) => xs.map((x) => x.path);

beforeAll(async () => {
  ws = makeWorkspace(
    {
      'src/math.js': 'export const add = (a, b) => a + b;\n',
      'src/util.js': 'export const id = (x) => x;\n',
      'gone.txt': 'soon deleted\n',
    },
    { git: true },
  );
  commitAll('first');
  ws.write('src/math.js', 'export const add = (a, b) => a + b;\nexport const sub = (a, b) => a - b;\n');
  commitAll('math: sub');
  ws.write('src/util.js', 'export const id = (x) => x;\nexport const k = 1;\n');
  commitAll('util: k');
  rmSync(path.join(ws.dir, 'gone.txt'));
  commitAll('remove gone.txt');
  // Dirty state: both files changed, an untracked directory and an untracked file.
  ws.write('src/math.js', 'export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n');
  ws.write('src/util.js', 'export const id = (x) => x;\nexport const k = 2;\n');
  ws.write('newdir/inner/a.txt', 'a\n');
  ws.write('newdir/b.txt', 'b\n');
  ws.write('loose.txt', 'l\n');
  srv = await startInProcess({ workspace: ws.dir });
});

afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

describe('git_status: an untracked directory is "dir/"', () => {
  it('lists the directory once with a trailing slash, in structured and text, next to an untracked file', async () => {
    const r = await callTool(srv.url, 'git_status', {});
    expect(r.isError, r.content[0]?.text).toBe(false);
    const untracked = r.structuredContent.entries.filter((e: { code: string }) => e.code === '??');
    expect(paths(untracked).sort()).toEqual(['loose.txt', 'newdir/']);
    const text = r.content[0]!.text!;
    expect(text).toMatch(/^\?\? newdir\/$/m);
    expect(text).toMatch(/^\?\? loose\.txt$/m);
  });

  it('under a path the directory keeps its slash and its workspace-relative name', async () => {
    ws.write('src/fresh/x.js', 'x\n');
    try {
      const r = await callTool(srv.url, 'git_status', { path: 'src' });
      expect(paths(r.structuredContent.entries).sort()).toEqual(['src/fresh/', 'src/math.js', 'src/util.js']);
    } finally {
      rmSync(path.join(ws.dir, 'src/fresh'), { recursive: true });
    }
  });
});

describe('a file as path means "this file" (docs/design-notes.md#git-hardening)', () => {
  it('git_diff {path: "src/math.js"} shows that file only', async () => {
    const r = await callTool(srv.url, 'git_diff', { path: 'src/math.js' });
    expect(r.isError, r.content[0]?.text).toBe(false);
    expect(r.structuredContent.reason).toBeUndefined(); // a repository (git), not the since-start baseline
    expect(r.structuredContent.source).toBeUndefined();
    expect(paths(r.structuredContent.files)).toEqual(['src/math.js']);
    expect(r.structuredContent.diff).toContain('+export const mul');
    expect(r.structuredContent.diff).not.toContain('util');
  });

  it('git_log {path: "src/util.js"} lists only the commits that touched it', async () => {
    const r = await callTool(srv.url, 'git_log', { path: 'src/util.js' });
    expect(r.isError, r.content[0]?.text).toBe(false);
    const subjects = r.structuredContent.commits.map((c: { subject: string }) => c.subject);
    expect(subjects).toEqual(['util: k', 'first']);
    expect(r.content[0]!.text).toContain('[commits touching src/util.js]');
  });

  it('git_status {path: file} limits the listing to the file', async () => {
    const r = await callTool(srv.url, 'git_status', { path: 'src/math.js' });
    expect(r.isError, r.content[0]?.text).toBe(false);
    expect(paths(r.structuredContent.entries)).toEqual(['src/math.js']);
    expect(r.content[0]!.text).toContain('[limited to src/math.js]');
  });

  it('a file that exists only in history is still a path: git_log finds its commits', async () => {
    const r = await callTool(srv.url, 'git_log', { path: 'gone.txt' });
    expect(r.isError, r.content[0]?.text).toBe(false);
    const subjects = r.structuredContent.commits.map((c: { subject: string }) => c.subject);
    expect(subjects).toEqual(['remove gone.txt', 'first']);
    const none = await callTool(srv.url, 'git_log', { path: 'never-was.txt' });
    expect(none.structuredContent.commits).toBeUndefined();
    expect(none.content[0]!.text).toContain('never-was.txt does not exist in the working tree');
  });

  it('a path outside the workspace is still refused (docs/tools.md#paths)', async () => {
    for (const tool of ['git_status', 'git_diff', 'git_log']) {
      const r = await callTool(srv.url, tool, { path: '../x.txt' });
      expect(r.structuredContent.error.code, tool).toBe('PATH_OUTSIDE_WORKSPACE');
    }
  });
});
