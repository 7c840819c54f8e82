// The console's Workspaces section in headless Chromium (docs/console.md#workspaces), with the built bin as root
// or as nobody, in bubblewrap: two SDK clients (v1, handshake era; v2, pinned to 2026-07-28) open worktrees of
// one repository, edit the same file differently and commit in their worktrees, the main checkout untouched;
// the page lists both with their commands and edits and shows a worktree's diff; Merge refuses while the main
// checkout has an untracked file, then lands one worktree (a hostile config and hooks in the clone and the
// main checkout run nothing); the other's Merge reports the conflict and changes nothing; Discard (after its
// confirm step) removes a worktree; close_workspace {remove: true} of unmerged work waits in the Approvals list
// and goes ahead once approved; axe-core finds no serious or critical violation.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HUNG_MS } from '../exec/exec-support.js';
import { importCached, missingReason, type Playwright } from '../helpers/cached-tools.js';
import {
  canRunAs,
  NOBODY,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import { git } from '../helpers/workspace.js';
import { v1Peer, v2Peer, type Peer, type Sc } from '../workspaces/peers.js';
import { CHROMIUM, CHROMIUM_ARGS, consoleLink, requireOrSkip, seriousAxeViolations } from './support.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
async function peers(url: string): Promise<[Peer, Peer]> {
  const c1 = await v1Peer(url, 'v1-landing');
  return [c1, await v2Peer(url, 'v2-landing')];
}

/** git as the test, on a repository the server (maybe nobody) owns. */
const tgit = (cwd: string, ...args: string[]) => git(cwd, '-c', 'safe.directory=*', ...args).trim();

const missing = requireOrSkip(
  'the console workspaces test',
  !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
    : (missingReason('playwright-core') ?? missingReason('axe-core')),
);

/** Hostile settings and hooks: each would create `<marker dir>/pwned-<name>` if git ever ran it. */
function plantHostile(gitDir: string, markerDir: string): void {
  const touch = (name: string) => `touch ${markerDir}/pwned-${name}`;
  const cfg = path.join(gitDir, 'config');
  writeFileSync(
    cfg,
    `${readFileSync(cfg, 'utf8')}[core]\n\tfsmonitor = "${touch('fsmonitor')}; false"\n` +
      `[uploadpack]\n\tpackObjectsHook = "${path.join(gitDir, 'hooks', 'pack-hook')}"\n`,
  );
  mkdirSync(path.join(gitDir, 'hooks'), { recursive: true });
  for (const hook of [
    'pack-hook',
    'post-merge',
    'pre-merge-commit',
    'reference-transaction',
    'post-checkout',
  ]) {
    const file = path.join(gitDir, 'hooks', hook);
    writeFileSync(file, `#!/bin/sh\n${touch(hook)}\n[ "$1" = git ] && exec "$@"\nexit 0\n`);
    chmodSync(file, 0o755);
  }
}

export function consoleWorkspacesSuite(as: RunAs, variant?: SuiteVariant): void {
  const d =
    missing === undefined && canRunAs(as, 'the console workspaces test', variant?.need)
      ? describe
      : describe.skip;
  const label = variant ? `, ${variant.label}` : '';
  d(`the console's workspaces, server as ${as}${label}`, () => {
    let base: string;
    let projects: string;
    let repo: string;
    let srv: BinServer;
    let browser: any;
    let page: any;
    let a: Peer;
    let b: Peer;
    let wa: Sc;
    let wb: Sc;
    const requests: string[] = [];
    const own = (p: string) => {
      if (as === 'nobody') execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, p]);
    };
    const card = (id: string) => page.locator(`[data-workspace="${id}"]`);
    const markers = () => readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith('pwned-'));

    beforeAll(async () => {
      base = ownedDir(tmpdir(), 'wb-land-', as);
      const rt = ownedDir(base, 'rt-', as);
      const state = ownedDir(base, 'state-', as);
      chmodSync(state, 0o700);
      const home = ownedDir(base, 'home-', as);
      projects = path.join(base, 'projects');
      repo = path.join(projects, 'app');
      mkdirSync(repo, { recursive: true });
      writeFileSync(path.join(repo, 'lib.txt'), 'value=base\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'first');
      own(projects);
      srv = await startBinAs({
        workspace: undefined,
        as,
        runtimeRoot: rt,
        ...(variant ? { launcher: variant.launcher() } : {}),
        env: {
          ...(variant?.env ?? {}),
          SERVICE_PROJECTS: projects,
          SERVICE_STATE_DIR: state,
          SERVICE_PERMISSION_MODE: 'trusted',
          HOME: home,
        },
      });
      const { chromium } = await importCached<Playwright>('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
      page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      page.on('request', (r: { url(): string }) => requests.push(r.url()));
      await page.goto(consoleLink(srv.stderr()));
      await page.waitForSelector('body[data-ready="yes"]', { timeout: 30_000 });
    }, HUNG_MS * 2);

    afterAll(async () => {
      await a?.close().catch(() => undefined);
      await b?.close().catch(() => undefined);
      await browser?.close();
      await srv?.stop();
      if (base) rmSync(base, { recursive: true, force: true });
    });

    it('two clients of both eras commit different edits of one file in their worktrees; main is untouched', async () => {
      [a, b] = await peers(srv.url);
      const [ra, rb] = await Promise.all([
        a.call('open_workspace', { path: 'app', mode: 'worktree' }),
        b.call('open_workspace', { path: 'app', mode: 'worktree' }),
      ]);
      expect(ra.isError, ra.text).toBe(false);
      expect(rb.isError, rb.text).toBe(false);
      [wa, wb] = [ra.sc, rb.sc];
      const work = async (p: Peer, ws: string, v: string) => {
        const e = await p.call('edit_file', {
          workspace: ws,
          path: 'lib.txt',
          old_string: 'value=base',
          new_string: `value=${v}`,
        });
        expect(e.isError, e.text).toBe(false);
        const c = await p.call('exec_command', {
          workspace: ws,
          cmd: `git -c user.name=agent -c user.email=agent@localhost commit -qam ${v} && git log --oneline | head -1`,
          yield_time_ms: 30_000,
        });
        expect(c.sc.exit_code, c.text).toBe(0);
      };
      await Promise.all([work(a, wa.workspace, 'alpha'), work(b, wb.workspace, 'beta')]);
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=base\n');
      expect(tgit(repo, 'log', '--oneline').split('\n')).toHaveLength(1);
    });

    it('the page lists both worktrees with their commands and edits, and shows a diff against the base', async () => {
      for (const w of [wa, wb]) {
        const c = card(w.workspace);
        await c.waitFor({ timeout: 30_000 });
        await c.getByText(w.branch).waitFor();
      }
      const c = card(wa.workspace);
      await c.locator('summary', { hasText: 'Commands (1)' }).waitFor({ timeout: 30_000 });
      await c.locator('summary', { hasText: 'Edits (1)' }).waitFor();
      await c.getByRole('button', { name: `Diff of workspace ${wa.workspace}` }).click();
      await c.locator('.ws-diff .add', { hasText: '+value=alpha' }).waitFor({ timeout: 30_000 });
      await c.locator('.ws-diff .del', { hasText: '-value=base' }).waitFor();
    });

    it("a workspace's destructive command waits in its card, and Approve there lets it run", async () => {
      const mk = await a.call('exec_command', {
        workspace: wa.workspace,
        cmd: 'mkdir -p build && touch build/x',
        yield_time_ms: 30_000,
      });
      expect(mk.sc.exit_code, mk.text).toBe(0);
      const running = a.call('exec_command', {
        workspace: wa.workspace,
        cmd: 'rm -rf build && echo removed',
        yield_time_ms: 30_000,
      });
      const ask = card(wa.workspace).locator('[data-approval]', { hasText: 'rm -rf build' });
      await ask.waitFor({ timeout: 30_000 });
      await ask.getByRole('button', { name: 'Approve once' }).click();
      const r = await running;
      expect(r.isError, r.text).toBe(false);
      expect(r.text).toContain('removed');
      expect(existsSync(path.join(wa.path, 'build'))).toBe(false);
    });

    it('Merge refuses while the main checkout has another branch checked out, and changes nothing', async () => {
      tgit(repo, 'switch', '-q', '-c', 'elsewhere');
      const c = card(wa.workspace);
      await c.getByRole('button', { name: `Merge workspace ${wa.workspace}` }).click();
      await c
        .locator('.message.fail', { hasText: 'has elsewhere checked out, not main' })
        .waitFor({ timeout: 30_000 });
      tgit(repo, 'switch', '-q', 'main');
      tgit(repo, 'branch', '-q', '-D', 'elsewhere');
      own(repo);
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=base\n');
      expect(tgit(repo, 'log', '--oneline').split('\n')).toHaveLength(1);
    });

    it('Merge refuses while the main checkout has an untracked file, and changes nothing', async () => {
      const head = tgit(repo, 'rev-parse', 'HEAD');
      writeFileSync(path.join(repo, 'scratch.txt'), 'mine\n');
      own(path.join(repo, 'scratch.txt'));
      const c = card(wa.workspace);
      await c.getByRole('button', { name: `Merge workspace ${wa.workspace}` }).click();
      await c
        .locator('.message.fail', { hasText: 'untracked files (scratch.txt)' })
        .waitFor({ timeout: 30_000 });
      expect(tgit(repo, 'rev-parse', 'HEAD')).toBe(head);
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=base\n');
      rmSync(path.join(repo, 'scratch.txt'));
    });

    it('Merge lands one worktree; hostile config and hooks in the clone and the main checkout run nothing', async () => {
      plantHostile(path.join(wa.path, '.git'), path.join(repo, '.git'));
      plantHostile(path.join(repo, '.git'), path.join(repo, '.git'));
      own(path.join(repo, '.git'));
      own(path.join(wa.path, '.git'));
      // The planted config is live: a plain git status in the clone runs its fsmonitor.
      tgit(wa.path, 'status', '--porcelain');
      expect(markers()).toEqual(['pwned-fsmonitor']);
      rmSync(path.join(repo, '.git', 'pwned-fsmonitor'));
      const c = card(wa.workspace);
      await c.getByRole('button', { name: `Merge workspace ${wa.workspace}` }).click();
      await c.locator('.message.okc', { hasText: `Merged into ${repo}` }).waitFor({ timeout: 60_000 });
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=alpha\n');
      expect(tgit(repo, 'log', '-1', '--format=%s')).toBe('alpha');
      expect(tgit(repo, '-c', 'core.fsmonitor=false', 'status', '--porcelain')).toBe('');
      expect(markers()).toEqual([]);
      expect(tgit(repo, 'for-each-ref', 'refs/workbench')).toBe('');
    });

    it("the other worktree's Merge reports the conflict and leaves the main checkout exactly as it was", async () => {
      const head = tgit(repo, 'rev-parse', 'HEAD');
      const c = card(wb.workspace);
      await c.getByRole('button', { name: `Merge workspace ${wb.workspace}` }).click();
      await c.locator('.message.fail', { hasText: 'would conflict in lib.txt' }).waitFor({ timeout: 60_000 });
      expect(tgit(repo, 'rev-parse', 'HEAD')).toBe(head);
      expect(readFileSync(path.join(repo, 'lib.txt'), 'utf8')).toBe('value=alpha\n');
      expect(existsSync(path.join(repo, '.git', 'MERGE_HEAD'))).toBe(false);
      expect(tgit(repo, '-c', 'core.fsmonitor=false', 'status', '--porcelain')).toBe('');
      expect(tgit(repo, 'for-each-ref', 'refs/workbench')).toBe('');
      expect(markers()).toEqual([]);
    });

    it('close_workspace {remove: true} of unmerged work waits in the Approvals list and goes ahead once approved', async () => {
      const o = await a.call('open_workspace', { path: 'app', mode: 'worktree' });
      const ws = o.sc.workspace as string;
      const w = await a.call('exec_command', {
        workspace: ws,
        cmd: 'echo gamma > g.txt && git add g.txt && git -c user.name=agent -c user.email=agent@localhost commit -qm gamma',
        yield_time_ms: 30_000,
      });
      expect(w.sc.exit_code, w.text).toBe(0);
      const closing = a.call('close_workspace', { workspace: ws, remove: true });
      const ask = page.locator('#approval-list [data-approval]', { hasText: `close_workspace` });
      await ask.waitFor({ timeout: 30_000 });
      await ask.getByRole('button', { name: 'Approve once' }).click();
      const r = await closing;
      expect(r.isError, r.text).toBe(false);
      expect(existsSync(o.sc.path)).toBe(false);
      // The page draws the list again when the closed workspace goes: a click while it does is lost (its
      // press and release land on two different buttons), so the next test starts once it has gone.
      await card(ws).waitFor({ state: 'detached', timeout: 30_000 });
    });

    it('Discard asks to confirm, then removes the worktree (its directory and branch)', async () => {
      const c = card(wb.workspace);
      await c.getByRole('button', { name: `Discard workspace ${wb.workspace}` }).click();
      expect(existsSync(wb.path)).toBe(true);
      await c.getByRole('button', { name: `Confirm discard of workspace ${wb.workspace}` }).click();
      await page
        .locator('#workspaces-message', { hasText: `Discarded workspace ${wb.workspace}` })
        .waitFor({ timeout: 30_000 });
      expect(existsSync(wb.path)).toBe(false);
      expect(tgit(repo, 'branch', '--list', wb.branch)).toBe('');
      const r = await b.call('read_file', { workspace: wb.workspace, path: 'lib.txt' });
      expect(r.sc.error?.code).toBe('WORKSPACE_NOT_FOUND');
    });

    it('every request stayed on the console origin; axe-core: no serious or critical violation', async () => {
      const origin = new URL(page.url()).origin;
      for (const u of requests) expect(new URL(u).origin, u).toBe(origin);
      await card(wa.workspace)
        .getByRole('button', { name: `Diff of workspace ${wa.workspace}` })
        .waitFor();
      for (const width of [390, 1280]) {
        expect(await seriousAxeViolations(page, width), `width ${width}`).toEqual([]);
      }
    });
  });
}
