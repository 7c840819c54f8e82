// A sandbox per command, prepared ahead (docs/security-model.md): when a command ends (and, when commands come
// back to back, as each starts) the next command's sandbox is set up with wb-exec waiting at its end, and the
// next command becomes that process — with exactly its own argv, directory, environment and input. A prepared
// sandbox is used once, dies with its helper and is gone after shutdown. wb-exec itself reads one request and
// not a byte more, and refuses anything else. Real servers with bubblewrap (skipped with the reason elsewhere,
// a failure under CI=true), on a clock the test moves, so "back to back" is decided by the test, not by the
// machine's speed; wb-exec's own cases need only the built program.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { builtProgram } from '../../src/process/native.js';
import { BACK_TO_BACK_MS, PreparedPool } from '../../src/process/spawner/prepared.js';
import { startRequest } from '../../src/process/spawner/prepared-sandbox.js';
import { descendantsOf, procTable, signal } from '../helpers/hostile-bin.js';
import { needBuilt } from '../helpers/native.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { call, needBwrap, processesWith, uniqueMarker, waitFor } from './exec-support.js';

const starter = builtProgram('wb-exec');

/** The wb-exec processes waiting below this test process, by pid. */
function waiting(): number[] {
  return descendantsOf(process.pid)
    .filter((p) => p.cmdline.split(' ')[0]?.endsWith('/wb-exec'))
    .map((p) => p.pid);
}

/** The argv of the bubblewrap a process runs under (its nearest ancestor that is bwrap), '' if none. */
function sandboxArgvOf(pid: number): string {
  const table = procTable();
  for (let p = table.get(pid); p; p = table.get(p.ppid))
    if (p.cmdline.split(' ')[0]?.endsWith('bwrap')) return p.cmdline;
  return '';
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

const d =
  needBwrap('sandboxes prepared ahead') && needBuilt(['wb-exec', 'wb-netbridge'], 'sandboxes prepared ahead')
    ? describe
    : describe.skip;

d('a sandbox per command, prepared ahead', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  // Stands still unless moved: every command comes back to back with the last one's end until the test says not.
  const clock = new ManualClock();

  beforeAll(async () => {
    ws = makeWorkspace({ 'sub/keep.txt': 'x\n' });
    srv = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'bwrap' }, clock });
    await srv.runtime.commands.whenUp();
    // Until the helper answered one command, a command may start in the server itself: make it answer one.
    await waitFor(async () => (await call(srv.url, 'exec_command', { cmd: 'true' })).sc.status === 'exited');
  });

  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('the next command becomes the waiting sandbox; back to back, another one is prepared while it runs', async () => {
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    const [ready] = waiting() as [number];
    const marker = uniqueMarker();
    const r = await call(srv.url, 'exec_command', { cmd: `sleep ${marker}`, yield_time_ms: 100 });
    expect(r.sc.status).toBe('running');
    // bash -c execs a lone simple command: the process that waited is now `sleep`.
    expect(await waitFor(() => cmdlineOf(ready).startsWith('sleep '))).toBe(true);
    expect(processesWith(marker)).toEqual([ready]);
    expect(await waitFor(() => waiting().length === 1 && waiting()[0] !== ready)).toBe(true);
    await call(srv.url, 'kill_command', { command_id: r.sc.command_id });
    expect(await waitFor(() => processesWith(marker).length === 0)).toBe(true);
  });

  it('after a pause a command runs alone: the next sandbox is asked for when it ends, not while it runs', async () => {
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    const [ready] = waiting() as [number];
    clock.advance(BACK_TO_BACK_MS);
    const first = uniqueMarker();
    const r1 = await call(srv.url, 'exec_command', { cmd: `sleep ${first}`, yield_time_ms: 100 });
    expect(r1.sc.status).toBe('running');
    expect(await waitFor(() => cmdlineOf(ready).startsWith('sleep '))).toBe(true);
    // Had the first one's start asked for a sandbox, the second would be given it; it starts the usual way.
    const second = uniqueMarker();
    const r2 = await call(srv.url, 'exec_command', { cmd: `sleep ${second}`, yield_time_ms: 100 });
    expect(r2.sc.status).toBe('running');
    expect(await waitFor(() => processesWith(second).length === 1)).toBe(true);
    const [pid2] = processesWith(second) as [number];
    expect(sandboxArgvOf(pid2)).toContain(`sleep ${second}`);
    expect(sandboxArgvOf(pid2)).not.toContain('wb-exec');
    expect(waiting()).toEqual([]);
    for (const r of [r1, r2]) {
      const k = await call(srv.url, 'kill_command', { command_id: r.sc.command_id });
      expect(k.sc.status).not.toBe('running');
    }
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
  });

  it('a command gets exactly its own directory, environment, input and exit status', async () => {
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    const value = 'two words\nand = a line';
    const r = await call(srv.url, 'exec_command', {
      cmd: 'printf "[%s]" "$WB_PREPARED"; pwd; head -c 11; echo; exit 7',
      workdir: 'sub',
      env: { WB_PREPARED: value },
      stdin: 'hello world and more',
      yield_time_ms: 30_000,
    });
    expect(r.sc.status).toBe('exited');
    expect(r.sc.exit_code).toBe(7);
    expect(r.sc.stdout).toBe(`[${value}]${path.join(ws.dir, 'sub')}\nhello world\n`);
    // Nothing of the helper's or bwrap's own environment is added, and nothing of the last command's: the
    // variables the server gives every command, and the ones bash itself exports.
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    const env = await call(srv.url, 'exec_command', {
      cmd: "env | sed -n 's/=.*//p'",
      yield_time_ms: 30_000,
    });
    const names = (env.sc.stdout as string).split('\n').filter(Boolean);
    const preview = srv.runtime.commands.childEnvPreview();
    const expected = [...preview.inherited, ...Object.keys(preview.set), 'PWD', 'SHLVL', '_'];
    expect([...new Set(names)].sort()).toEqual([...new Set(expected)].sort());
  });

  it('a prepared sandbox dies with its helper; the next helper prepares its own; none outlives the server', async () => {
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    const [old] = waiting() as [number];
    const helper = srv.runtime.commands.helper.helperPid as number;
    expect(descendantsOf(helper).map((p) => p.pid)).toContain(old);
    signal(helper, 'SIGKILL');
    expect(await waitFor(() => !procTable().has(old))).toBe(true);
    // Once the server saw its helper go, the next command goes to the next one.
    expect(await waitFor(() => (srv.runtime.commands.helper.helperPid ?? helper) !== helper)).toBe(true);
    await srv.runtime.commands.whenUp();
    const r = await call(srv.url, 'exec_command', { cmd: 'echo after', yield_time_ms: 30_000 });
    expect(r.sc.stdout).toBe('after\n');
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    await srv.close();
    expect(await waitFor(() => waiting().length === 0)).toBe(true);
  });
});

const s = starter ? describe : describe.skip;

s('wb-exec reads one request, then is the command', () => {
  const run = (input: Buffer, args: string[] = []) =>
    spawnSync(starter as string, args, { input, encoding: 'utf8' });

  it('execs argv in the directory with the environment; what follows the request is the input', () => {
    const dir = makeWorkspace({}).dir;
    mkdirSync(path.join(dir, 'd'));
    const req = startRequest(path.join(dir, 'd'), ['/bin/sh', '-c', 'pwd; echo "$A"; cat', 'sh'], {
      A: 'b c',
    });
    const r = run(Buffer.concat([req, Buffer.from('rest of input')]));
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${path.join(dir, 'd')}\nb c\nrest of input`);
    const env = run(startRequest('/', ['/usr/bin/env'], { ONLY: '1' }));
    expect(env.stdout).toBe('ONLY=1\n');
  });

  it('end of input before a request: exits 0 and runs nothing', () => {
    const r = run(Buffer.alloc(0));
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
  });

  it('refuses a request it did not get whole, or one that does not add up (125), and says why', () => {
    const good = startRequest('/', ['/bin/echo', 'x'], {});
    const cases: Array<[Buffer, RegExp]> = [
      [Buffer.concat([Buffer.from('WBX0'), good.subarray(4)]), /WBX1/],
      [good.subarray(0, good.length - 2), /ended early/],
      [Buffer.concat([good.subarray(0, 8), Buffer.from([3, 0, 0, 0]), good.subarray(12)]), /fewer strings/],
      [Buffer.concat([good.subarray(0, 8), Buffer.from([1, 0, 0, 0]), good.subarray(12)]), /more strings/],
      [Buffer.concat([good.subarray(0, 12), Buffer.from([5, 0, 0, 0]), good.subarray(16)]), /fewer strings/],
      [
        Buffer.concat([good.subarray(0, 4), Buffer.from([0xff, 0xff, 0xff, 0x7f]), good.subarray(8)]),
        /length/,
      ],
    ];
    for (const [input, why] of cases) {
      const r = run(input);
      expect(r.status, r.stderr).toBe(125);
      expect(r.stderr).toMatch(why);
      expect(r.stdout).toBe('');
    }
    expect(run(good, ['extra']).status).toBe(125);
  });

  it('a directory it cannot enter is 126, a program that does not exist 127', () => {
    const noDir = run(startRequest('/nonexistent-dir', ['/bin/true'], {}));
    expect(noDir.status).toBe(126);
    expect(noDir.stderr).toMatch(/cannot enter \/nonexistent-dir/);
    const noProg = run(startRequest('/', ['/nonexistent-program'], {}));
    expect(noProg.status).toBe(127);
    expect(noProg.stderr).toMatch(/cannot run \/nonexistent-program/);
  });
});

describe('which prepared sandbox a command may use', () => {
  it('only one built from the options a command gets now, and only once', () => {
    let argv = ['bwrap', '--a', '--', 'wb-exec'];
    let n = 0;
    const asked: number[] = [];
    const pool = new PreparedPool({
      template: () => ({ argv, cwd: '/ws' }),
      nextCgroup: () => undefined,
      clock: new ManualClock(),
    });
    expect(pool.take()).toBeUndefined();
    pool.refill(
      () => ++n,
      (m) => asked.push(m.n),
    );
    pool.refill(
      () => ++n,
      (m) => asked.push(m.n),
    );
    expect(asked).toEqual([1]);
    expect(pool.take()).toEqual({ n: 1, cgroup: undefined });
    expect(pool.take()).toBeUndefined();
    pool.refill(
      () => ++n,
      (m) => asked.push(m.n),
    );
    argv = ['bwrap', '--a', '--tmpfs', '/new-mask', '--', 'wb-exec'];
    expect(pool.take()).toBeUndefined();
    expect(asked).toEqual([1, 2]);
  });
});

describe('when the next sandbox is asked for', () => {
  it('a command starting within BACK_TO_BACK_MS of the last end comes back to back; none before any end', () => {
    const clock = new ManualClock();
    const pool = new PreparedPool({ template: () => undefined, nextCgroup: () => undefined, clock });
    expect(pool.backToBack()).toBe(false);
    pool.ended();
    expect(pool.backToBack()).toBe(true);
    clock.advance(BACK_TO_BACK_MS - 1);
    expect(pool.backToBack()).toBe(true);
    clock.advance(1);
    expect(pool.backToBack()).toBe(false);
    pool.ended();
    expect(pool.backToBack()).toBe(true);
  });
});
