// A repository-controlled program may never run with the server's power (README "Git"): run with the server
// as root and as nobody. The race: a `safe` command renames `.git/config` back and forth every ~1 ms between
// a plain copy and one defining the clean filter `zz` that `.gitattributes` gives to a stale `a.txt`, while
// git_status (60 times) and git_diff (15) run; the filter would append `id` to a marker file outside the
// workspace (writable by the server's user), which must stay empty. Checking the configuration and then
// running git is a window such a race hits; git confined to a read-only sandbox that holds only the
// workspace closes it whatever the timing. Then single shots (no race) of core.fsmonitor, diff.external, a
// textconv driver and a filter from an included file, each first shown to fire under plain git. With a
// `variant` (test/helpers/container-sim.ts LANDLOCK_SIM: bubblewrap cannot start) the same attacks meet the
// Landlock jail (src/process/jail/jail-landlock.ts); server_info must name the jail in use, and search_text must
// still answer correctly through it.
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, HUNG_MS, pollUntil } from '../exec/exec-support.js';
import { inLanes, outcome } from '../helpers/confinement.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import {
  canRunAs,
  NOBODY,
  markerFile,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import { git } from '../helpers/workspace.js';

/**
 * Calls during the swaps, enough that a git left unconfined could not miss the window: with SERVICE_SANDBOX=off
 * (everything else as it is) the filter first ran at call 0, 1, 3 and 6 of four runs, and in 55 to 70 of the
 * 250 calls of each: about one call in four, so 75 calls would all miss with odds of about 1 in a billion.
 */
const STATUS_CALLS = 60;
const DIFF_CALLS = 15;
const MIN_SWAPS = 100; // fewer: the race was not exercised, fail instead of passing vacuously
const TEST_CEILING_MS = 400_000;

/** The attacker's loop, run as a command: bounded (300 s), and it stops as soon as the test writes `.git/stop-swap`. */
const SWAPPER = `import os, sys, time
plain = open('.git/config.plain').read()
evil = open('.git/config.evil').read()
n = 0
end = time.monotonic() + 300
while time.monotonic() < end and not os.path.exists('.git/stop-swap'):
    for body in (evil, plain):
        with open('.git/config.new', 'w') as f:
            f.write(body)
        os.rename('.git/config.new', '.git/config')
        n += 1
        if n == 2:
            print('ready', flush=True)
        time.sleep(0.001)
print('swaps', n, flush=True)
`;

/** Plain git, no hardening: what the repository would do to a git that trusts it. */
function plainGit(cwd: string, ...args: string[]): void {
  try {
    execFileSync('git', ['-c', 'safe.directory=*', ...args], {
      cwd,
      stdio: 'pipe',
      env: { PATH: process.env.PATH ?? '', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' },
    });
  } catch {
    // a trap may make git fail; only the marker matters
  }
}

/** `variant`: servers started another way than bubblewrap (test/helpers/container-sim.ts LANDLOCK_SIM). */
export function gitSuite(as: RunAs, variant?: SuiteVariant): void {
  const d = canRunAs(as, 'the git code-execution attacks', variant?.need) ? describe : describe.skip;
  const label = variant ? `, ${variant.label}` : '';
  d(`git never runs a repository's program with the server's power, server as ${as}${label}`, () => {
    let ws: string;
    let rt: string;
    let canary: string;
    let marker: string;
    let srv: BinServer;
    const fired = () => readFileSync(marker, 'utf8');
    /** git as the test (root) in a repository that may be nobody's. */
    const g = (...args: string[]) => git(ws, '-c', 'safe.directory=*', ...args);
    const chownTree = (p: string) => execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, p]);

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-git2-ws-', as);
      rt = ownedDir(tmpdir(), 'wb-git2-rt-', as);
      marker = markerFile(tmpdir(), 'wb-git2-canary-', as);
      canary = path.dirname(marker);
      const w = (rel: string, body: string) => writeFileSync(path.join(ws, rel), body);
      g('init', '-q', '-b', 'main');
      w('a.txt', 'alpha\n');
      w('b.txt', 'beta\n');
      w('.gitattributes', 'a.txt filter=zz\n*.txt diff=tc\nb.txt filter=inc\n');
      g('add', '-A');
      g('commit', '-q', '-m', 'first');
      w('b.txt', 'beta\nbeta 2\n');
      g('commit', '-q', '-am', 'second');
      w('b.txt', 'beta\nbeta 2\nbeta 3\n'); // dirty: status, diff and blame read (and would filter) it
      const future = new Date(Date.now() + 5000);
      utimesSync(path.join(ws, 'a.txt'), future, future); // stale in the index: git re-reads (and filters) it
      const plain = readFileSync(path.join(ws, '.git', 'config'), 'utf8');
      w('.git/config.plain', plain);
      w('.git/config.evil', `${plain}[filter "zz"]\n\tclean = "sh -c 'id >> ${marker}; cat'"\n`);
      w('.git/swap.py', SWAPPER);
      // The trap of the single shots: a program in the repository (the only place it can be once git is
      // confined), behaving like cat for filters and textconv.
      w(
        '.git/trap.sh',
        `#!/bin/sh\necho "$0 $*: $(id)" >> ${marker}\nif [ $# -eq 1 ] && [ -f "$1" ]; then cat "$1"; elif [ $# -eq 0 ]; then cat; fi\nexit 0\n`,
      );
      chmodSync(path.join(ws, '.git', 'trap.sh'), 0o755);
      w('inc.cfg', `[filter "inc"]\n\tclean = ${path.join(ws, '.git', 'trap.sh')}\n\trequired = true\n`);
      if (as === 'nobody') chownTree(ws);
      srv = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        launcher: variant?.launcher(),
        env: variant?.env,
      });
    }, HUNG_MS);

    it('server_info names the jail git and ripgrep run in', async () => {
      const r = await call(srv.url, 'server_info', {});
      const jail = (r.sc as { git_search_sandbox: { in_use?: string; reason: string } }).git_search_sandbox;
      expect(jail.in_use, jail.reason).toBe(variant?.landlock ? 'landlock' : 'bwrap');
    });

    it('search_text answers through the jail: every match, nothing else', async () => {
      const r = await call(srv.url, 'search_text', { query: 'beta', include_globs: ['*.txt'] });
      expect(r.isError, r.text).toBe(false);
      const sc = r.sc as {
        matches?: Array<{ path: string; line: number; preview: string }>;
        engine?: string;
      };
      expect(sc.engine).toBeUndefined(); // ripgrep answered, not the JS engine
      expect(sc.matches?.map((m) => `${m.path}:${m.line}:${m.preview}`)).toEqual([
        'b.txt:1:beta',
        'b.txt:2:beta 2',
        'b.txt:3:beta 3',
      ]);
    });

    afterAll(async () => {
      await srv?.stop();
      for (const dir of [ws, rt, canary]) if (dir) rmSync(dir, { recursive: true, force: true });
    }, HUNG_MS);

    it(
      `race: .git/config swapped every ~1 ms to add a clean filter while git_status runs ${STATUS_CALLS} times (and git_diff ${DIFF_CALLS}): the filter never runs`,
      async () => {
        const sw = await call(srv.url, 'exec_command', { cmd: 'python3 .git/swap.py', yield_time_ms: 1000 });
        expect(sw.isError, sw.text).toBe(false);
        const ready = await pollUntil(srv.url, sw.sc.command_id, /ready/, '', sw.sc.stdout ?? '');
        expect(ready.stdout, JSON.stringify(ready.last.sc)).toMatch(/ready/);
        const counts: Record<string, number> = {};
        let firstHit = -1;
        try {
          await inLanes(STATUS_CALLS + DIFF_CALLS, 2, async (i) => {
            const tool = i % 5 === 4 ? 'git_diff' : 'git_status';
            const o = await outcome(srv.url, tool, {});
            counts[`${tool} ${o.word}`] = (counts[`${tool} ${o.word}`] ?? 0) + 1;
            if (firstHit < 0 && fired() !== '') firstHit = i;
          });
        } finally {
          writeFileSync(path.join(ws, '.git', 'stop-swap'), '');
        }
        const done = await pollUntil(srv.url, sw.sc.command_id, /swaps \d+/, '', ready.stdout);
        if (done.last.sc.status === 'running')
          await call(srv.url, 'kill_command', { command_id: sw.sc.command_id });
        const swaps = Number(/swaps (\d+)/.exec(done.stdout)?.[1] ?? 0);
        console.log(
          `[git race ${as}] swaps=${swaps} ${JSON.stringify(counts)} first hit at call ${firstHit}`,
        );
        expect(fired(), `the filter ran (first seen after call ${firstHit})`).toBe('');
        expect(counts['git_status HUNG'] ?? 0).toBe(0);
        expect(counts['git_status ok'] ?? 0, 'no git_status succeeded').toBeGreaterThan(0);
        expect(swaps, 'the config was hardly swapped: the race was not exercised').toBeGreaterThanOrEqual(
          MIN_SWAPS,
        );
        writeFileSync(path.join(ws, '.git', 'config'), readFileSync(path.join(ws, '.git', 'config.plain')));
      },
      TEST_CEILING_MS,
    );

    /** Sets `config` (key, value pairs), shows plain git running the trap, then calls every tool in `calls`. */
    async function singleShot(
      config: Array<[string, string]>,
      control: string[][],
      calls: Array<[string, Record<string, unknown>]>,
    ) {
      truncateSync(marker, 0);
      for (const [k, v] of config) g('config', k, v);
      if (as === 'nobody') chownTree(path.join(ws, '.git'));
      try {
        for (const args of control) plainGit(ws, ...args);
        expect(fired(), `plain git ${JSON.stringify(control)} should have run the trap`).not.toBe('');
        truncateSync(marker, 0);
        const words: string[] = [];
        for (const [tool, args] of calls) words.push(`${tool} ${(await outcome(srv.url, tool, args)).word}`);
        console.log(`[git single ${as}] ${config.map((c) => c[0]).join(',')}: ${words.join(', ')}`);
        expect(fired(), `a tool ran the trap (${words.join(', ')})`).toBe('');
        expect(words.filter((x) => x.endsWith('HUNG'))).toEqual([]);
      } finally {
        for (const [k] of config) g('config', '--unset', k);
      }
    }
    const trap = () => path.join(ws, '.git', 'trap.sh');

    it('single shot: core.fsmonitor naming a program in the repository never runs (git_status, git_diff)', async () => {
      await singleShot(
        [['core.fsmonitor', trap()]],
        [['status']],
        [
          ['git_status', {}],
          ['git_diff', {}],
        ],
      );
    });

    it('single shot: diff.external never runs (git_diff, git_show, git_log)', async () => {
      await singleShot(
        [['diff.external', trap()]],
        [['diff']],
        [
          ['git_diff', {}],
          ['git_show', {}],
          ['git_log', { path: 'b.txt' }],
        ],
      );
    });

    it('single shot: a textconv driver never runs (git_diff, git_show, git_log, git_blame)', async () => {
      await singleShot(
        [['diff.tc.textconv', trap()]],
        [['diff'], ['blame', 'b.txt']],
        [
          ['git_diff', {}],
          ['git_show', {}],
          ['git_log', { path: 'b.txt' }],
          ['git_blame', { path: 'b.txt' }],
          ['git_blame', { path: 'b.txt', rev: 'HEAD' }],
        ],
      );
    });

    it('single shot: a clean filter defined only in an include.path file never runs (git_status, git_diff, git_blame)', async () => {
      await singleShot(
        [['include.path', path.join(ws, 'inc.cfg')]],
        [['status'], ['diff']],
        [
          ['git_status', {}],
          ['git_diff', {}],
          ['git_blame', { path: 'b.txt' }],
        ],
      );
    });
  });
}
