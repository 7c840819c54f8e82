// Tool jails prepared ahead, driven directly (src/process/jail/prepared-jail.ts, prepared-jails.ts, jail.ts): rule A
// stays whole — every run gets a jail no earlier run could touch (a file the first run writes in its /tmp is
// absent in the next, each run has its own pid and, in bubblewrap, its own PID namespace) even though each
// came prepared; a prepared jail is used only by a call whose jail is built from the same options (another
// directory for ripgrep's jail of one directory, another key) and is killed otherwise; wb-exec's WBX2 request
// refuses a directory that is not the one the server checked. Real bubblewrap, the real Landlock helper, real
// processes; the servers are jail-prepared-suite.ts.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  statSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followRun, runArgv } from '../../src/process/jail/argv.js';
import { ToolJail } from '../../src/process/jail/jail.js';
import { handOver, JailSlot, type PreparedCounts } from '../../src/process/jail/prepared-jail.js';
import { builtProgram } from '../../src/process/native.js';
import { createRuntimeDirs, removeRuntimeDirs, type RuntimeDirs } from '../../src/process/runtime-dir.js';
import { startRequest } from '../../src/process/start-request.js';
import { findRipgrep } from '../../src/workspace/search/engines.js';
import { needBwrap } from '../exec/exec-support.js';
import { containerLauncher } from '../helpers/container-sim.js';
import { needBuilt } from '../helpers/native.js';

const built = needBuilt(['wb-exec', 'wb-exec-static', 'wb-landlock'], 'tool jails prepared ahead');
const modes = [
  { mode: 'bwrap' as const, ok: built && needBwrap('tool jails prepared ahead in bubblewrap') },
  {
    mode: 'landlock' as const,
    ok: built && containerLauncher('tool jails prepared ahead on Landlock') !== undefined,
  },
];

for (const { mode, ok } of modes) {
  (ok ? describe : describe.skip)(`tool jails prepared ahead (${mode})`, () => {
    let ws: string;
    let rt: string;
    let dirs: RuntimeDirs;
    let jail: ToolJail;
    const notes: Array<{ program: string; prepared: boolean }> = [];
    const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' });

    beforeAll(() => {
      ws = mkdtempSync(path.join(tmpdir(), 'wb-prep-u-ws-'));
      rt = mkdtempSync(path.join(tmpdir(), 'wb-prep-u-rt-'));
      mkdirSync(path.join(ws, 'sub'));
      writeFileSync(path.join(ws, 'top.txt'), 'needle at the top\n');
      writeFileSync(path.join(ws, 'sub', 'low.txt'), 'needle below\n');
      dirs = createRuntimeDirs({ configured: rt }, ws);
      jail = new ToolJail({
        requested: mode,
        pathVar: process.env.PATH,
        workspaceReal: ws,
        dirs,
        privateFiles: [],
        sealed: [],
        readAllow: [],
        onRun: (n) => notes.push(n),
      });
    });

    afterAll(() => {
      jail?.close();
      if (dirs) removeRuntimeDirs(dirs);
      for (const p of [ws, rt]) if (p) rmSync(p, { recursive: true, force: true });
    });

    it('rule A: each run is served prepared, yet finds an empty /tmp, its own pid and its own PID namespace', async () => {
      expect(jail.status().in_use).toBe(mode);
      jail.warm(['sh']);
      const script =
        'd="${TMPDIR:-/tmp}"; echo "pid=$$"; echo "ns=$(readlink /proc/self/ns/pid)"; ' +
        'echo "left=$(ls -A "$d" | tr "\\n" " ")"; echo planted > "$d/planted"; ' +
        'echo "parent=$(cat /proc/$PPID/comm 2>/dev/null) $PPID"; echo "own=$(ls /proc/self/fd | tr "\\n" " ")"';
      const seen: string[] = [];
      notes.length = 0;
      for (let i = 0; i < 3; i++) {
        await turn();
        const r = await runArgv('sh', ['-c', script], {
          cwd: ws,
          env: env(),
          timeoutMs: 20_000,
          maxStdoutBytes: 1 << 16,
          jail,
        });
        expect(r.code, r.stderr).toBe(0);
        seen.push(r.stdout.toString());
      }
      expect(notes.map((n) => n.prepared)).toEqual([true, true, true]);
      // The workspace lies under /tmp, so bubblewrap's empty /tmp shows the directory it is bound below.
      const left = seen.map((o) => (/^left=(.*)$/m.exec(o)?.[1] ?? '?').split(' ').filter(Boolean));
      for (const l of left) expect(l.filter((e) => e !== path.basename(ws))).toEqual([]);
      const pids = seen.map((o) => /^pid=(\d+)$/m.exec(o)?.[1]);
      const nss = seen.map((o) => /^ns=(.*)$/m.exec(o)?.[1]);
      if (mode === 'bwrap') {
        // Each run is the first process of a PID namespace of its own after wb-exec (pid 1, which waits for it
        // to report its end: wb-exec --status-fd): a namespace an earlier run had used would have given pid 2
        // already. The namespaces' numbers are no proof either way: a namespace that ended gives its number
        // back, and the next one may get it.
        expect(pids, seen.join(' | ')).toEqual(['2', '2', '2']);
        for (const o of seen) expect(/^parent=(.*)$/m.exec(o)?.[1]).toBe('wb-exec 1');
        expect(nss.every((n) => /^pid:\[\d+\]$/.test(n ?? ''))).toBe(true);
      } else expect(new Set(pids).size, pids.join(' ')).toBe(3);
      // The program holds 0, 1 and 2 only (and ls its directory), not the report pipe.
      for (const o of seen) expect(/^own=(.*)$/m.exec(o)?.[1]?.trim()).toBe('0 1 2 3');
    });

    it('a prepared jail leads a process group of its own, so that killing it reaches what bubblewrap started', () => {
      jail.warm(['sh']);
      // The Landlock helper execs wb-exec once its rules are in place: either name is the prepared jail.
      const names = mode === 'bwrap' ? ['bwrap'] : ['wb-landlock', 'wb-exec'];
      const jails = childrenOf(process.pid).filter((pid) => names.includes(comm(pid)));
      expect(jails.length).toBeGreaterThan(0);
      for (const pid of jails) expect([pid, groupOf(pid)]).toEqual([pid, pid]);
    });

    it('a prepared jail built from other options is killed, never used: ripgrep in another directory', async () => {
      const rg = findRipgrep(env());
      expect(rg.kind).toBe('ripgrep');
      const rgPath = rg.kind === 'ripgrep' ? rg.path : '';
      const search = async (rel: string) => {
        await turn();
        const fd = openSync(path.join(ws, rel), constants.O_RDONLY | constants.O_DIRECTORY);
        try {
          const r = await runArgv(rgPath, ['--no-heading', '--sort', 'path', 'needle', './'], {
            cwd: `/proc/self/fd/${fd}`,
            env: env(),
            timeoutMs: 20_000,
            maxStdoutBytes: 1 << 16,
            jail,
            aloneIn: fd,
          });
          expect(r.code, r.stderr).toBe(0);
          return r.stdout.toString();
        } finally {
          closeSync(fd);
        }
      };
      jail.warm([rgPath]);
      notes.length = 0;
      const before = jail.preparedCounts();
      expect(await search('.')).toBe('./sub/low.txt:needle below\n./top.txt:needle at the top\n');
      expect(await search('sub')).toBe('./low.txt:needle below\n');
      expect(await search('sub')).toBe('./low.txt:needle below\n');
      expect(await search('.')).toBe('./sub/low.txt:needle below\n./top.txt:needle at the top\n');
      const after = jail.preparedCounts();
      if (mode === 'bwrap' && jail.runsAlone(rgPath)) {
        // The jail of one directory binds that directory: another directory's call cannot use it.
        expect(notes.map((n) => n.prepared)).toEqual([true, false, true, false]);
        expect(after.discarded - before.discarded).toBe(2);
      } else {
        // Landlock (or a ripgrep that needs the system): the jail is the same for every directory, which enters
        // by its path and is checked by wb-exec (WBX2, below).
        expect(notes.map((n) => n.prepared)).toEqual([true, true, true, true]);
      }
      expect(after.used - before.used).toBe(notes.filter((n) => n.prepared).length);
    });
  });
}

(built ? describe : describe.skip)('the prepared jail slot and wb-exec (no jail needed)', () => {
  const starter = builtProgram('wb-exec') as string;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'wb-prep-slot-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const counts = (): PreparedCounts => ({ prepared: 0, used: 0, discarded: 0, died: 0 });
  const recipe = (key: string) => () => ({ key, file: starter, args: [], cwd: dir });

  it('take with another key kills the prepared process and returns nothing; the same key hands it over once', async () => {
    const c = counts();
    const slot = new JailSlot(c, 1);
    slot.fill(recipe('a'));
    expect(c.prepared).toBe(1);
    expect(slot.take('b')).toBeUndefined();
    expect(c.discarded).toBe(1);
    slot.fill(recipe('a'));
    const got = slot.take('a');
    expect(got).toBeDefined();
    expect(slot.take('a')).toBeUndefined(); // never offered twice
    const { child } = handOver(got!, { cwd: dir, argv: ['/bin/echo', 'handed', 'over'], env: {} });
    let out = '';
    child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise((r) => child.once('close', r));
    expect([code, out]).toEqual([0, 'handed over\n']);
    slot.close();
  });

  it('one asked for later is not started by a take that comes first; the quiet moment starts it once', () => {
    const c = counts();
    const slot = new JailSlot(c, 1);
    slot.later(recipe('a'));
    expect(c.prepared).toBe(0);
    // The call came before the quiet moment: it gets none (it sets its jail up the usual way), and starts none.
    expect(slot.take('a')).toBeUndefined();
    expect(c.prepared).toBe(0);
    slot.flush(); // the quiet moment: the one asked for is started, once
    slot.flush();
    expect(c.prepared).toBe(1);
    const got = slot.take('a');
    expect(got?.recipe.key).toBe('a');
    handOver(got!, { cwd: dir, argv: ['/bin/true'], env: {} });
    slot.later(recipe('a'));
    slot.flush();
    expect(c.prepared).toBe(2);
    slot.close();
    slot.later(recipe('a'));
    slot.flush();
    expect(c.prepared).toBe(2);
  });

  it('a prepared process that writes before its request, or dies, is replaced; after close none is', async () => {
    const c = counts();
    const slot = new JailSlot(c, 1);
    let n = 0;
    // The first "jail" prints and exits at once (misbehaves); the next ones wait as wb-exec does.
    slot.fill(() =>
      n++ === 0
        ? { key: 'k', file: '/bin/sh', args: ['-c', 'echo early; exec sleep 60'], cwd: dir }
        : { key: 'k', file: starter, args: [], cwd: dir },
    );
    await waitUntil(() => c.died === 1 && c.prepared === 2);
    const got = slot.take('k');
    expect(got?.recipe.file).toBe(starter);
    handOver(got!, { cwd: dir, argv: ['/bin/true'], env: {} });
    slot.close();
    slot.fill(recipe('k'));
    expect(c.prepared).toBe(2);
  });

  it('wb-exec refuses a WBX2 request whose directory is not the one the server checked', () => {
    const st = statSync(dir, { bigint: true });
    const run = (ino: bigint) =>
      spawnSync(starter, [], { input: startRequest(dir, ['/bin/echo', 'ran'], {}, { dev: st.dev, ino }) });
    const good = run(st.ino);
    expect([good.status, good.stdout.toString()]).toEqual([0, 'ran\n']);
    const bad = run(st.ino + 1n);
    expect(bad.status).toBe(126);
    expect(bad.stdout.toString()).toBe('');
    expect(bad.stderr.toString()).toMatch(/is not the directory the server checked/);
  });

  // A "jail" whose outer process outlives the program and holds its output open, as bubblewrap's does while the
  // jail is torn down: sh starts wb-exec beside it and becomes a sleep that keeps every descriptor.
  const holding = (key: string) => () => ({
    key,
    file: '/bin/sh',
    args: ['-c', '"$0" --status-fd 4 & exec sleep 600', starter],
    cwd: dir,
    reports: true,
  });
  const reporting = (key: string) => () => ({
    key,
    file: starter,
    args: ['--status-fd', '4'],
    cwd: dir,
    reports: true,
  });
  const follow = (run: ReturnType<typeof handOver>) =>
    followRun(run, { cwd: dir, env: {}, timeoutMs: 600_000, maxStdoutBytes: 1 << 16 });
  /** `script` (sh -c) handed to a jail made from `recipe`, in a slot of its own. */
  const handed = (recipe: ReturnType<typeof holding>, script: string) => {
    const slot = new JailSlot(counts(), 1);
    slot.fill(recipe);
    const run = handOver(slot.take(recipe().key)!, {
      cwd: dir,
      argv: ['/bin/sh', '-c', script],
      env: { PATH: '/usr/bin:/bin' },
    });
    return { slot, run };
  };

  it("with --status-fd, the run ends with the program's status while the jail still holds its output open", async () => {
    const { slot, run } = handed(holding('r'), 'echo out; echo err >&2; exit 3');
    expect(run.report).toBeDefined();
    const r = await follow(run);
    expect([r.code, r.signal, r.stdout.toString(), r.stderr, r.timedOut]).toEqual([
      3,
      null,
      'out\n',
      'err\n',
      false,
    ]);
    // The holder is still there: the answer did not wait for it.
    expect(run.child.exitCode).toBeNull();
    slot.close();
    run.child.kill('SIGKILL');
  });

  it('with --status-fd, a program ended by a signal is reported so, and wb-exec exits 128 + the signal', async () => {
    const held = handed(holding('s'), 'kill -TERM $$');
    const r = await follow(held.run);
    expect([r.code, r.signal]).toEqual([null, 'SIGTERM']);
    held.slot.close();
    held.run.child.kill('SIGKILL');
    // wb-exec's own exit, without a holder.
    const { slot, run } = handed(reporting('t'), 'kill -TERM $$');
    const exited = new Promise((r) => run.child.once('exit', r));
    expect((await follow(run)).signal).toBe('SIGTERM');
    expect(await exited).toBe(128 + 15);
    slot.close();
  });

  it('with --status-fd, the program gets /dev/null for input and neither the request socket nor any other descriptor above 2', async () => {
    const { slot, run } = handed(reporting('d'), 'ls /proc/self/fd; readlink /proc/self/fd/0');
    const r = await follow(run);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.toString().trim().split('\n');
    // ls's own directory descriptor aside.
    expect(lines.slice(0, -1).filter((n) => Number(n) > 3)).toEqual([]);
    expect(lines.at(-1)).toBe('/dev/null');
    slot.close();
  });

  it('wb-exec takes no argument but --status-fd and a descriptor above 2', () => {
    for (const args of [['--status-fd'], ['--status-fd', '2'], ['--status-fd', 'x'], ['--other']]) {
      const r = spawnSync(starter, args, { input: startRequest(dir, ['/bin/true'], {}) });
      expect([args, r.status]).toEqual([args, 125]);
    }
  });
});

(built && needBwrap('a prepared jail killed while bubblewrap sets it up') ? describe : describe.skip)(
  'a prepared jail killed while bubblewrap sets it up',
  () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'wb-prep-kill-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    // bubblewrap's sandbox child waits for its parent's go (the user namespace's maps) before it sets its own
    // parent-death signal. --userns-block-fd holds bubblewrap right there, on a FIFO nobody writes: the moment a
    // discard at shutdown or on another key can fall in. Killed alone, bubblewrap leaves that child waiting for
    // ever, as init's; killed as the process group it leads, the child goes with it.
    it("the child bubblewrap started goes with it, not left waiting as init's", async () => {
      const fifo = path.join(dir, 'hold');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const hold = openSync(fifo, constants.O_RDWR);
      const info = openSync('/dev/null', constants.O_WRONLY);
      const slot = new JailSlot({ prepared: 0, used: 0, discarded: 0, died: 0 }, 1);
      let inner: number | undefined;
      try {
        slot.fill(() => ({
          key: 'held',
          file: 'bwrap',
          args: ['--unshare-user', '--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/'].concat([
            '--info-fd',
            '5',
            '--userns-block-fd',
            '4',
            '--',
            '/bin/true',
          ]),
          cwd: dir,
          fds: [hold, info],
        }));
        const outer = childrenOf(process.pid).find(
          (pid) => comm(pid) === 'bwrap' && cmdline(pid).includes('--userns-block-fd'),
        );
        expect(outer).toBeDefined();
        inner = await until(() => childrenOf(outer!)[0]);
        const child = inner;
        // Once started, the child blocks in its read of bubblewrap's go (an eventfd), and stays there.
        await until(() => (/eventfd_read|do_wait_intr/.test(waitsIn(child)) ? true : undefined));
        slot.close();
        // SIGKILL is immediate; the bound only ends a failing wait.
        expect(await until(() => (gone(inner!) ? true : undefined))).toBe(true);
      } finally {
        slot.close();
        if (inner !== undefined && !gone(inner)) process.kill(inner, 'SIGKILL');
        closeSync(hold);
        closeSync(info);
      }
    });
  },
);

/** The children of `pid` (each of its threads'), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const list = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
    if (list) out.push(...list.split(/\s+/).map(Number));
  }
  return out;
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** Fields after the command's name in /proc/<pid>/stat: state, ppid, pgrp, … */
function statOf(pid: number): string[] {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
}

function groupOf(pid: number): number {
  return Number(statOf(pid)[2]);
}

/** Where the process sleeps in the kernel: its stack (root only), else the function it waits in. */
function waitsIn(pid: number): string {
  for (const f of ['stack', 'wchan'])
    try {
      const s = readFileSync(`/proc/${pid}/${f}`, 'utf8');
      if (s) return s;
    } catch {
      /* not readable: the next */
    }
  return '';
}

/** Gone, or a zombie waiting for init to reap it. */
function gone(pid: number): boolean {
  try {
    return statOf(pid)[0] === 'Z';
  } catch {
    return true;
  }
}

/** Polls `f` every 10 ms until it gives a value; throws after 20 s (a bound for a failing wait only). */
async function until<T>(f: () => T | undefined): Promise<T> {
  for (let i = 0; i < 2000; i++) {
    const v = f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the awaited state did not come within 20 s');
}

/**
 * One turn of the event loop, as between two tool calls: the next jail is asked for when a run ends, on the
 * turn after (prepared-jails.ts), and a run started in the same turn finds none.
 */
function turn(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

async function waitUntil(pred: () => boolean): Promise<void> {
  for (let i = 0; i < 6000 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(pred()).toBe(true);
}
