// Commands against the helper that starts them and against each other (decisions in README "Security model":
// one command may not read, write, signal or forge another's I/O or the helper's), run twice like
// test/confinement/confinement-commands-suite.ts: with the server as root and as nobody. A victim command prints 50
// numbered lines and exits 7, pausing half way until the test says the attacker is done (so it is alive for
// the whole attack, whatever the machine's speed); the attacker (test/helpers/reach-others.py) tries kill,
// SIGSTOP, ptrace, pidfd_getfd and process_vm_readv on every process it can name. Then the victim's result
// must be exactly its own, nothing of the server's tree may be left stopped, and the server keeps answering.
// The last test stops the helper itself (SIGSTOP from outside): polls still answer, and new commands run.
import { randomBytes } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, HUNG_MS, pollUntil, waitFor } from '../exec/exec-support.js';
import { callWithin } from '../helpers/confinement.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import {
  canRunAs,
  descendantsOf,
  ownedDir,
  procTable,
  signal,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';

const REACH = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'helpers', 'reach-others.py');
const LINES = Array.from({ length: 50 }, (_, i) => `line${i + 1}`).join('\n') + '\n';
const FAILED = new Set(['ESRCH', 'EPERM', 'EACCES']);
/** Only ends a hung test: each test waits on events, some with HUNG_MS ceilings of their own. */
const TEST_CEILING_MS = 300_000;

/** `variant`: servers started another way than bubblewrap (test/helpers/container-sim.ts LANDLOCK_SIM). */
export function isolationSuite(as: RunAs, variant?: SuiteVariant): void {
  const d = canRunAs(as, 'the command isolation attacks', variant?.need) ? describe : describe.skip;
  const label = variant ? `, ${variant.label}` : '';
  d(`commands cannot reach the helper or each other, server as ${as}${label}`, () => {
    const tag = randomBytes(4).toString('hex');
    let ws: string;
    let rt: string;
    let srv: BinServer;
    const stopped: number[] = [];

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-iso-ws-', as);
      rt = ownedDir(tmpdir(), 'wb-iso-rt-', as);
      copyFileSync(REACH, path.join(ws, 'reach.py'));
      srv = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        launcher: variant?.launcher(),
        env: variant?.env,
      });
      // Where pipe commands share one sandbox, it comes up in the background after start: wait until two
      // commands in a row share a PID namespace (bounded), so the victim and the attacker meet in it.
      const ns = async () =>
        (await call(srv.url, 'exec_command', { cmd: 'readlink /proc/self/ns/pid' })).sc.stdout;
      let prev = await ns();
      for (let i = 0; i < 50; i++) {
        const now = await ns();
        if (now === prev) break;
        prev = now;
      }
    }, HUNG_MS);
    afterEach(() => {
      // Whatever an attack (or the helper test) left stopped is resumed, so one failure does not hang the next.
      for (const pid of stopped.splice(0)) signal(pid, 'SIGCONT');
      for (const p of descendantsOf(srv.pid))
        if (p.state === 'T' || p.state === 't') signal(p.pid, 'SIGCONT');
    });
    afterAll(async () => {
      await srv?.stop();
      for (const dir of [ws, rt]) if (dir) rmSync(dir, { recursive: true, force: true });
    }, HUNG_MS);

    /** Starts the victim: lines 1-25, then waits (bounded) for `go`, then 26-50, exit 7. Resolves once running. */
    async function victim(go: string) {
      const cmd =
        'for i in $(seq 1 25); do echo line$i; sleep 0.05; done; ' +
        `for j in $(seq 1 1200); do [ -e ${go} ] && break; sleep 0.05; done; ` +
        'for i in $(seq 26 50); do echo line$i; sleep 0.05; done; exit 7';
      const a = await call(srv.url, 'exec_command', { cmd, yield_time_ms: 0 });
      expect(a.sc.status, JSON.stringify(a.sc)).toBe('running');
      const seen = await pollUntil(srv.url, a.sc.command_id, /line1\n/, '', a.sc.stdout ?? '');
      return { id: a.sc.command_id as string, stdout: seen.stdout };
    }

    /** Lets the victim finish and returns its whole result (stdout gathered over every poll). */
    async function finish(v: { id: string; stdout: string }, go: string) {
      writeFileSync(path.join(ws, go), '');
      let stdout = v.stdout;
      let last = await call(srv.url, 'write_stdin', { command_id: v.id, chars: '', yield_time_ms: 10_000 });
      stdout += last.sc.stdout ?? '';
      const end = Date.now() + HUNG_MS;
      while (last.sc.status === 'running' && Date.now() < end) {
        last = await call(srv.url, 'write_stdin', { command_id: v.id, chars: '', yield_time_ms: 10_000 });
        stdout += last.sc.stdout ?? '';
      }
      return { ...last.sc, stdout } as {
        status: string;
        exit_code?: number;
        stdout: string;
        stderr?: string;
      };
    }

    /** The victim ended as it would have alone (every line, exit 7), and the server still runs commands. */
    async function expectUntouched(v: { id: string; stdout: string }, go: string) {
      const r = await finish(v, go);
      expect({ status: r.status, exit_code: r.exit_code, stdout: r.stdout }).toEqual({
        status: 'exited',
        exit_code: 7,
        stdout: LINES,
      });
      const again = await call(srv.url, 'exec_command', { cmd: 'echo alive', yield_time_ms: 30_000 });
      expect(again.sc.stdout).toBe('alive\n');
    }

    // Without a PID namespace (Landlock) pidfd_open of a visible process succeeds (a thread's id: ENOENT);
    // what it could be used for, pidfd_getfd, must fail (signals through it are refused like kill).
    const reachKeys = (r: Record<string, string>) =>
      !variant?.landlock
        ? ['kill0', 'stop', 'ptrace', 'pidfd', 'vmread']
        : ['kill0', 'stop', 'ptrace', 'vmread', ...(r.pidfd === 'OK' ? ['getfd'] : [])];

    /** Processes of the server's tree the attack left stopped or traced, seen from the host. */
    const frozen = () =>
      descendantsOf(srv.pid)
        .filter((p) => p.state === 'T' || p.state === 't')
        .map((p) => `${p.pid} ${p.state} ${p.cmdline.slice(0, 80)}`);

    it(
      'kill, SIGSTOP, ptrace, pidfd_getfd and process_vm_readv on every pid in sight (and 1-200) all fail; the victim runs on untouched',
      async () => {
        const go = `go-${tag}-a`;
        const v = await victim(go);
        // The rows go to a file: without a PID namespace (Landlock) the attacker sees the whole machine, more
        // output than one result carries whole.
        const file = `reach-${tag}.jsonl`;
        const b = await call(srv.url, 'exec_command', {
          cmd: `python3 reach.py > ${file}; tail -n 1 ${file}`,
          yield_time_ms: 30_000,
        });
        const out = await pollUntil(srv.url, b.sc.command_id, /"done"/, '', b.sc.stdout ?? '');
        const rows = readFileSync(path.join(ws, file), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        console.log(`[isolation ${as}] attacker saw ${JSON.stringify(rows[0].visible)}`);
        const hits = rows
          .filter((r) => 'pid' in r)
          .filter((r) => !reachKeys(r).every((k) => FAILED.has(r[k])))
          .map((r) => JSON.stringify(r));
        expect(
          rows.at(-1).done,
          `the attacker did not finish: ${out.stdout.slice(-300)}`,
        ).toBeGreaterThanOrEqual(190);
        expect(
          hits,
          `the attacker reached ${hits.length} process(es): ${hits.slice(0, 6).join(' ')}`,
        ).toEqual([]);
        expect(frozen()).toEqual([]);
        await expectUntouched(v, go);
      },
      TEST_CEILING_MS,
    );

    it(
      'kill -STOP -1 and kill -KILL -1 from a command leave another running command and the server alone',
      async () => {
        const go = `go-${tag}-b`;
        const v = await victim(go);
        const py =
          'import os, signal, time\n' +
          'for s in (signal.SIGSTOP, signal.SIGKILL):\n' +
          '  try:\n    os.kill(-1, s); print("sent", s.name, flush=True)\n' +
          '  except OSError as e:\n    print("refused", s.name, e.errno, flush=True)\n' +
          '  time.sleep(0.3)\n';
        writeFileSync(path.join(ws, `all-${tag}.py`), py);
        const c = await call(srv.url, 'exec_command', {
          cmd: `python3 all-${tag}.py`,
          yield_time_ms: 30_000,
        });
        console.log(`[isolation ${as}] kill -1: ${c.sc.status} ${JSON.stringify(c.sc.stdout ?? '')}`);
        expect(frozen()).toEqual([]);
        await expectUntouched(v, go);
      },
      TEST_CEILING_MS,
    );

    it(
      'a helper that stops answering (SIGSTOP from outside) is replaced: a poll still answers, a new command runs',
      async () => {
        const cmd = 'i=0; while [ $i -lt 600 ]; do echo tick$i; i=$((i+1)); sleep 0.1; done';
        const r0 = await call(srv.url, 'exec_command', { cmd, yield_time_ms: 0 });
        expect(r0.sc.status).toBe('running');
        await pollUntil(srv.url, r0.sc.command_id, /tick0\n/, '', r0.sc.stdout ?? '');
        // The helper: a process of the server's tree running spawner-main.js; without one, whatever child of the
        // server is not part of a command (nothing below it prints ticks).
        const table = procTable();
        const tree = descendantsOf(srv.pid, table);
        let helpers = tree.filter((p) => p.cmdline.includes('spawner-main'));
        if (!helpers.length) {
          const ticking = (pid: number) => descendantsOf(pid, table).some((q) => q.cmdline.includes('tick'));
          helpers = tree.filter((p) => p.ppid === srv.pid && !ticking(p.pid) && !p.cmdline.includes('tick'));
        }
        console.log(
          `[isolation ${as}] stopping ${helpers.map((p) => `${p.pid} ${p.cmdline.slice(0, 60)}`).join(' | ')}`,
        );
        for (const p of helpers) {
          signal(p.pid, 'SIGSTOP');
          stopped.push(p.pid);
        }
        const poll = await callWithin(
          srv.url,
          'write_stdin',
          { command_id: r0.sc.command_id, chars: '', yield_time_ms: 2000 },
          30_000,
        );
        expect(poll.sc.status, poll.raw.slice(0, 300)).toMatch(
          /^(running|exited|terminated|killed|failed|timeout)$/,
        );
        // Replaced means the stopped helper is gone and reaped (a zombie still counts as the server's helper: a
        // command sent before its exit is handled may be refused with "run it again"), so the new command waits
        // for that (a ceiling only ends a hung test).
        const gone = (pid: number) => !procTable().has(pid);
        const replaced = await waitFor(() => helpers.every((p) => gone(p.pid)), 30_000, 50);
        expect(
          replaced,
          `the stopped helper was never replaced: ${helpers.map((p) => p.pid).join(' ')}`,
        ).toBe(true);
        const fresh = await callWithin(
          srv.url,
          'exec_command',
          { cmd: 'echo ok', yield_time_ms: 30_000 },
          45_000,
        );
        expect({ status: fresh.sc.status, stdout: fresh.sc.stdout }, fresh.raw.slice(0, 600)).toEqual({
          status: 'exited',
          stdout: 'ok\n',
        });
        await call(srv.url, 'kill_command', { command_id: r0.sc.command_id });
      },
      TEST_CEILING_MS,
    );
  });
}
