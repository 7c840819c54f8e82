// docs/tools.md#git (**beyond**: a hostile `.git/config` cannot turn a read-only tool into code execution)
// and docs/design-notes.md#git-hardening (every filter driver from config or .gitattributes disabled;
// GIT_OPTIONAL_LOCKS=0, so `.git/index` is never written). A repository whose config names a program for
// every hook point git has — fsmonitor, external diff, a diff driver command, textconv, clean/smudge/process
// filters (one only through include.path), pager, signature verification, ssh, askpass, credential helper,
// editor, hooks (both .git/hooks and core.hooksPath), and a submodule with its own filter — each program
// writing a marker file. First a control run with plain git proves the traps fire; then all five tools run
// through a real HTTP server, and no marker may exist afterwards.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerLauncher } from '../helpers/container-sim.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const HOOKS = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'proc-receive',
  'post-receive',
  'post-update',
  'reference-transaction',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'post-index-change',
];

/** Every git tool, in the ways that would read (and filter, textconv, diff externally) the dirty files. */
const TOOL_CALLS: Array<[string, Record<string, unknown>]> = [
  ['git_status', {}],
  ['git_status', { include_untracked: false }],
  ['git_diff', {}],
  ['git_diff', { staged: true, unstaged: true, paths: ['a.txt', 'b.md', 'c.js', 'sub'] }],
  ['git_log', {}],
  ['git_log', { ref: 'HEAD~1', max_count: 1 }],
  ['git_show', {}],
  ['git_show', { rev: 'HEAD~1' }],
  ['git_show', { rev: 'HEAD~1', paths: ['a.txt'] }],
  ['git_show', { rev: 'HEAD:a.txt' }],
  ['git_blame', { path: 'a.txt' }],
  ['git_blame', { path: 'b.md', rev: 'HEAD' }],
  ['git_blame', { path: 'c.js' }],
];

let ws: TempWorkspace;
let traps: string;
let fired: string;
let srv: InProcessServer;

/** A program that records that it ran, then behaves like `tail` (a filter or textconv must produce output). */
function trap(name: string, tail = 'exit 0'): string {
  const file = path.join(traps, 'bin', name);
  writeFileSync(file, `#!/bin/sh\ntouch '${path.join(fired, name)}'\n${tail}\n`);
  chmodSync(file, 0o755);
  return file;
}
const firedNow = () => readdirSync(fired).sort();
const plainGit = (cwd: string, ...args: string[]) => {
  try {
    execFileSync('git', args, {
      cwd,
      stdio: 'pipe',
      env: { PATH: process.env.PATH ?? '', HOME: traps, GIT_CONFIG_NOSYSTEM: '1' },
    });
  } catch {
    // a trap may make git fail; only the markers matter here
  }
};
const indexHash = () =>
  createHash('sha256')
    .update(readFileSync(path.join(ws.dir, '.git', 'index')))
    .digest('hex');

beforeAll(async () => {
  traps = realpathSync(mkdtempSync(path.join(tmpdir(), 'wb-traps-')));
  fired = path.join(traps, 'fired');
  mkdirSync(fired);
  mkdirSync(path.join(traps, 'bin'));
  mkdirSync(path.join(traps, 'hooks'));

  ws = makeWorkspace(
    {
      'a.txt': 'alpha\nbeta\n',
      'b.md': '# title\n',
      'c.js': 'let c = 1;\n',
      '.gitattributes': '*.txt diff=evil filter=evilf\n*.md diff=evilcmd filter=evilp\n*.js filter=incl\n',
    },
    { git: true },
  );
  // The submodule: its own repository, with a filter only its own config names.
  const sub = path.join(ws.dir, 'sub');
  mkdirSync(sub);
  git(sub, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(sub, 's.txt'), 'sub\n');
  writeFileSync(path.join(sub, '.gitattributes'), '*.txt filter=subf\n');
  git(sub, 'add', '-A');
  git(sub, 'commit', '-q', '-m', 'sub');
  git(ws.dir, 'add', '-A');
  git(ws.dir, 'commit', '-q', '-m', 'first');
  writeFileSync(path.join(ws.dir, 'a.txt'), 'alpha\nbeta\ngamma\n');
  git(ws.dir, 'commit', '-q', '-am', 'second');

  // A commit with a signature header, so log.showSignature would run gpg.program.
  const tree = git(ws.dir, 'rev-parse', 'HEAD^{tree}').trim();
  const parent = git(ws.dir, 'rev-parse', 'HEAD').trim();
  const raw = `tree ${tree}\nparent ${parent}\nauthor test <test@localhost> 1700000000 +0000\ncommitter test <test@localhost> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEfake\n -----END PGP SIGNATURE-----\n\nsigned commit\n`;
  const signed = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
    cwd: ws.dir,
    input: raw,
  })
    .toString()
    .trim();
  git(ws.dir, 'update-ref', 'refs/heads/main', signed);

  // Arm every trap.
  const cfg = (cwd: string, key: string, value: string) => git(cwd, 'config', key, value);
  cfg(ws.dir, 'core.fsmonitor', trap('fsmonitor', 'exit 1'));
  cfg(ws.dir, 'core.hooksPath', path.join(traps, 'hooks'));
  cfg(ws.dir, 'core.pager', trap('pager', 'cat'));
  cfg(ws.dir, 'pager.log', trap('pager-log', 'cat'));
  cfg(ws.dir, 'core.editor', trap('editor'));
  cfg(ws.dir, 'core.sshCommand', trap('ssh'));
  cfg(ws.dir, 'core.askPass', trap('askpass'));
  cfg(ws.dir, 'credential.helper', `!${trap('credential')}`);
  cfg(ws.dir, 'diff.external', trap('diff-external'));
  cfg(ws.dir, 'diff.evil.textconv', trap('textconv', 'cat "$1"'));
  cfg(ws.dir, 'diff.evilcmd.command', trap('diff-command'));
  cfg(ws.dir, 'filter.evilf.clean', trap('filter-clean', 'cat'));
  cfg(ws.dir, 'filter.evilf.smudge', trap('filter-smudge', 'cat'));
  cfg(ws.dir, 'filter.evilf.required', 'true');
  cfg(ws.dir, 'filter.evilp.process', trap('filter-process', 'exit 1'));
  cfg(ws.dir, 'log.showSignature', 'true');
  cfg(ws.dir, 'gpg.program', trap('gpg'));
  cfg(ws.dir, 'remote.origin.url', 'ssh://example.invalid/repo.git');
  cfg(ws.dir, 'blame.ignoreRevsFile', path.join(traps, 'no-such-file'));
  const included = path.join(traps, 'included.gitconfig');
  writeFileSync(
    included,
    `[filter "incl"]\n\tclean = ${trap('filter-included', 'cat')}\n\trequired = true\n`,
  );
  cfg(ws.dir, 'include.path', included);
  cfg(sub, 'filter.subf.clean', trap('submodule-filter', 'cat'));
  for (const h of HOOKS) {
    for (const dir of [
      path.join(traps, 'hooks'),
      path.join(ws.dir, '.git', 'hooks'),
      path.join(sub, '.git', 'hooks'),
    ]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, h), `#!/bin/sh\ntouch '${path.join(fired, `hook-${h}`)}'\n`);
      chmodSync(path.join(dir, h), 0o755);
    }
  }

  // Dirty files, so status/diff/blame must read (and would clean-filter) the working tree.
  writeFileSync(path.join(ws.dir, 'a.txt'), 'alpha\nbeta\ngamma\ndelta\n');
  writeFileSync(path.join(ws.dir, 'b.md'), '# title changed\n');
  writeFileSync(path.join(ws.dir, 'c.js'), 'let c = 2;\n');
  writeFileSync(path.join(sub, 's.txt'), 'SUB\n'); // same size: git must read (and filter) it
});

afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
  rmSync(traps, { recursive: true, force: true });
});

describe('hostile repository (docs/tools.md#git, docs/design-notes.md#git-hardening)', () => {
  it('control: the same repository runs the traps under plain git', () => {
    // The process filter cannot speak its protocol, so git dies where it first needs it: check it alone.
    plainGit(ws.dir, 'status');
    const noProc = ['-c', 'filter.evilp.process='];
    plainGit(ws.dir, ...noProc, 'status');
    plainGit(ws.dir, ...noProc, 'diff');
    plainGit(ws.dir, ...noProc, 'diff', '--no-ext-diff');
    plainGit(ws.dir, 'log', '-1');
    const hit = firedNow();
    for (const name of [
      'fsmonitor',
      'filter-clean',
      'filter-included',
      'diff-external',
      'textconv',
      'gpg',
      'submodule-filter',
    ]) {
      expect(hit, `plain git should have run ${name}`).toContain(name);
    }
    rmSync(fired, { recursive: true, force: true });
    mkdirSync(fired);
  });

  it('all five tools work over HTTP and run none of them; .git/index is not written', async () => {
    const before = indexHash();
    srv = await startInProcess({ workspace: ws.dir });
    for (const [tool, args] of TOOL_CALLS) {
      const r = await callTool(srv.url, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}: ${r.content[0]?.text}`).toBe(false);
      expect(r.structuredContent.reason).toBeUndefined(); // in the repository
    }
    expect(firedNow()).toEqual([]);
    expect(indexHash()).toBe(before);
  });

  it("results are real: the dirty files show, the diff is git's own text (no textconv, no external diff)", async () => {
    const st = await callTool(srv.url, 'git_status', {});
    const codes = Object.fromEntries(
      st.structuredContent.entries.map((e: { path: string; code: string }) => [e.path, e.code]),
    );
    expect(codes).toMatchObject({ 'a.txt': ' M', 'b.md': ' M', 'c.js': ' M' });
    const d = await callTool(srv.url, 'git_diff', { paths: ['a.txt'] });
    expect(d.structuredContent.diff).toContain('+delta');
    const log = await callTool(srv.url, 'git_log', { max_count: 1 });
    expect(log.structuredContent.commits[0].subject).toBe('signed commit');
    expect(firedNow()).toEqual([]);
  });
});

describe('the same repository with git in the Landlock jail (SERVICE_SANDBOX=landlock, process/jail/jail-landlock.ts)', () => {
  const maybe = containerLauncher('git in the Landlock jail') !== undefined ? it : it.skip;
  maybe(
    'no trap runs and .git/index is not written; an include.path the jail cannot read fails every tool (bubblewrap: absent, skipped); included from the workspace, every tool works',
    async () => {
      const before = indexHash();
      const outsideInclude = path.join(traps, 'included.gitconfig');
      const insideInclude = path.join(ws.dir, '.git', 'included.gitconfig');
      const ll = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'landlock' } });
      try {
        const jail = ll.runtime.jail.status();
        expect(jail.in_use, jail.reason).toBe('landlock');
        for (const [tool, args] of TOOL_CALLS) {
          const r = await callTool(ll.url, tool, args);
          expect(r.structuredContent.error?.code, `${tool} ${JSON.stringify(args)}`).toBe('GIT_ERROR');
          expect(r.content[0]?.text).toMatch(/unable to access .*included\.gitconfig.*Permission denied/);
        }
        writeFileSync(insideInclude, readFileSync(outsideInclude));
        git(ws.dir, 'config', 'include.path', insideInclude);
        for (const [tool, args] of TOOL_CALLS) {
          const r = await callTool(ll.url, tool, args);
          expect(r.isError, `${tool} ${JSON.stringify(args)}: ${r.content[0]?.text}`).toBe(false);
        }
        const diff = await callTool(ll.url, 'git_diff', { paths: ['a.txt'] });
        expect(diff.structuredContent.diff).toContain('+delta');
        expect(firedNow()).toEqual([]);
        expect(indexHash()).toBe(before);
      } finally {
        git(ws.dir, 'config', 'include.path', outsideInclude);
        rmSync(insideInclude, { force: true });
        await ll.close();
      }
    },
  );
});

describe('the repository cache never serves a stale configuration (git/repo)', () => {
  let repoWs: TempWorkspace;
  let server: InProcessServer;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /**
   * Waits until every file below .git (and `more`) has stood still for its file system's wait, by the server's
   * own rule (src/git/settle.ts stoodStill): ~100 ms where timestamps keep fractions of a second, 2 s where they
   * step by whole seconds. Only then may a call cache what it read, so a null from the cache is the cache's
   * choice, never an unsettled file's.
   */
  async function untilSettled(...more: string[]) {
    const { stoodStill } = await import('../../src/git/settle.js');
    const files = (p: string): string[] =>
      lstatSync(p).isDirectory() ? readdirSync(p).flatMap((n) => files(path.join(p, n))) : [p];
    const all = [path.join(repoWs.dir, '.git'), ...more].flatMap(files);
    while (!all.every((f) => stoodStill(lstatSync(f, { bigint: true }), Date.now()))) await sleep(20);
  }
  beforeAll(async () => {
    repoWs = makeWorkspace({ 'a.txt': 'one\n', '.gitattributes': '*.txt filter=late\n' }, { git: true });
    git(repoWs.dir, 'add', '-A');
    git(repoWs.dir, 'commit', '-q', '-m', 'first');
    server = await startInProcess({ workspace: repoWs.dir });
  });
  afterAll(async () => {
    await server.close();
    repoWs.cleanup();
  });

  it('caches only a settled configuration, and a filter added later is disabled anyway', async () => {
    const { fromCache } = await import('../../src/git/repo.js');
    const rt = server.runtime;
    const status = async () => {
      const r = await callTool(server.url, 'git_status', {});
      expect(r.isError, r.content[0]?.text).toBe(false);
    };
    // A config that changed just now, however long the call takes to come: its mtime ahead of the clock.
    const config = path.join(repoWs.dir, '.git', 'config');
    const ahead = Date.now() / 1000 + 3600;
    utimesSync(config, ahead, ahead);
    await status();
    expect(fromCache(rt, rt.root.real), 'a config written just now is not cached').toBeNull();
    const past = Date.now() / 1000 - 3600.25;
    utimesSync(config, past, past);
    await untilSettled();
    await status();
    expect(fromCache(rt, rt.root.real)).not.toBeNull();

    // Added with git config (a new inode), then rewritten in place (same inode): both must be seen.
    writeFileSync(path.join(repoWs.dir, 'a.txt'), 'two\n');
    git(repoWs.dir, 'config', 'filter.late.clean', trap('late-filter-git-config', 'cat'));
    await status();
    await callTool(server.url, 'git_diff', {});
    const cfg = path.join(repoWs.dir, '.git', 'config');
    await untilSettled();
    await status();
    expect(fromCache(rt, rt.root.real)).not.toBeNull();
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('late-filter-git-config', 'late-filter-in-place!!'));
    trap('late-filter-in-place!!', 'cat');
    writeFileSync(path.join(repoWs.dir, 'a.txt'), 'six\n');
    await status();
    await callTool(server.url, 'git_diff', {});
    expect(firedNow()).toEqual([]);

    // A configuration that includes other files is never cached.
    const inc = path.join(traps, 'late-include.gitconfig');
    writeFileSync(inc, '[core]\n\tbare = false\n');
    git(repoWs.dir, 'config', 'include.path', inc);
    await untilSettled(inc);
    await status();
    expect(fromCache(rt, rt.root.real)).toBeNull();
  });
});

describe('a work tree pointed outside the workspace (core.worktree)', () => {
  it('is refused with GIT_ERROR instead of listing outside files', async () => {
    const elsewhere = makeWorkspace({ 'secret-outside.txt': 's\n' });
    const w = makeWorkspace({ 'a.txt': 'a\n' }, { git: true });
    git(w.dir, 'add', '-A');
    git(w.dir, 'commit', '-q', '-m', 'first');
    git(w.dir, 'config', 'core.worktree', elsewhere.dir);
    const server = await startInProcess({ workspace: w.dir });
    try {
      for (const tool of ['git_status', 'git_diff', 'git_log']) {
        const r = await callTool(server.url, tool, {});
        expect(r.structuredContent.error?.code, tool).toBe('GIT_ERROR');
        expect(r.content[0]!.text).not.toContain('secret-outside');
      }
    } finally {
      await server.close();
      w.cleanup();
      elsewhere.cleanup();
    }
  });
});
