// Several workspaces (docs/tools.md#several-workspaces, docs/security-model.md#several-workspaces), with the
// built bin as root or as nobody, in bubblewrap or (a variant) the Landlock sandbox of a simulated container:
// a server with a project root and no default workspace; two SDK clients (v1, handshake era; v2, pinned to
// 2026-07-28) open worktrees of one repository at once, edit the same file differently, run the repository's
// test in their worktrees and each sees only its own change, the main checkout untouched; a command in one
// worktree attacking the other, the main checkout and the source's object directory fails; file tools stay
// in their workspace; hostile paths are refused; close_workspace {remove} refuses unmerged work; ids survive a
// restart.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, HUNG_MS } from '../exec/exec-support.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import {
  canRunAs,
  NOBODY,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import { git } from '../helpers/workspace.js';
import { v1Peer, v2Peer, type Peer, type Sc } from './peers.js';

export function workspacesSuite(as: RunAs, variant?: SuiteVariant): void {
  const d = canRunAs(as, 'several workspaces', variant?.need) ? describe : describe.skip;
  const label = variant ? `, ${variant.label}` : '';
  d(`several workspaces, server as ${as}${label}`, () => {
    let base: string;
    let projects: string;
    let repo: string;
    let state: string;
    let rt: string;
    let home: string;
    let srv: BinServer;
    const env = () => ({
      SERVICE_PROJECTS: projects,
      SERVICE_STATE_DIR: state,
      SERVICE_PERMISSION_MODE: 'trusted',
      HOME: home,
      ...(variant?.env ?? {}),
    });
    const start = () =>
      startBinAs({ workspace: undefined, as, runtimeRoot: rt, launcher: variant?.launcher(), env: env() });

    beforeAll(async () => {
      // Not under /tmp, which every sandbox replaces anyway: the project roots must be hidden on their own.
      base = ownedDir(existsSync('/srv') ? '/srv' : tmpdir(), 'wb-ws-', as);
      rt = ownedDir(base, 'rt-', as);
      state = ownedDir(base, 'state-', as);
      chmodSync(state, 0o700);
      home = ownedDir(base, 'home-', as);
      projects = path.join(base, 'projects');
      repo = path.join(projects, 'app');
      mkdirSync(repo, { recursive: true });
      mkdirSync(path.join(projects, 'plain'));
      writeFileSync(path.join(repo, 'lib.txt'), 'value=base\n');
      writeFileSync(path.join(repo, 'AGENTS.md'), 'Run sh test.sh before you finish.\n');
      writeFileSync(path.join(repo, 'test.sh'), 'grep value= lib.txt\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'first');
      writeFileSync(path.join(repo, 'uncommitted.txt'), 'left behind\n');
      symlinkSync('/etc', path.join(projects, 'out-link'));
      if (as === 'nobody') execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, projects]);
      srv = await start();
    }, HUNG_MS);

    afterAll(async () => {
      await srv?.stop();
      if (base) rmSync(base, { recursive: true, force: true });
    });

    it('without a default workspace a workspace tool asks for open_workspace; an unknown id names it too', async () => {
      const r = await call(srv.url, 'read_file', { path: 'lib.txt' });
      expect(r.sc.error?.code).toBe('WORKSPACE_REQUIRED');
      expect(r.text).toContain('open_workspace');
      const u = await call(srv.url, 'read_file', { path: 'lib.txt', workspace: 'deadbeef' });
      expect(u.sc.error?.code).toBe('WORKSPACE_NOT_FOUND');
      expect(u.text).toContain('open_workspace');
      const info = await call(srv.url, 'server_info', {});
      expect(info.sc.workspaces.roots).toEqual([projects]);
      expect(info.sc.workspaces.no_default).toBe(true);
    });

    it('hostile paths are refused with WORKSPACE_OUTSIDE_ROOTS naming the roots', async () => {
      for (const p of ['..', '../..', projects, '.', 'out-link', '/etc', '~', 'app/../..']) {
        const r = await call(srv.url, 'open_workspace', { path: p });
        expect(r.sc.error?.code, `${p}: ${r.text}`).toBe('WORKSPACE_OUTSIDE_ROOTS');
        expect(r.text).toContain(projects);
      }
    });

    let a: Peer;
    let b: Peer;
    let wa: Sc;
    let wb: Sc;

    it('two clients, one per era, open worktrees of one repository at the same time', async () => {
      [a, b] = await Promise.all([v1Peer(srv.url, 'v1-workspaces'), v2Peer(srv.url, 'v2-workspaces')]);
      const [ra, rb] = await Promise.all([
        a.call('open_workspace', { path: 'app', mode: 'worktree' }),
        b.call('open_workspace', { path: repo, mode: 'worktree' }),
      ]);
      expect(ra.isError, ra.text).toBe(false);
      expect(rb.isError, rb.text).toBe(false);
      wa = ra.sc;
      wb = rb.sc;
      expect(wa.workspace).not.toBe(wb.workspace);
      expect(wa.branch).toMatch(/^wb\/app-[0-9a-f]{8}$/);
      expect(wa.base).toBe(git(repo, '-c', 'safe.directory=*', 'rev-parse', 'HEAD').trim());
      expect(wa.note).toContain('uncommitted');
      expect(wa.instructions).toContain('Run sh test.sh');
      expect(wa.path.startsWith(state)).toBe(true);
      expect(existsSync(path.join(wa.path, 'uncommitted.txt'))).toBe(false);
    });

    it('each edits the same file differently, runs the tests in its worktree and sees only its own change', async () => {
      const edit = (p: Peer, ws: string, v: string) =>
        p.call('edit_file', {
          workspace: ws,
          path: 'lib.txt',
          old_string: 'value=base',
          new_string: `value=${v}`,
        });
      const [ea, eb] = await Promise.all([edit(a, wa.workspace, 'alpha'), edit(b, wb.workspace, 'beta')]);
      expect(ea.isError, ea.text).toBe(false);
      expect(eb.isError, eb.text).toBe(false);
      const run = (p: Peer, ws: string) =>
        p.call('exec_command', { workspace: ws, cmd: 'sh test.sh', yield_time_ms: 30_000 });
      const [xa, xb] = await Promise.all([run(a, wa.workspace), run(b, wb.workspace)]);
      expect(xa.sc.exit_code, xa.text).toBe(0);
      expect(xa.text).toContain('value=alpha');
      expect(xa.text).not.toContain('value=beta');
      expect(xb.text).toContain('value=beta');
      expect(xb.text).not.toContain('value=alpha');
      const ra = await b.call('read_file', { workspace: wa.workspace, path: 'lib.txt' });
      expect(ra.text).toContain('value=alpha');
      const st = await a.call('git_status', { workspace: wa.workspace });
      expect(st.isError, st.text).toBe(false);
      expect(JSON.stringify(st.sc)).toContain('lib.txt');
      const log = await a.call('git_log', { workspace: wa.workspace });
      expect(log.isError, log.text).toBe(false);
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=base\n');
    });

    it('a command in one worktree cannot reach the other, the main checkout or the source objects', async () => {
      const other = wb.path as string;
      const objects = path.join(repo, '.git', 'objects');
      const attacks = [
        `cat ${other}/lib.txt`,
        `echo pwned > ${other}/lib.txt`,
        `cat ${repo}/lib.txt`,
        `echo pwned > ${repo}/lib.txt`,
        `git -C ${other} status`,
        `git -C ${repo} log`,
        `touch ${objects}/pwned`,
        `touch ${repo}/.git/pwned`,
        `git --git-dir=${repo}/.git --work-tree=. checkout -q -b pwned`,
        `git push -q origin HEAD:refs/heads/pwned`,
      ];
      for (const cmd of attacks) {
        const r = await a.call('exec_command', { workspace: wa.workspace, cmd, yield_time_ms: 30_000 });
        expect(r.sc.exit_code, `${cmd}: ${r.text}`).not.toBe(0);
      }
      // A clone, not a linked worktree: git worktree list names no other directory to write into.
      const list = await a.call('exec_command', {
        workspace: wa.workspace,
        cmd: 'git worktree list --porcelain',
        yield_time_ms: 30_000,
      });
      expect(list.sc.exit_code, list.text).toBe(0);
      expect(list.text).toContain(wa.path);
      expect(list.text).not.toContain(other);
      expect(list.text).not.toContain(repo);
      expect(git(repo, '-c', 'safe.directory=*', 'branch', '--list', 'pwned').trim()).toBe('');
      expect(readFileSync(path.join(other, 'lib.txt'), 'utf8')).toBe('value=beta\n');
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=base\n');
      expect(existsSync(path.join(objects, 'pwned'))).toBe(false);
      expect(existsSync(path.join(repo, '.git', 'pwned'))).toBe(false);
      const f = await a.call('read_file', { workspace: wa.workspace, path: path.join(other, 'lib.txt') });
      expect(f.sc.error?.code).toBe('PATH_OUTSIDE_WORKSPACE');
    });

    it('close_workspace {remove} refuses a worktree with unmerged work and removes one without', async () => {
      const commit = await a.call('exec_command', {
        workspace: wa.workspace,
        cmd: 'git -c user.name=t -c user.email=t@localhost commit -qam alpha && git log --oneline | head -1',
        yield_time_ms: 30_000,
      });
      expect(commit.sc.exit_code, commit.text).toBe(0);
      const refused = await a.call('close_workspace', { workspace: wa.workspace, remove: true });
      expect(refused.sc.error?.code, refused.text).toBe('WORKSPACE_UNMERGED');
      expect(refused.text).toContain('console');
      expect(existsSync(wa.path)).toBe(true);
      const c = await b.call('open_workspace', { path: 'app', mode: 'worktree' });
      const gone = await b.call('close_workspace', { workspace: c.sc.workspace, remove: true });
      expect(gone.isError, gone.text).toBe(false);
      expect(existsSync(c.sc.path)).toBe(false);
      const again = await b.call('read_file', { workspace: c.sc.workspace, path: 'lib.txt' });
      expect(again.sc.error?.code).toBe('WORKSPACE_NOT_FOUND');
    });

    it('ids survive a restart with the same state directory; a worktree whose directory vanished is dropped', async () => {
      const gone = await a.call('open_workspace', { path: 'app', mode: 'worktree' });
      expect(gone.isError, gone.text).toBe(false);
      await a.close();
      await b.close();
      await srv.stop();
      rmSync(gone.sc.path, { recursive: true, force: true });
      srv = await start();
      expect(srv.stderr()).toContain('a kept workspace is gone and was dropped');
      const dropped = await call(srv.url, 'read_file', { workspace: gone.sc.workspace, path: 'lib.txt' });
      expect(dropped.sc.error?.code).toBe('WORKSPACE_NOT_FOUND');
      const r = await call(srv.url, 'read_file', { workspace: wb.workspace, path: 'lib.txt' });
      expect(r.text).toContain('value=beta');
      const info = await call(srv.url, 'server_info', {});
      const ids = (info.sc.workspaces.open as Sc[]).map((w) => w.workspace ?? w.id);
      expect(ids).toContain(wa.workspace);
      expect(ids).toContain(wb.workspace);
    });

    it('at most 32 workspaces are open; the next gets WORKSPACE_LIMIT naming close_workspace', async () => {
      const info = await call(srv.url, 'server_info', {});
      const open = (info.sc.workspaces.open as Sc[]).length;
      for (let i = 0; i < 32 - open; i++) {
        mkdirSync(path.join(projects, `d${i}`));
        if (as === 'nobody') execFileSync('chown', [`${NOBODY}:${NOBODY}`, path.join(projects, `d${i}`)]);
        const r = await call(srv.url, 'open_workspace', { path: `d${i}` });
        expect(r.isError, r.text).toBe(false);
      }
      const over = await call(srv.url, 'open_workspace', { path: 'plain' });
      expect(over.sc.error?.code).toBe('WORKSPACE_LIMIT');
      expect(over.text).toContain('close_workspace');
    });
  });
}
