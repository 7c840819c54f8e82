// A confinement attack on git (docs/design-notes.md#git-hardening): a repository's git directory, common
// directory, object store and everything git reads through them must lie inside the workspace, else GIT_ERROR
// with no outside byte in the result. Real repositories in temp dirs: an outside repository whose commit
// message and file hold marker strings; each attack is first shown to work under plain git, then all five
// tools refuse it.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oweCheck, runGit } from '../../src/git/run.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const SECRET_MSG = 'OUTSIDE-SECRET-COMMIT-7f3a';
const SECRET_BODY = 'OUTSIDE-SECRET-CONTENT-91c2';

let outside: TempWorkspace; // the repository an attacker points at
let outsideSha: string;
let ws: TempWorkspace;
let srv: InProcessServer;

/** Plain git (no hardening, no pinning) in `cwd`: what git itself would show. */
const plain = (cwd: string, ...args: string[]) => git(cwd, ...args);

/** Every tool, aimed at `dir` (a directory in the workspace holding `s.txt`). */
function callsFor(dir: string): Array<[string, Record<string, unknown>]> {
  return [
    ['git_log', { path: dir }],
    ['git_log', { path: `${dir}/s.txt` }],
    ['git_show', { paths: [dir] }],
    ['git_show', { rev: 'HEAD:s.txt', paths: [`${dir}/s.txt`] }],
    ['git_diff', { path: dir }],
    ['git_diff', { path: `${dir}/s.txt`, staged: true }],
    ['git_status', { path: dir }],
    ['git_blame', { path: `${dir}/s.txt` }],
    ['git_blame', { path: `${dir}/s.txt`, rev: 'HEAD' }],
  ];
}

/** Each call is GIT_ERROR whose message names `expect`, and no outside byte or path appears anywhere. */
async function allRefused(dir: string, expectMsg: RegExp): Promise<void> {
  for (const [tool, args] of callsFor(dir)) {
    const r = await callTool(srv.url, tool, args);
    const label = `${tool} ${JSON.stringify(args)}`;
    expect(r.isError, label).toBe(true);
    expect(r.structuredContent.error.code, label).toBe('GIT_ERROR');
    expect(r.structuredContent.error.message, label).toMatch(expectMsg);
    const all = JSON.stringify(r);
    for (const leak of [SECRET_MSG, SECRET_BODY, outsideSha, outside.dir]) {
      expect(all, `${label} leaks ${leak}`).not.toContain(leak);
    }
  }
}

beforeAll(async () => {
  outside = makeWorkspace({ 's.txt': `${SECRET_BODY}\n` }, { git: true });
  git(outside.dir, 'add', '-A');
  git(outside.dir, 'commit', '-q', '-m', SECRET_MSG);
  outsideSha = git(outside.dir, 'rev-parse', 'HEAD').trim();
  ws = makeWorkspace({ 'README.md': '# not a repository\n' });
  srv = await startInProcess({ workspace: ws.dir });
});

afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
  outside?.cleanup();
});

describe('a .git file or symlink leading to an outside repository (docs/design-notes.md#git-hardening)', () => {
  it('ev2/.git containing "gitdir: /outside/repo/.git": every git tool refuses, nothing outside shows', async () => {
    ws.write('ev2/s.txt', 'inside\n');
    ws.write('ev2/.git', `gitdir: ${path.join(outside.dir, '.git')}\n`);
    expect(plain(path.join(ws.dir, 'ev2'), 'log', '-1')).toContain(SECRET_MSG); // the attack is real
    await allRefused('ev2', /git directory .* resolves outside the workspace/);
  });

  it('a relative "gitdir: ../../outside/.git" is refused the same way', async () => {
    ws.write('ev3/s.txt', 'inside\n');
    ws.write(
      'ev3/.git',
      `gitdir: ${path.relative(path.join(ws.dir, 'ev3'), path.join(outside.dir, '.git'))}\n`,
    );
    expect(plain(path.join(ws.dir, 'ev3'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('ev3', /resolves outside the workspace/);
  });

  it('ev4/.git as a symlink to the outside .git directory is refused', async () => {
    ws.write('ev4/s.txt', 'inside\n');
    symlinkSync(path.join(outside.dir, '.git'), path.join(ws.dir, 'ev4', '.git'));
    expect(plain(path.join(ws.dir, 'ev4'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('ev4', /resolves outside the workspace/);
  });
});

describe('linked worktrees whose git or common directory is outside (docs/design-notes.md#git-hardening)', () => {
  it('a worktree of the outside repository placed in the workspace (gitdir in its worktrees/x) is refused', async () => {
    git(outside.dir, 'worktree', 'add', '-q', '--detach', path.join(ws.dir, 'wt1'));
    expect(plain(path.join(ws.dir, 'wt1'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('wt1', /resolves outside the workspace/);
  });

  it('a worktree git directory copied inside, whose commondir points outside, is refused', async () => {
    const wtSrc = path.join(mkdtempSync(path.join(tmpdir(), 'wb-wt-')), 'wt-src');
    git(outside.dir, 'worktree', 'add', '-q', '--detach', wtSrc);
    const src = path.join(outside.dir, '.git', 'worktrees', 'wt-src');
    const gd = path.join(ws.dir, 'wtgd');
    cpSync(src, gd, { recursive: true });
    writeFileSync(path.join(gd, 'commondir'), `${path.join(outside.dir, '.git')}\n`);
    ws.write('wt2/s.txt', 'inside\n');
    ws.write('wt2/.git', `gitdir: ${gd}\n`);
    writeFileSync(path.join(gd, 'gitdir'), `${path.join(ws.dir, 'wt2', '.git')}\n`);
    expect(plain(path.join(ws.dir, 'wt2'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('wt2', /common directory .* resolves outside the workspace/);
    rmSync(path.dirname(wtSrc), { recursive: true, force: true });
  });
});

describe('object stores reaching outside (alternates, http-alternates, symlinks)', () => {
  /** A repository in the workspace whose main branch is the outside commit, objects supplied by `arm`. */
  function borrowing(dir: string, arm: (objects: string) => void): void {
    const abs = path.join(ws.dir, dir);
    mkdirSync(abs, { recursive: true });
    git(abs, 'init', '-q', '-b', 'main');
    ws.write(`${dir}/s.txt`, 'inside\n');
    arm(path.join(abs, '.git', 'objects'));
    writeFileSync(path.join(abs, '.git', 'refs', 'heads', 'main'), `${outsideSha}\n`);
  }

  it('objects/info/alternates naming the outside object directory is refused', async () => {
    mkdirSync(path.join(ws.dir, 'alt1'));
    git(path.join(ws.dir, 'alt1'), 'init', '-q', '-b', 'main');
    ws.write('alt1/.git/objects/info/alternates', `${path.join(outside.dir, '.git', 'objects')}\n`);
    git(path.join(ws.dir, 'alt1'), 'update-ref', 'refs/heads/main', outsideSha);
    ws.write('alt1/s.txt', 'inside\n');
    expect(plain(path.join(ws.dir, 'alt1'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('alt1', /alternates names an alternate object directory outside the workspace/);
  });

  it('alternates of an inside alternate that name the outside one are refused (git follows them)', async () => {
    borrowing('alt2', (objects) => {
      const hop = path.join(ws.dir, 'hop', 'objects');
      mkdirSync(path.join(hop, 'info'), { recursive: true });
      writeFileSync(path.join(hop, 'info', 'alternates'), `${path.join(outside.dir, '.git', 'objects')}\n`);
      writeFileSync(path.join(objects, 'info', 'alternates'), `../../../hop/objects\n`);
    });
    expect(plain(path.join(ws.dir, 'alt2'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('alt2', /hop\/objects\/info\/alternates names an alternate object directory outside/);
  });

  it('objects/info/http-alternates naming an outside directory or a URL is refused', async () => {
    borrowing('alt3', (objects) => {
      writeFileSync(
        path.join(objects, 'info', 'http-alternates'),
        `${path.join(outside.dir, '.git', 'objects')}\n`,
      );
    });
    await allRefused('alt3', /http-alternates names an object directory outside the workspace/);
    writeFileSync(path.join(ws.dir, 'alt3/.git/objects/info/http-alternates'), 'https://example.invalid/o\n');
    await allRefused('alt3', /http-alternates/);
  });

  it('a symlinked objects/pack (or objects) directory leading outside is refused', async () => {
    git(outside.dir, 'gc', '-q'); // the outside commit now lives in a pack
    borrowing('sym1', (objects) => {
      rmSync(path.join(objects, 'pack'), { recursive: true, force: true });
      symlinkSync(path.join(outside.dir, '.git', 'objects', 'pack'), path.join(objects, 'pack'));
    });
    expect(plain(path.join(ws.dir, 'sym1'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('sym1', /sym1\/\.git\/objects\/pack is a symlink that leads outside the workspace/);
    borrowing('sym2', (objects) => {
      rmSync(objects, { recursive: true, force: true });
      symlinkSync(path.join(outside.dir, '.git', 'objects'), objects);
    });
    expect(plain(path.join(ws.dir, 'sym2'), 'log', '-1')).toContain(SECRET_MSG);
    await allRefused('sym2', /objects leads outside the workspace/);
  });
});

describe('docs/design-notes.md#git-hardening: repositories whose git data is all inside the workspace still work', () => {
  it('a linked worktree and a --shared clone inside the workspace are read normally', async () => {
    const main = path.join(ws.dir, 'good');
    mkdirSync(main);
    git(main, 'init', '-q', '-b', 'main');
    ws.write('good/s.txt', 'good\n');
    git(main, 'add', '-A');
    git(main, 'commit', '-q', '-m', 'inside commit');
    git(main, 'worktree', 'add', '-q', '--detach', path.join(ws.dir, 'good-wt'));
    git(ws.dir, 'clone', '-q', '--shared', main, path.join(ws.dir, 'good-clone'));
    for (const dir of ['good', 'good-wt', 'good-clone']) {
      const log = await callTool(srv.url, 'git_log', { path: dir });
      expect(log.isError, `${dir}: ${log.content[0]?.text}`).toBe(false);
      expect(log.structuredContent.commits[0].subject).toBe('inside commit');
      const bl = await callTool(srv.url, 'git_blame', { path: `${dir}/s.txt` });
      expect(bl.structuredContent.lines[0]).toMatchObject({ content: 'good' });
    }
  });
});

describe('docs/design-notes.md#git-hardening: a workspace that is a subdirectory of a larger repository', () => {
  it('every git tool answers GIT_ERROR saying so, and shows nothing of the repository', async () => {
    const parent = makeWorkspace({ 'top.txt': 't\n', 'pkg/s.txt': 'p\n' }, { git: true });
    git(parent.dir, 'add', '-A');
    git(parent.dir, 'commit', '-q', '-m', 'PARENT-COMMIT-SUBJECT');
    parent.write('pkg/s.txt', 'changed\n');
    const inner = await startInProcess({ workspace: path.join(parent.dir, 'pkg') });
    try {
      for (const [tool, args] of [
        ['git_status', {}],
        ['git_diff', {}],
        ['git_log', { path: 's.txt' }],
        ['git_show', {}],
        ['git_blame', { path: 's.txt' }],
      ] as Array<[string, Record<string, unknown>]>) {
        const r = await callTool(inner.url, tool, args);
        expect(r.structuredContent.error?.code, tool).toBe('GIT_ERROR');
        expect(r.structuredContent.error.message).toMatch(
          /workspace is a subdirectory of the git repository/,
        );
        expect(JSON.stringify(r)).not.toContain('PARENT-COMMIT-SUBJECT');
      }
    } finally {
      await inner.close();
      parent.cleanup();
    }
  });
});

describe('pinning (git/run GitPin): git uses the checked directories, not what .git says at run time', () => {
  it('with the pin of a checked repository, a .git file pointing elsewhere is not followed', async () => {
    const main = path.join(ws.dir, 'pinned');
    mkdirSync(main);
    git(main, 'init', '-q', '-b', 'main');
    ws.write('pinned/s.txt', 'p\n');
    git(main, 'add', '-A');
    git(main, 'commit', '-q', '-m', 'pinned commit');
    const gitDir = path.join(main, '.git');
    // The .git entry is replaced after the check by a gitfile to the outside repository.
    rmSync(path.join(ws.dir, 'pinned-moved'), { recursive: true, force: true });
    cpSync(gitDir, path.join(ws.dir, 'pinned-moved'), { recursive: true });
    rmSync(gitDir, { recursive: true });
    writeFileSync(gitDir, `gitdir: ${path.join(outside.dir, '.git')}\n`);
    const moved = path.join(ws.dir, 'pinned-moved');
    const pin = { gitDir: moved, commonDir: moved, objectsDir: path.join(moved, 'objects'), workTree: main };
    const r = await runGit(srv.runtime, ['log', '-1', '--format=%s'], { cwd: main, pin, filterArgs: [] });
    expect(r.stdout.toString().trim()).toBe('pinned commit');
    const unpinned = await runGit(srv.runtime, ['log', '-1', '--format=%s'], {
      cwd: main,
      pin: null,
      filterArgs: [],
    });
    // What the pin prevents; in the jail (process/jail/jail.ts) the outside repository does not even exist.
    if (srv.runtime.jail.status().in_use) expect(unpinned.stdout.toString()).not.toContain(SECRET_MSG);
    else expect(unpinned.stdout.toString()).toContain(SECRET_MSG);
  });
});

describe('the walk of the git directories owed by a pin (git/run oweCheck), done once by the first git run', () => {
  const repo = () => {
    const main = path.join(ws.dir, 'owed');
    if (!existsSync(path.join(main, '.git'))) {
      mkdirSync(main, { recursive: true });
      git(main, 'init', '-q', '-b', 'main');
      ws.write('owed/s.txt', 'o\n');
      git(main, 'add', '-A');
      git(main, 'commit', '-q', '-m', 'owed commit');
    }
    const gitDir = path.join(main, '.git');
    return {
      main,
      pin: { gitDir, commonDir: gitDir, objectsDir: path.join(gitDir, 'objects'), workTree: main },
    };
  };
  const refusal = () => Object.assign(new Error('OWED-CHECK-REFUSED'), { code: 'GIT_ERROR' });

  it('a failing check makes the run fail with it and git output is never returned; it is asked once per pin', async () => {
    const { main, pin } = repo();
    let asked = 0;
    oweCheck(pin, () => {
      asked++;
      throw refusal();
    });
    const run = runGit(srv.runtime, ['log', '-1', '--format=%s'], { cwd: main, pin, filterArgs: [] });
    await expect(run).rejects.toThrow('OWED-CHECK-REFUSED');
    expect(asked).toBe(1);
    // Owed once: the next run of the same pin owes nothing more.
    const again = await runGit(srv.runtime, ['log', '-1', '--format=%s'], { cwd: main, pin, filterArgs: [] });
    expect(again.stdout.toString().trim()).toBe('owed commit');
    expect(asked).toBe(1);
  });

  it('a passing check lets the output through, whether git ran beside it (in a jail) or after it', async () => {
    const { main, pin } = repo();
    let asked = 0;
    oweCheck(pin, () => void asked++);
    const r = await runGit(srv.runtime, ['log', '-1', '--format=%s'], { cwd: main, pin, filterArgs: [] });
    expect(r.stdout.toString().trim()).toBe('owed commit');
    expect(asked).toBe(1);
  });

  it('a run that writes waits for the check: refused, git never started and wrote nothing', async () => {
    const { main, pin } = repo();
    const scratch = mkdtempSync(path.join(tmpdir(), 'wb-owed-'));
    try {
      oweCheck(pin, () => {
        throw refusal();
      });
      const target = path.join(scratch, 'made-by-git.tar');
      const archive = ['archive', '--format=tar', '-o', target, 'HEAD'];
      const run = runGit(srv.runtime, archive, { cwd: main, pin, filterArgs: [], writable: scratch });
      await expect(run).rejects.toThrow('OWED-CHECK-REFUSED');
      expect(existsSync(target)).toBe(false);
      // The same run without an owed check writes: the refusal above is what stopped it.
      const r = await runGit(srv.runtime, archive, { cwd: main, pin, filterArgs: [], writable: scratch });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(target)).toBe(true);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
