// Commands without a sandbox are prepared ahead too where it pays (docs/security-model.md, "A sandbox per
// command, prepared ahead"): where moving a process into a cgroup waits (no thread moves), wb-exec waits in the
// next command's pids cgroup in `dangerous`, so the move is paid between commands (KEPT_READY of them wait); the
// next pipe command becomes one of those very processes, with exactly its own directory, environment, input and
// exit status, and a command whose directory cannot be entered still fails to start. WB_TEST_PREPARE_ALONE=1 takes that path on any host. Where a
// command is born in its cgroup by the helper's thread (cgroup v1), nothing waits and commands start the usual
// way, each in a cgroup of its own.
import { mkdirSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_READY } from '../../src/process/spawner/prepared-sandbox.js';
import { descendantsOf } from '../helpers/hostile-bin.js';
import { needBuilt } from '../helpers/native.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { call, waitFor } from './exec-support.js';

/**
 * The wb-exec processes waiting below this test process (the in-process server's helper's), by pid; not the
 * tool jails' (bound at /run/wb-exec inside bubblewrap).
 */
function waiting(): number[] {
  return descendantsOf(process.pid)
    .filter((p) => p.cmdline.endsWith('/wb-exec') && !p.cmdline.includes(' ') && p.cmdline !== '/run/wb-exec')
    .filter((p) => p.state !== 'Z')
    .map((p) => p.pid);
}

(needBuilt(['wb-exec'], 'commands prepared ahead without a sandbox') ? describe : describe.skip)(
  'commands prepared ahead without a sandbox (dangerous)',
  () => {
    let ws: TempWorkspace;
    let srv: InProcessServer;

    beforeAll(async () => {
      ws = makeWorkspace({ 'sub/keep.txt': 'x\n' });
      srv = await startInProcess({
        workspace: ws.dir,
        env: { SERVICE_PERMISSION_MODE: 'dangerous', WB_TEST_PREPARE_ALONE: '1' },
      });
      await srv.runtime.commands.whenUp();
      await waitFor(
        async () => (await call(srv.url, 'exec_command', { cmd: 'true' })).sc.status === 'exited',
      );
    });

    afterAll(async () => {
      await srv?.close();
      ws?.cleanup();
    });

    /** Once what earlier commands' ends asked for ran (core/quiet.ts, in order), KEPT_READY wait. */
    async function settled(): Promise<number[]> {
      await new Promise<void>((resolve) => srv.runtime.quiet.later(resolve));
      expect(await waitFor(() => waiting().length === KEPT_READY)).toBe(true);
      return waiting();
    }

    it('the next command becomes a waiting process, with its own directory, environment, input and status', async () => {
      const ready = await settled();
      const r = await call(srv.url, 'exec_command', {
        cmd: 'echo "pid=$$"; printf "[%s]" "$WB_PREPARED"; pwd; head -c 5; echo; exit 3',
        workdir: 'sub',
        env: { WB_PREPARED: 'a value' },
        stdin: 'hello world',
        yield_time_ms: 30_000,
      });
      expect(r.sc.status).toBe('exited');
      expect(r.sc.exit_code).toBe(3);
      const pid = Number(/^pid=(\d+)/.exec(String(r.sc.stdout))?.[1]);
      expect(ready).toContain(pid);
      expect(r.sc.stdout).toBe(`pid=${pid}\n[a value]${path.join(ws.dir, 'sub')}\nhello\n`);
      expect((await settled()).includes(pid)).toBe(false);
    });

    it('commands one right after another: each becomes a waiting process, its move awaited, but one that found them used up', async () => {
      // The ones kept ready are made again in a quiet moment. A command that finds them used up starts the usual
      // way and asks for the next as it starts; that one's move into its cgroup (a kernel grace period) may still
      // run when the next call comes a moment later: that command waits for the move instead of starting another
      // process the usual way. Whether a quiet moment falls between two calls is the machine's doing, so what is
      // checked holds either way: a command that started the usual way is followed by one that did not.
      await settled();
      const kinds: Array<'prepared' | 'cold'> = [];
      for (let i = 0; i < 12; i++) {
        const before = { ...srv.runtime.commands.helper.starts };
        const r = await call(srv.url, 'exec_command', { cmd: 'true', yield_time_ms: 30_000 });
        expect(r.sc.status).toBe('exited');
        const after = srv.runtime.commands.helper.starts;
        expect(after.prepared + after.cold).toBe(before.prepared + before.cold + 1);
        kinds.push(after.prepared > before.prepared ? 'prepared' : 'cold');
      }
      expect(kinds.slice(0, KEPT_READY)).toEqual(Array(KEPT_READY).fill('prepared'));
      expect(kinds.join(' ')).not.toMatch(/cold cold/);
      // A cold start needs KEPT_READY prepared ones before it since the last quiet moment or cold start.
      expect(kinds.filter((k) => k === 'cold').length).toBeLessThanOrEqual(Math.ceil(12 / (KEPT_READY + 1)));
      await settled();
    });

    it('a directory that cannot be entered fails the start, and the waiting processes stay for the next', async () => {
      const ready = await settled();
      const gone = path.join(ws.dir, 'gone');
      mkdirSync(gone);
      rmdirSync(gone);
      const c = srv.runtime.commands.start({
        cmd: 'true',
        cwd: gone,
        workdir: 'gone',
        timeoutMs: 5000,
        maxOutputBytes: 65536,
        stdin: '',
        env: {},
        tty: false,
      });
      expect(await waitFor(() => !c.running)).toBe(true);
      expect(c.status).toBe('failed');
      expect(waiting()).toEqual(ready);
    });
  },
);

describe('commands without a sandbox where nothing needs preparing (dangerous, no seam)', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;

  beforeAll(async () => {
    ws = makeWorkspace({});
    srv = await startInProcess({ workspace: ws.dir, env: { SERVICE_PERMISSION_MODE: 'dangerous' } });
    await srv.runtime.commands.whenUp();
  });

  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('wb-exec waits only where a cgroup move would wait; elsewhere each command starts in a cgroup of its own', async () => {
    const limiter = srv.runtime.commands.processLimit();
    const before = { ...srv.runtime.commands.helper.starts };
    const cgroups: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await call(srv.url, 'exec_command', {
        cmd: 'grep -h pids /proc/self/cgroup || echo none',
        yield_time_ms: 30_000,
      });
      expect(r.sc.exit_code, r.text).toBe(0);
      cgroups.push(String(r.sc.stdout).trim());
    }
    const after = srv.runtime.commands.helper.starts;
    if (limiter.moveWaits) {
      expect(await waitFor(() => waiting().length === KEPT_READY)).toBe(true);
      expect(after.prepared - before.prepared).toBeGreaterThan(0);
      return;
    }
    // Nothing prepared, nothing waiting: every command was started by the helper itself.
    expect(after.prepared - before.prepared).toBe(0);
    expect(waiting()).toEqual([]);
    if (limiter.usesCgroup) {
      // Born inside its own pids cgroup: four commands, four cgroups of this instance.
      expect(
        cgroups.every((c) => /workbench-mcp-/.test(c)),
        cgroups.join('\n'),
      ).toBe(true);
      expect(new Set(cgroups).size).toBe(4);
    }
  });
});
