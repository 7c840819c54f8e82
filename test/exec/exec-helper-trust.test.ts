// The helper that starts pipe commands (src/process/spawner/spawner.ts) is not trusted blindly (README "Security
// model", rule B): a frame it never sent — written into its IPC socket from outside with pidfd_getfd, the way a
// command once could — replaces it without crashing the server, and a helper that stops answering (SIGSTOP) is
// replaced so that waiting calls return and new commands run. Needs root (pidfd_getfd of another process)
// and python3; skipped with the reason elsewhere, a failure under CI=true.
import { spawnSync } from 'node:child_process';
import { serialize } from 'node:v8';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { call, waitFor } from './exec-support.js';

const canRun = (): boolean => {
  const why =
    process.getuid?.() !== 0
      ? 'needs root (pidfd_getfd of the helper)'
      : spawnSync('python3', ['-c', '0']).status !== 0
        ? 'needs python3'
        : process.arch !== 'x64'
          ? 'the syscall numbers below are x86_64'
          : '';
  if (!why) return true;
  if (process.env.CI === 'true') throw new Error(`helper trust tests: ${why}`);
  console.log(`skipped: helper trust tests ${why}`);
  return false;
};

/** Writes `bytes` into descriptor 3 (the IPC channel) of `pid`, through a copy taken with pidfd_getfd. */
function writeIntoChannel(pid: number, bytes: Buffer): void {
  const py = [
    'import ctypes, os, sys',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'pidfd = libc.syscall(434, int(sys.argv[1]), 0)',
    'fd = libc.syscall(438, pidfd, 3, 0)',
    'assert fd >= 0, ctypes.get_errno()',
    'os.write(fd, bytes.fromhex(sys.argv[2]))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', py, String(pid), bytes.toString('hex')], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

/** A frame of Node's advanced IPC serialization: a 4-byte big-endian length, then the V8 payload. */
function frame(value: unknown): Buffer {
  const payload = serialize(value);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(payload.length);
  return Buffer.concat([head, payload]);
}

const d = canRun() ? describe : describe.skip;

d('the spawner helper is checked, not trusted', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;

  beforeEach(async () => {
    ws = makeWorkspace({});
    srv = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'auto' } });
    await srv.runtime.commands.whenUp();
    // The first command may start in this process while the helper comes up: wait until it answers one.
    expect((await call(srv.url, 'exec_command', { cmd: 'echo warm' })).sc.stdout).toBe('warm\n');
  });
  afterEach(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  const helperPid = () => srv.runtime.commands.helper.helperPid;

  for (const [name, value] of [
    ['null', null],
    ['an exit for a command it was never given', { t: 'exit', id: 999_999, code: 0, signal: null }],
    ['output with a string where bytes belong', { t: 'out', id: 1, fd: 1, d: 'all 312 tests passed' }],
  ] as const) {
    it(`a frame carrying ${name} replaces the helper; the server keeps serving`, async () => {
      const before = helperPid();
      expect(before).toBeGreaterThan(0);
      writeIntoChannel(before as number, frame(value));
      expect(await waitFor(() => helperPid() !== undefined && helperPid() !== before)).toBe(true);
      const r = await call(srv.url, 'exec_command', { cmd: 'echo ok; exit 7' });
      expect(r.sc.status).toBe('exited');
      expect(r.sc.exit_code).toBe(7);
      expect(r.sc.stdout).toBe('ok\n');
    });
  }

  it('a stopped helper is replaced: a waiting poll returns, the running command is reported, new commands run', async () => {
    const running = await call(srv.url, 'exec_command', {
      cmd: 'echo started; sleep 600',
      yield_time_ms: 1000,
    });
    expect(running.sc.status).toBe('running');
    const before = helperPid() as number;
    process.kill(before, 'SIGSTOP');
    try {
      const poll = await call(srv.url, 'write_stdin', {
        command_id: running.sc.command_id,
        yield_time_ms: 30_000,
      });
      // Replaced within seconds: the poll sees the end of the command, long before its deadline.
      expect(poll.sc.status).toBe('terminated');
      expect(poll.sc.signal).toBe('SIGKILL');
      expect(poll.sc.stderr).toMatch(/helper that relayed this command ended unexpectedly/);
      expect(helperPid()).not.toBe(before);
      const next = await call(srv.url, 'exec_command', { cmd: 'echo ok' });
      expect(next.sc.stdout).toBe('ok\n');
    } finally {
      try {
        process.kill(before, 'SIGCONT');
      } catch {
        /* killed already */
      }
    }
  });
});
