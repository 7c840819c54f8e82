// A sandbox per command, prepared ahead (docs/security-model.md): KEPT_READY sandboxes wait with wb-exec at
// their end, set up again in a quiet moment, and the next command becomes one of them — with exactly its own
// argv, directory, environment and input. Once a burst of commands used them up, the command that found none
// starts the usual way and asks for the next as it starts, which the command after it becomes. A prepared
// sandbox is used once, dies with its helper and is gone after shutdown. wb-exec itself reads one request and
// not a byte more, and refuses anything else. Real servers with bubblewrap (skipped with the reason elsewhere,
// a failure under CI=true); the burst is made of commands that keep running, so no command ends (and nothing
// is set up again) until the test ends them. wb-exec's own cases need only the built program.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtProgram } from '../../src/process/native.js';
import { PreparedPool } from '../../src/process/spawner/prepared.js';
import { helperPath } from '../../src/process/spawner/spawner.js';
import { KEPT_READY, startRequest } from '../../src/process/spawner/prepared-sandbox.js';
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

  /** Once what earlier commands' ends asked for ran (core/quiet.ts runs deferred work in order), KEPT_READY wait. */
  async function settled(): Promise<number[]> {
    await new Promise<void>((resolve) => srv.runtime.quiet.later(resolve));
    expect(await waitFor(() => waiting().length === KEPT_READY)).toBe(true);
    return waiting();
  }

  async function running(marker: string): Promise<{ id: string; pid: number }> {
    const r = await call(srv.url, 'exec_command', { cmd: `sleep ${marker}`, yield_time_ms: 100 });
    expect(r.sc.status).toBe('running');
    expect(await waitFor(() => processesWith(marker).length === 1)).toBe(true);
    return { id: r.sc.command_id as string, pid: processesWith(marker)[0] as number };
  }

  beforeAll(async () => {
    ws = makeWorkspace({ 'sub/keep.txt': 'x\n' });
    srv = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'bwrap' } });
    await srv.runtime.commands.whenUp();
    // Until the helper answered one command, a command may start in the server itself: make it answer one.
    await waitFor(async () => (await call(srv.url, 'exec_command', { cmd: 'true' })).sc.status === 'exited');
  });

  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('a command becomes one of the waiting sandboxes; the next is set up in a quiet moment, not as it starts', async () => {
    const ready = await settled();
    const before = srv.runtime.commands.helper.starts.prepared;
    const marker = uniqueMarker();
    const { id, pid } = await running(marker);
    // bash -c execs a lone simple command: the process that waited is now `sleep`.
    expect(ready).toContain(pid);
    expect(cmdlineOf(pid).startsWith('sleep ')).toBe(true);
    expect(srv.runtime.commands.helper.starts.prepared).toBe(before + 1);
    // The other one still waits, and nothing was asked for as the command started.
    expect(waiting()).toEqual(ready.filter((p) => p !== pid));
    await call(srv.url, 'kill_command', { command_id: id });
    expect(await waitFor(() => processesWith(marker).length === 0)).toBe(true);
    expect((await settled()).includes(pid)).toBe(false);
  });

  it('a burst that used up the waiting sandboxes: the command that found none starts the usual way and asks for the next, which the command after it becomes', async () => {
    const ready = await settled();
    const marks = [uniqueMarker(), uniqueMarker(), uniqueMarker(), uniqueMarker()];
    const started: Array<{ id: string; pid: number }> = [];
    // The first KEPT_READY become the waiting ones.
    for (const m of marks.slice(0, KEPT_READY)) started.push(await running(m));
    expect(started.map((s) => s.pid).sort()).toEqual([...ready].sort());
    expect(waiting()).toEqual([]);
    // The next found none: its own bubblewrap runs the command itself, and it asked for the next one.
    const cold = await running(marks[KEPT_READY] as string);
    started.push(cold);
    expect(sandboxArgvOf(cold.pid)).toContain(`sleep ${marks[KEPT_READY]}`);
    expect(sandboxArgvOf(cold.pid)).not.toContain('wb-exec');
    // Held while commands run (at most the helper's PREPARE_WAIT_MS), then set up: the next command becomes it.
    expect(await waitFor(() => waiting().length === 1)).toBe(true);
    const [next] = waiting() as [number];
    const last = await running(marks[KEPT_READY + 1] as string);
    started.push(last);
    expect(last.pid).toBe(next);
    // Still in the burst: it asked for the one after it as it started.
    expect(await waitFor(() => waiting().length === 1 && waiting()[0] !== next)).toBe(true);
    for (const s of started) {
      const k = await call(srv.url, 'kill_command', { command_id: s.id });
      expect(k.sc.status).not.toBe('running');
    }
    // The burst is over: the next quiet moment makes KEPT_READY again.
    await settled();
  });

  it('a command gets exactly its own directory, environment, input and exit status', async () => {
    await settled();
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
    await settled();
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
    const old = await settled();
    const helper = srv.runtime.commands.helper.helperPid as number;
    expect(descendantsOf(helper).map((p) => p.pid)).toEqual(expect.arrayContaining(old));
    signal(helper, 'SIGKILL');
    expect(await waitFor(() => old.every((p) => !procTable().has(p)))).toBe(true);
    // Once the server saw its helper go, the next command goes to the next one.
    expect(await waitFor(() => (srv.runtime.commands.helper.helperPid ?? helper) !== helper)).toBe(true);
    await srv.runtime.commands.whenUp();
    const r = await call(srv.url, 'exec_command', { cmd: 'echo after', yield_time_ms: 30_000 });
    expect(r.sc.stdout).toBe('after\n');
    await settled();
    await srv.close();
    expect(await waitFor(() => waiting().length === 0)).toBe(true);
  });
});

// The helper's side of the protocol, with the built helper forked as the server forks it and wb-exec alone as the
// sandbox (no bubblewrap needed): what it keeps, what a drop lets go, and what a spawn naming one runs in.
const helperFile = helperPath();
(starter && helperFile ? describe : describe.skip)(
  'the spawner helper keeps at most KEPT_READY, and lets a dropped one go',
  () => {
    let helper: ChildProcess;
    const got: Array<Record<string, unknown>> = [];
    const send = (m: Record<string, unknown>) => helper.send(m);
    const kept = () =>
      descendantsOf(helper.pid as number)
        .filter((p) => p.cmdline === starter && p.state !== 'Z')
        .map((p) => p.pid)
        .sort((a, b) => a - b);
    const prepare = (n: number) => send({ t: 'prepare', n, argv: [starter], cwd: '/' });
    const message = (pred: (m: Record<string, unknown>) => boolean) => waitFor(() => got.some(pred));

    beforeAll(async () => {
      helper = fork(helperFile as string, [], {
        env: {},
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        serialization: 'advanced',
      });
      helper.on('message', (m: Record<string, unknown>) => got.push(m));
      expect(await message((m) => m.t === 'ready')).toBe(true);
    });

    afterAll(() => {
      if (helper?.connected) helper.disconnect();
    });

    it('keeps KEPT_READY, drops the one named, lets the oldest go past KEPT_READY; a spawn runs in the one it names or the usual way', async () => {
      const dir = makeWorkspace({}).dir;
      prepare(1);
      prepare(2);
      expect(await waitFor(() => kept().length === KEPT_READY)).toBe(true);
      const [one, two] = kept() as [number, number];
      send({ t: 'drop', n: 1 });
      expect(await waitFor(() => kept().length === 1)).toBe(true);
      expect(kept()).toEqual([two]);
      prepare(3);
      expect(await waitFor(() => kept().length === KEPT_READY)).toBe(true);
      const three = kept().find((p) => p !== two) as number;
      prepare(4);
      // Past KEPT_READY the oldest (2) goes, however the server came to ask for more.
      expect(await waitFor(() => kept().length === KEPT_READY && !kept().includes(two))).toBe(true);
      expect(kept()).toContain(three);
      const spawn = (id: number, warm: number, tag: string) =>
        send({
          t: 'spawn',
          id,
          argv: ['/bin/sh', '-c', `echo ${tag} $$`],
          cwd: dir,
          env: { PATH: '/usr/bin:/bin' },
          sandboxed: false,
          warm: { n: warm, argv: ['/bin/sh', '-c', `echo ${tag} $$`] },
        });
      const out = (id: number) =>
        Buffer.concat(
          got.filter((m) => m.t === 'out' && m.id === id).map((m) => Buffer.from(m.d as Uint8Array)),
        ).toString();
      const spawned = (id: number) => got.find((m) => m.t === 'spawned' && m.id === id);
      spawn(1, 3, 'prepared');
      expect(await message((m) => m.t === 'exit' && m.id === 1)).toBe(true);
      expect(spawned(1)?.warm).toBe(true);
      expect(out(1)).toBe(`prepared ${three}\n`);
      // The dropped one (1) is gone: a spawn naming it starts the usual way.
      spawn(2, 1, 'cold');
      expect(await message((m) => m.t === 'exit' && m.id === 2)).toBe(true);
      expect(spawned(2)?.warm).toBe(false);
      expect(out(2)).toMatch(/^cold \d+\n$/);
      expect([one, two, three]).not.toContain(Number(out(2).split(' ')[1]));
      // Those still waiting go with the helper.
      const left = kept();
      expect(left).toHaveLength(KEPT_READY - 1);
      helper.disconnect();
      expect(await waitFor(() => left.every((p) => !procTable().has(p)))).toBe(true);
    });
  },
);

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
  it('only one built from the options a command gets now, and only once; the others are named to be dropped', () => {
    let argv = ['bwrap', '--a', '--', 'wb-exec'];
    let n = 0;
    const asked: number[] = [];
    const post = (m: { n: number }) => asked.push(m.n);
    const pool = new PreparedPool({ template: () => ({ argv, cwd: '/ws' }), nextCgroup: () => undefined });
    expect(pool.take()).toEqual({ stale: [] });
    pool.fill(() => ++n, post);
    pool.fill(() => ++n, post);
    expect(asked).toEqual([1, 2]);
    expect(pool.take()).toEqual({ ready: { n: 1, cgroup: undefined }, stale: [] });
    pool.fill(() => ++n, post);
    expect(asked).toEqual([1, 2, 3]);
    argv = ['bwrap', '--a', '--tmpfs', '/new-mask', '--', 'wb-exec'];
    expect(pool.take()).toEqual({ stale: [2, 3] });
    expect(pool.size).toBe(0);
  });
});

describe('when the next sandbox is asked for', () => {
  const pool = () => {
    let n = 0;
    const asked: number[] = [];
    const p = new PreparedPool({
      template: () => ({ argv: ['wb-exec'], cwd: '/ws' }),
      nextCgroup: () => undefined,
    });
    return {
      p,
      asked,
      fill: () =>
        p.fill(
          () => ++n,
          (m) => asked.push(m.n),
        ),
      after: () =>
        p.afterStart(
          () => ++n,
          (m) => asked.push(m.n),
        ),
    };
  };

  it(`a quiet moment asks for as many as make ${KEPT_READY}; a start that found one asks for nothing`, () => {
    const { p, asked, fill, after } = pool();
    fill();
    expect(asked).toEqual([1, 2]);
    for (let i = 0; i < KEPT_READY; i++) {
      expect(p.take().ready).toBeDefined();
      after();
    }
    expect(asked).toEqual([1, 2]);
    fill();
    expect(asked).toEqual([1, 2, 3, 4]);
  });

  it('once a start found none, each start that leaves none asks for the next; a quiet moment ends the burst', () => {
    const { p, asked, fill, after } = pool();
    fill();
    p.take();
    after();
    p.take();
    after();
    expect(asked).toEqual([1, 2]);
    expect(p.take().ready).toBeUndefined();
    after();
    expect(asked).toEqual([1, 2, 3]);
    expect(p.take().ready).toEqual({ n: 3, cgroup: undefined });
    after();
    expect(asked).toEqual([1, 2, 3, 4]);
    fill();
    expect(asked).toEqual([1, 2, 3, 4, 5]);
    p.take();
    after();
    p.take();
    after();
    expect(asked).toEqual([1, 2, 3, 4, 5]);
  });

  it('a quiet moment is waited for only when a fill has something to do', () => {
    const { p, fill, after } = pool();
    expect(p.wants()).toBe(true);
    fill();
    expect(p.wants()).toBe(false);
    p.take();
    after();
    expect(p.wants()).toBe(true);
    fill();
    const none = new PreparedPool({ template: () => undefined, nextCgroup: () => undefined });
    expect(none.wants()).toBe(false);
  });

  it('the helper going away forgets every one asked for, with the cgroups to clean up', () => {
    const cg = (i: number) => ({ dir: `/sys/fs/cgroup/x/c${i}`, home: '/sys/fs/cgroup/x', max: 10 });
    let i = 0;
    const p = new PreparedPool({
      template: () => ({ argv: ['wb-exec'], cwd: '/ws' }),
      nextCgroup: () => cg(++i),
    });
    p.fill(
      () => i,
      () => {},
    );
    expect(p.forget()).toEqual([cg(1), cg(2)]);
    expect(p.take()).toEqual({ stale: [] });
  });
});
