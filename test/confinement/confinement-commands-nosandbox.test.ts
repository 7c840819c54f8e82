// The command side of the confinement attacks: without an OS sandbox (SERVICE_SANDBOX=off, what `auto` falls
// back to where bubblewrap cannot run) the reports say plainly that `safe` then only filters command lines
// and cannot stop a script — check_exec_environment, server_info and the start-up banner — and a command
// tree's process count is still bounded (a pids cgroup as root, else the watchdog). Needs no bubblewrap.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { call, followToEnd, forkStormPy, waitFor } from '../exec/exec-support.js';

const LIMIT = 64;
const MARK = `nosandbox-storm-${randomBytes(6).toString('hex')}`;

describe('no sandbox available (SERVICE_SANDBOX=off)', () => {
  let ws: TempWorkspace;
  let srv: SpawnedServer;

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'alpha\n' });
    srv = await startServer({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'off', SERVICE_EXEC_MAX_PROCESSES: String(LIMIT) },
    });
  });
  afterAll(async () => {
    await srv?.stop();
    ws?.cleanup();
  });

  it('the start-up banner says safe only filters command lines and cannot stop a script', async () => {
    expect(await waitFor(() => /cannot stop a script/.test(srv.stderr()))).toBe(true);
    expect(srv.stderr()).toMatch(/permission mode safe without an OS sandbox cannot stop a script/);
  });

  it('check_exec_environment says so in its warnings and policy, and reports the process limit', async () => {
    const r = await call(srv.url, 'check_exec_environment');
    expect(r.sc.sandbox.in_use).toBeUndefined();
    expect(r.sc.warnings.join('\n')).toMatch(
      /safe mode now only filters command lines and cannot stop a script/,
    );
    expect(r.sc.policy.writes_outside_workspace).toMatch(/command-line policy only/);
    expect(r.sc.policy.network).toMatch(/command-line policy only/);
    expect(r.sc.process_limit).toMatchObject({ max_processes: LIMIT });
    expect(r.sc.limits.max_processes).toBe(LIMIT);
    expect(r.text).toMatch(/Processes per command: at most 64/);
  });

  it('server_info says so and reports the process limit', async () => {
    const r = await call(srv.url, 'server_info');
    expect(r.text).toMatch(/WARNING: no OS sandbox, so permission mode safe only filters command lines/);
    expect(r.sc.sandbox.reason).toMatch(/only filters command lines/);
    expect(r.sc.process_limit.max_processes).toBe(LIMIT);
    expect(r.sc.limits.exec_max_processes).toBe(LIMIT);
  });

  it('exec_command workdir: a 300-character name (ENAMETOOLONG) and a symlink loop (ELOOP) are specific errors, never INTERNAL_ERROR', async () => {
    symlinkSync('loop-b', path.join(ws.dir, 'loop-a'));
    symlinkSync('loop-a', path.join(ws.dir, 'loop-b'));
    for (const workdir of ['n'.repeat(300), 'loop-a', `loop-a/x`]) {
      const r = await call(srv.url, 'exec_command', { cmd: 'true', workdir });
      expect(r.isError, workdir).toBe(true);
      expect(r.sc.error.code, workdir).not.toBe('INTERNAL_ERROR');
      expect(r.sc.error.message, workdir).not.toMatch(/internal/i);
    }
  });

  it('a refusal says no kernel sandbox stands behind the policy here', async () => {
    const r = await call(srv.url, 'exec_command', { cmd: 'find . -delete' });
    expect(r.sc.error.code).toBe('PERMISSION_REQUIRED');
    expect(r.sc.error.message).toMatch(/second line; no kernel sandbox is in use here/);
  });

  it(`a bounded fork storm (2000) without a sandbox still stops at the process limit (${LIMIT})`, async () => {
    const py = forkStormPy(MARK);
    const started = await call(srv.url, 'exec_command', { cmd: `exec python3 -c '${py}'`, yield_time_ms: 0 });
    const { out, err } = await followToEnd(srv.url, started);
    const info = await call(srv.url, 'server_info');
    if (info.sc.process_limit.enforced_by.startsWith('cgroup')) {
      expect(Number(/forked (\d+)/.exec(out)?.[1])).toBeLessThan(LIMIT);
      expect(err).toMatch(/reached its limit of 64 processes/);
    } else expect(err).toMatch(/grew past 64 processes/);
    // The forked children were in the command's process group: ended with it.
    const alive = () => spawnSync('pgrep', ['-f', MARK], { encoding: 'utf8' }).stdout.trim();
    expect(await waitFor(() => alive() === '')).toBe(true);
    expect((await call(srv.url, 'exec_command', { cmd: 'echo alive' })).sc.stdout).toBe('alive\n');
  });
});
