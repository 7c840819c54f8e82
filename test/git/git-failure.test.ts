// git/failure.ts: each GitFailure kind read from what real git prints (in the C.UTF-8 locale the git tools give
// every git process), so a git whose wording changed fails here rather than turning a NOT_FOUND into a
// GIT_ERROR in a tool.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyGitFailure, isMissingRevision } from '../../src/git/failure.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const cleanup: TempWorkspace[] = [];
const dirs: string[] = [];
afterAll(() => {
  cleanup.forEach((w) => w.cleanup());
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** A failing git run, as git/run hands it over: its stderr (and no timeout). */
function failing(cwd: string, ...args: string[]): { timedOut: boolean; stderr: string } {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CEILING_DIRECTORIES: path.dirname(cwd),
    },
  });
  expect(r.status, `git ${args.join(' ')} should fail`).not.toBe(0);
  return { timedOut: false, stderr: r.stderr };
}

function repo(files: Record<string, string>, commit = true): TempWorkspace {
  const ws = makeWorkspace(files, { git: true });
  cleanup.push(ws);
  if (commit) {
    git(ws.dir, 'add', '-A');
    git(ws.dir, 'commit', '-q', '-m', 'first');
  }
  return ws;
}

describe('classifyGitFailure on real git output', () => {
  it('a revision that does not exist, and a path missing from a revision', () => {
    const ws = repo({ 'a.txt': 'one\ntwo\n' });
    expect(classifyGitFailure(failing(ws.dir, 'log', 'no-such-branch', '--'))).toEqual({
      kind: 'unknown_revision',
      mentionsHead: false,
    });
    expect(classifyGitFailure(failing(ws.dir, 'show', 'HEAD:missing.txt')).kind).toBe('path_not_in_rev');
    expect(isMissingRevision(classifyGitFailure(failing(ws.dir, 'cat-file', '-t', 'HEAD:missing.txt')))).toBe(
      true,
    );
  });

  it('blame past the end names the line count; blame of a path not in HEAD is no_such_path', () => {
    const ws = repo({ 'a.txt': 'one\ntwo\n' });
    expect(classifyGitFailure(failing(ws.dir, 'blame', '--line-porcelain', '-L5,6', '--', 'a.txt'))).toEqual({
      kind: 'past_end',
      totalLines: 2,
    });
    expect(classifyGitFailure(failing(ws.dir, 'blame', 'HEAD', '--', 'gone.txt')).kind).toBe('no_such_path');
  });

  it('a repository without commits', () => {
    const ws = repo({ 'a.txt': 'x\n' }, false);
    const f = classifyGitFailure(failing(ws.dir, 'log'));
    // git says so in words, or (older versions) as an unknown HEAD
    expect(f.kind === 'no_commits' || (f.kind === 'unknown_revision' && f.mentionsHead)).toBe(true);
  });

  it('no repository, and a git directory that is not a work tree', () => {
    const plain = mkdtempSync(path.join(tmpdir(), 'wb-nogit-'));
    dirs.push(plain);
    mkdirSync(path.join(plain, 'sub'));
    expect(classifyGitFailure(failing(path.join(plain, 'sub'), 'rev-parse', '--show-toplevel')).kind).toBe(
      'not_repository',
    );
    const ws = repo({ 'a.txt': 'x\n' });
    expect(classifyGitFailure(failing(path.join(ws.dir, '.git'), 'rev-parse', '--show-toplevel')).kind).toBe(
      'not_work_tree',
    );
  });

  it('a timeout whatever git printed, and anything unrecognised as other', () => {
    expect(classifyGitFailure({ timedOut: true, stderr: 'fatal: bad revision' })).toEqual({
      kind: 'timeout',
    });
    const ws = repo({ 'a.txt': 'x\n' });
    expect(classifyGitFailure(failing(ws.dir, 'log', '--no-such-option')).kind).toBe('other');
  });
});
