// Tool jails prepared ahead, seen from a real server (src/process/jail/prepared-jail.ts; docs/security-model.md#tool-jails-prepared-ahead):
// the first git call and the first search after start are served by a jail prepared at start (the server's
// debug line says which run was), a prepared jail killed from outside is replaced and the next call still
// answers, and when the server is killed with SIGKILL every prepared jail it left dies too. Run with the server
// as root and as nobody (jail-prepared.test.ts, jail-prepared-unprivileged.test.ts), in bubblewrap and in the
// simulated container (Landlock).
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, HUNG_MS, waitFor } from '../exec/exec-support.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import {
  canRunAs,
  descendantsOf,
  NOBODY,
  ownedDir,
  procTable,
  signal,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import { needBuilt } from '../helpers/native.js';
import { git } from '../helpers/workspace.js';
import { execFileSync } from 'node:child_process';

/** The debug lines of the server's jailed runs, in order: which program, whether a prepared jail served it. */
function runs(stderr: string): Array<{ program: string; prepared: boolean }> {
  const out: Array<{ program: string; prepared: boolean }> = [];
  for (const m of stderr.matchAll(/tool jail run (\{.*\})/g)) out.push(JSON.parse(m[1] as string));
  return out;
}

/**
 * The prepared jails waiting below `pid`: wb-exec processes at a jail's end (bubblewrap shows it at
 * /run/wb-exec; the Landlock helper execs the server's copy). A command's prepared sandbox runs another copy,
 * from the proxy's directory (…/net/wb-exec), and is not counted.
 */
export function jailsBelow(pid: number): number[] {
  return descendantsOf(pid)
    .filter((p) => {
      const argv0 = p.cmdline.split(' ')[0] ?? '';
      return argv0 === '/run/wb-exec' || (argv0.endsWith('/wb-exec') && !argv0.endsWith('/net/wb-exec'));
    })
    .filter((p) => p.state !== 'Z')
    .map((p) => p.pid);
}

export function preparedJailSuite(as: RunAs, variant?: SuiteVariant): void {
  const usable =
    canRunAs(as, 'tool jails prepared ahead', variant?.need) &&
    needBuilt(['wb-exec', 'wb-exec-static'], 'tool jails prepared ahead');
  const d = usable ? describe : describe.skip;
  d(`tool jails prepared ahead, server as ${as}${variant ? `, ${variant.label}` : ''}`, () => {
    let ws: string;
    let rt: string;
    let srv: BinServer;
    const start = () =>
      startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        launcher: variant?.launcher(),
        env: { ...variant?.env, SERVICE_LOG_LEVEL: 'debug' },
      });

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-prep-ws-', as);
      rt = ownedDir(tmpdir(), 'wb-prep-rt-', as);
      // git as the test (root) in a workspace that may be nobody's.
      const g = (...args: string[]) => git(ws, '-c', 'safe.directory=*', ...args);
      g('init', '-q', '-b', 'main');
      writeFileSync(path.join(ws, 'a.txt'), 'alpha needle\n');
      g('add', '-A');
      g('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '-m', 'first');
      writeFileSync(path.join(ws, 'a.txt'), 'alpha needle\nmore\n');
      if (as === 'nobody') execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, ws]);
      srv = await start();
    }, HUNG_MS);

    afterAll(async () => {
      await srv?.stop();
      for (const dir of [ws, rt]) if (dir) rmSync(dir, { recursive: true, force: true });
    }, HUNG_MS);

    it('the first git call and the first search after start are served by jails prepared at start', async () => {
      // Prepared after the first-command rehearsal (src/cli/warm-up.ts): two git jails and one ripgrep jail.
      expect(await waitFor(() => srv.stderr().includes('warm-up done')), srv.stderr()).toBe(true);
      expect((await waitForJails(srv.pid, 3)).length).toBeGreaterThanOrEqual(3);
      // Before any client called, the warm-up rehearsed the tools (git_status, git_diff, git_log, search_text on
      // one file) and looked the repository up: git and ripgrep only, each in a jail (src/cli/warm-up.ts).
      const atStart = runs(srv.stderr());
      expect(
        atStart.every((r) => ['git', 'rg'].includes(path.basename(r.program))),
        JSON.stringify(atStart),
      ).toBe(true);
      const st = await call(srv.url, 'git_status', {});
      expect(st.isError, st.text).toBe(false);
      expect(JSON.stringify(st.sc)).toMatch(/a\.txt/);
      const s = await call(srv.url, 'search_text', { query: 'needle' });
      expect(s.isError, s.text).toBe(false);
      expect(JSON.stringify(s.sc)).toMatch(/alpha needle/);
      const seen = runs(srv.stderr()).slice(atStart.length);
      const firstGit = seen.find((r) => path.basename(r.program) === 'git');
      const firstRg = seen.find((r) => path.basename(r.program) === 'rg');
      expect(firstGit, srv.stderr()).toEqual({ program: expect.stringMatching(/git$/), prepared: true });
      expect(firstRg, srv.stderr()).toEqual({ program: expect.stringMatching(/rg$/), prepared: true });
      // Every run so far found its jail ready: the next one is set up while the program before runs.
      expect(
        seen.every((r) => r.prepared),
        JSON.stringify(seen),
      ).toBe(true);
    });

    it('a prepared jail killed from outside is replaced, and the next calls still answer', async () => {
      const before = await waitForJails(srv.pid, 3);
      expect(before.length, 'two git jails and one ripgrep jail wait').toBeGreaterThanOrEqual(3);
      for (const pid of before) signal(pid, 'SIGKILL');
      const again = await waitForJails(srv.pid, 3, before);
      expect(again.filter((p) => before.includes(p))).toEqual([]);
      const st = await call(srv.url, 'git_status', {});
      expect(st.isError, st.text).toBe(false);
      expect(JSON.stringify(st.sc)).toMatch(/a\.txt/);
      const s = await call(srv.url, 'search_text', { query: 'needle' });
      expect(JSON.stringify(s.sc)).toMatch(/alpha needle/);
      const last = runs(srv.stderr()).slice(-2);
      expect(
        last.map((r) => r.prepared),
        JSON.stringify(last),
      ).toEqual([true, true]);
    });

    it('the server killed with SIGKILL: every jail it prepared dies with it', async () => {
      const other = await start();
      const waiting = await waitForJails(other.pid, 3);
      expect(waiting.length).toBeGreaterThanOrEqual(3);
      signal(other.pid, 'SIGKILL');
      const gone = await waitFor(() => waiting.every((p) => !alive(p)), HUNG_MS);
      expect(gone, `still there: ${waiting.filter(alive).join(' ')}`).toBe(true);
      await other.stop();
    });
  });
}

/** Waits until at least `n` prepared jails (none of `not`) wait below `pid`; returns them. */
async function waitForJails(pid: number, n: number, not: number[] = []): Promise<number[]> {
  let found: number[] = [];
  await waitFor(() => {
    found = jailsBelow(pid).filter((p) => !not.includes(p));
    return found.length >= n;
  }, HUNG_MS);
  return found;
}

function alive(pid: number): boolean {
  const p = procTable().get(pid);
  return p !== undefined && p.state !== 'Z';
}
