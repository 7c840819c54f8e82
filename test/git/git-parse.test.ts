// docs/tools.md#git: the parsers behind the git tools (porcelain v2 status, numstat + diff headers, log
// records, blame --line-porcelain) on real git output, and the line diff used outside repositories, checked
// against git itself (git apply must reproduce the new text; the change count equals git's --minimal).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseStatusV2, shortCode } from '../../src/git/parse-status.js';
import { parseNumstatZ, splitNumstatPatch, splitPatch, unquoteC } from '../../src/git/parse-diff.js';
import { parseLog, LOG_FORMAT } from '../../src/git/parse-log.js';
import { parseBlamePorcelain } from '../../src/git/parse-blame.js';
import { unifiedHunks } from '../../src/git/line-diff.js';
import { parseFilterNames, filterOverrides, buildGitArgv } from '../../src/git/run.js';
import { validateRev } from '../../src/git/args.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const cleanup: TempWorkspace[] = [];
afterAll(() => cleanup.forEach((w) => w.cleanup()));

function repo(files: Record<string, string>): TempWorkspace {
  const ws = makeWorkspace(files, { git: true });
  cleanup.push(ws);
  git(ws.dir, 'add', '-A');
  git(ws.dir, 'commit', '-q', '-m', 'first');
  return ws;
}
const raw = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } });

describe('porcelain v2 status (-z)', () => {
  it('parses branch headers, ordinary, renamed, untracked entries with spaces and unicode', () => {
    const ws = repo({ 'a.txt': 'a\n', 'old name.txt': 'same content here\n', 'keep.txt': 'k\n' });
    ws.write('a.txt', 'changed\n');
    git(ws.dir, 'mv', 'old name.txt', 'nëw name.txt');
    ws.write('ünï code.txt', 'x\n');
    ws.write('keep.txt', 'k2\n');
    git(ws.dir, 'add', 'keep.txt');
    const out = raw(ws.dir, 'status', '--porcelain=v2', '-z', '--branch');
    const p = parseStatusV2(out);
    expect(p.cut).toBe(false);
    expect(p.branch?.head).toBe('main');
    expect(p.branch?.oid).toMatch(/^[0-9a-f]{40}$/);
    const byPath = new Map(p.entries.map((e) => [e.path, e]));
    expect(shortCode(byPath.get('a.txt')!)).toBe(' M');
    expect(shortCode(byPath.get('keep.txt')!)).toBe('M ');
    expect(byPath.get('nëw name.txt')).toMatchObject({
      kind: 'renamed',
      origPath: 'old name.txt',
      score: 100,
    });
    expect(byPath.get('ünï code.txt')).toMatchObject({ kind: 'untracked' });
  });

  it('drops a record cut by the output bound instead of inventing a path', () => {
    const full = '# branch.oid (initial)\0# branch.head main\0? one.txt\0? two.txt\0';
    const cut = full.slice(0, full.length - 4);
    const p = parseStatusV2(cut);
    expect(p.branch).toMatchObject({ oid: null, head: 'main' });
    expect(p.entries.map((e) => e.path)).toEqual(['one.txt']);
    expect(p.cut).toBe(true);
  });
});

describe('numstat -z and diff headers', () => {
  it('pairs numstat records with patch sections, renames and binary included', () => {
    const ws = repo({ 'a b.txt': '1\n2\n3\n', 'mv me.txt': 'same\nsame\nsame\n', 'bin.dat': '\0\x01' });
    ws.write('a b.txt', '1\nTWO\n3\n');
    git(ws.dir, 'mv', 'mv me.txt', 'mövéd.txt');
    ws.write('bin.dat', '\0\x02');
    git(ws.dir, 'add', '-A');
    const num = parseNumstatZ(raw(ws.dir, 'diff', '--cached', '-M', '--numstat', '-z'));
    expect(num.cut).toBe(false);
    const byPath = new Map(num.entries.map((e) => [e.path, e]));
    expect(byPath.get('a b.txt')).toMatchObject({ additions: 1, deletions: 1 });
    expect(byPath.get('mövéd.txt')).toMatchObject({ oldPath: 'mv me.txt', additions: 0, deletions: 0 });
    expect(byPath.get('bin.dat')).toMatchObject({ additions: null, deletions: null });
    const sections = splitPatch(raw(ws.dir, 'diff', '--cached', '-M').toString('utf8'));
    expect(sections.map((s) => s.path).sort()).toEqual(['a b.txt', 'bin.dat', 'mövéd.txt']);
    expect(sections.find((s) => s.path === 'bin.dat')).toMatchObject({ binary: true });
    expect(sections.find((s) => s.path === 'mövéd.txt')).toMatchObject({ kind: 'renamed' });
  });

  it('unquotes C-style paths', () => {
    expect(unquoteC('"b/\\303\\274 \\"q\\".txt"')).toBe('b/ü "q".txt');
    expect(unquoteC('plain')).toBe('plain');
  });
});

describe('log records (NUL-separated)', () => {
  it('parses every field, multi-line bodies and merges', () => {
    const ws = repo({ 'a.txt': 'a\n' });
    ws.write('a.txt', 'b\n');
    git(ws.dir, 'commit', '-qam', 'second subject\n\nbody line 1\nbody line 2\n');
    const out = raw(ws.dir, 'log', '-z', `--format=${LOG_FORMAT}`);
    const { commits, cut } = parseLog(out);
    expect(cut).toBe(false);
    expect(commits).toHaveLength(2);
    expect(commits[0]).toMatchObject({
      subject: 'second subject',
      body: 'body line 1\nbody line 2',
      author: { name: 'test', email: 'test@localhost' },
    });
    expect(commits[0]!.refs).toContain('HEAD -> main');
    expect(commits[1]!.parents).toEqual([]);
    expect(commits[0]!.parents).toEqual([commits[1]!.sha]);
  });
});

describe('blame --line-porcelain', () => {
  it('reports commit, author and content per line, uncommitted lines included', () => {
    const ws = repo({ 'f.txt': 'one\ntwo\nthree\n' });
    ws.write('f.txt', 'one\nTWO\nthree\n\tindented\n');
    const out = raw(ws.dir, 'blame', '--line-porcelain', '--', 'f.txt');
    const lines = parseBlamePorcelain(out, 'f.txt');
    expect(lines.map((l) => l.content)).toEqual(['one', 'TWO', 'three', '\tindented']);
    expect(lines[0]).toMatchObject({ line: 1, author: 'test', uncommitted: false, orig_path: null });
    expect(lines[1]).toMatchObject({ line: 2, uncommitted: true });
  });
});

describe('hardening argv', () => {
  it('disables every filter driver the config names, and refuses names it cannot override', () => {
    const names = parseFilterNames(
      Buffer.from('filter.lfs.clean\ngit-lfs clean\0filter.My.Dots.process\nx\0'),
    );
    expect([...names]).toEqual(['lfs', 'My.Dots']);
    const argv = buildGitArgv(filterOverrides(names), ['status']);
    expect(argv).toEqual(
      expect.arrayContaining([
        'core.fsmonitor=false',
        'core.hooksPath=/dev/null',
        'diff.external=',
        'filter.lfs.clean=',
        'filter.My.Dots.process=',
      ]),
    );
    expect(argv.at(-1)).toBe('status');
    expect(() => filterOverrides(['a=b'])).toThrow(/cannot be disabled/);
  });

  it('refuses revisions that could be read as options or hold control characters', () => {
    for (const bad of ['--output=/tmp/x', '-p', 'HEAD\n', 'a\x00b', ''])
      expect(() => validateRev(bad, 'rev', 'git_show')).toThrow();
    expect(validateRev('main..feature', 'ref', 'git_log')).toBe('main..feature');
  });
});

describe('line diff (non-repository git_diff)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-linediff-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Deterministic pseudo-random texts over a small alphabet of lines, so there are many equal lines.
  let seed = 12345;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
  const text = (n: number) => {
    const lines = Array.from({ length: n }, () => `l${rnd(6)}`);
    return lines.join('\n') + (rnd(4) === 0 ? '' : n ? '\n' : '');
  };

  it('produces patches git applies exactly, as small as git --minimal', () => {
    let applied = 0;
    for (let i = 0; i < 60; i++) {
      const a = text(rnd(25));
      const b = rnd(5) === 0 ? a + 'tail' : text(rnd(25));
      const hunks = unifiedHunks(a, b, rnd(4));
      if (a === b) {
        expect(hunks).toBe('');
        continue;
      }
      writeFileSync(path.join(dir, 'f.txt'), a);
      writeFileSync(path.join(dir, 'b.txt'), b);
      const patch = `diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n${hunks}`;
      writeFileSync(path.join(dir, 'p.diff'), patch);
      execFileSync('git', ['apply', '--unidiff-zero', 'p.diff'], { cwd: dir });
      expect(readFileSync(path.join(dir, 'f.txt'), 'utf8')).toBe(b);
      applied++;
      writeFileSync(path.join(dir, 'f.txt'), a);
      let ns = '';
      try {
        execFileSync('git', ['diff', '--no-index', '--minimal', '--numstat', 'f.txt', 'b.txt'], { cwd: dir });
      } catch (e) {
        ns = String((e as { stdout: Buffer }).stdout);
      }
      const [add, del] = ns.split('\t').map(Number);
      const plus = hunks.split('\n').filter((l) => l.startsWith('+')).length;
      const minus = hunks.split('\n').filter((l) => l.startsWith('-')).length;
      expect(plus + minus).toBe((add ?? 0) + (del ?? 0));
    }
    expect(applied).toBeGreaterThan(40);
  });
});

describe('splitNumstatPatch (git_diff in one run)', () => {
  const w = makeWorkspace(
    { 'a.txt': 'one\ntwo\n', 'é b.txt': 'x\n', 'old.txt': 'keep\nthis\nfile\n' },
    { git: true },
  );
  afterAll(() => w.cleanup());
  git(w.dir, 'add', '-A');
  git(w.dir, 'commit', '-q', '-m', 'first');
  writeFileSync(path.join(w.dir, 'a.txt'), 'one\nTWO\nthree\n');
  writeFileSync(path.join(w.dir, 'é b.txt'), 'y\n');
  git(w.dir, 'mv', 'old.txt', 'new.txt');
  const run = (...a: string[]) =>
    execFileSync('git', ['-c', 'core.quotePath=false', 'diff', 'HEAD', '-M', '--no-color', ...a], {
      cwd: w.dir,
    });
  const both = run('--numstat', '-z', '--patch');
  const numOnly = run('--numstat', '-z');
  const patchOnly = run('--patch');

  it('gives exactly what two runs give: the numstat records and the patch', () => {
    const s = splitNumstatPatch(both, false, 1 << 20);
    expect(s?.num.equals(numOnly)).toBe(true);
    expect(s?.patch.equals(patchOnly)).toBe(true);
    expect(s?.cut).toBe(false);
    expect(parseNumstatZ(s!.num).entries.map((e) => e.path)).toEqual(['a.txt', 'new.txt', 'é b.txt']);
  });

  it('keeps max_bytes + 1 bytes of a longer patch and says it was cut', () => {
    const s = splitNumstatPatch(both, false, 20);
    expect(s?.patch.equals(patchOnly.subarray(0, 21))).toBe(true);
    expect(s?.cut).toBe(true);
  });

  it('gives up (two runs instead) when the bound cut the records or left less than max_bytes of patch', () => {
    const sep = numOnly.length;
    expect(splitNumstatPatch(both.subarray(0, sep - 3), true, 10)).toBeUndefined();
    expect(splitNumstatPatch(both.subarray(0, sep + 1 + 10), true, 10)).toBeUndefined();
    const enough = splitNumstatPatch(both.subarray(0, sep + 1 + 11), true, 10);
    expect(enough?.cut).toBe(true);
    expect(enough?.patch.length).toBe(11);
  });

  it('reads nothing changed from no output', () => {
    expect(splitNumstatPatch(Buffer.alloc(0), false, 100)).toEqual({
      num: Buffer.alloc(0),
      patch: Buffer.alloc(0),
      cut: false,
    });
  });
});
