// The command-sandbox attacks against the Landlock sandbox (docs/security-model.md#the-landlock-sandbox), in
// a simulated container where bubblewrap cannot start (test/helpers/container-sim.ts), run with the server as
// root and as nobody. The cases are those of test/confinement/confinement-commands-suite.ts, each asserting what
// Landlock gives: where bubblewrap hides (a private /tmp, a PID namespace, emptied home directories) this
// sandbox refuses instead, and the test says which. Network (raw TCP and UDP to a host listener, an abstract
// unix socket the host listens on) and signals (to the server, to every process) are attacked too, in `safe`
// and in `trusted`. Every attack uses a spelling the command policy cannot read (python, variables), so the
// kernel must be the one that says no.
import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as NetServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryFiles, plantCanaries } from '../helpers/confinement.js';
import { call, followToEnd, forkStormPy, HUNG_MS, waitFor } from '../exec/exec-support.js';
import { bwrapUnder, containerLauncher, LANDLOCK_SIM } from '../helpers/container-sim.js';
import { canRunAs, ownedDir, startBinAs, type BinServer, type RunAs } from '../helpers/hostile-bin.js';
import { TEST_TOKEN } from '../helpers/server.js';

const STORM_LIMIT = 64;

type Sc = { stdout?: string; stderr?: string; status: string; exit_code?: number };

/** A TCP listener, a UDP socket and an abstract unix listener on the host, each counting what reaches it. */
async function hostListeners(tag: string) {
  const hits = { tcp: 0, udp: 0, abstract: 0 };
  const tcp = createServer((s) => {
    hits.tcp++;
    s.destroy();
  });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  const udp = createSocket('udp4');
  udp.on('message', () => hits.udp++);
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  const abstractName = `wb-landlock-${tag}`;
  const abs: NetServer = createServer((s) => {
    hits.abstract++;
    s.destroy();
  });
  await new Promise<void>((r) => abs.listen(`\0${abstractName}`, r));
  const ports = { tcp: (tcp.address() as { port: number }).port, udp: udp.address().port };
  const close = () =>
    Promise.all([
      new Promise((r) => tcp.close(r)),
      new Promise((r) => udp.close(() => r(undefined))),
      new Promise((r) => abs.close(r)),
    ]);
  return { hits, ports, abstractName, close };
}

/** Python that tries each network path and prints one `name: OK|<error>` line per attempt. */
function netProbe(ports: { tcp: number; udp: number }, abstractName: string): string {
  return [
    'import socket',
    'def t(name, f):',
    '  try:',
    '    f(); print(name + ": OK")',
    '  except OSError as e:',
    '    print(name + ": " + type(e).__name__ + " " + str(e.errno))',
    `t("tcp", lambda: socket.create_connection(("127.0.0.1", ${ports.tcp}), timeout=5).close())`,
    `t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", ${ports.udp})))`,
    `t("tcp6", lambda: socket.socket(socket.AF_INET6).connect(("::1", ${ports.tcp})))`,
    't("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))',
    // Node binds an abstract name padded with NULs to the whole sun_path.
    `t("abstract", lambda: socket.socket(socket.AF_UNIX).connect(b"\\0${abstractName}".ljust(108, b"\\0")))`,
  ].join('\n');
}

export function landlockSuite(as: RunAs): void {
  const d = canRunAs(as, 'the Landlock sandbox attacks', LANDLOCK_SIM.need) ? describe : describe.skip;
  d(`Landlock sandbox attacks in a simulated container, server as ${as}`, () => {
    const tag = randomBytes(6).toString('hex');
    const canary = `CANARY-${tag}`;
    const made: string[] = [];
    const files = canaryFiles('wb-ll-canary', tag);
    let ws: string;
    let trustedWs: string;
    let homeParent: string;
    let homeWs: string;
    let srv: BinServer;
    let homeSrv: BinServer;
    let trusted: BinServer;
    let net: Awaited<ReturnType<typeof hostListeners>>;
    const run = async (cmd: string, s: () => BinServer = () => srv): Promise<Sc> => {
      const r = await call(s().url, 'exec_command', { cmd, yield_time_ms: 30_000 });
      expect(r.isError, r.text).toBe(false);
      expect(r.sc.status, JSON.stringify(r.sc)).not.toBe('running');
      return r.sc as Sc;
    };

    beforeAll(async () => {
      plantCanaries(files, canary, made);
      ws = ownedDir('/tmp', 'wb-ll-ws-', as);
      const rt = ownedDir('/tmp', 'wb-ll-rt-', as);
      homeParent = ownedDir('/home', `wb-ll-${tag}-`, as);
      homeWs = ownedDir(homeParent, 'ws-', as);
      trustedWs = ownedDir('/tmp', 'wb-ll-tws-', as);
      made.push(ws, rt, homeParent, trustedWs);
      net = await hostListeners(tag);
      const how = { runtimeRoot: rt, as, launcher: LANDLOCK_SIM.launcher() };
      const env = { ...LANDLOCK_SIM.env, SERVICE_EXEC_MAX_PROCESSES: String(STORM_LIMIT) };
      [srv, homeSrv, trusted] = await Promise.all([
        startBinAs({ ...how, workspace: ws, env }),
        startBinAs({ ...how, workspace: homeWs, env }),
        startBinAs({ ...how, workspace: trustedWs, env: { ...env, SERVICE_PERMISSION_MODE: 'trusted' } }),
      ]);
    }, HUNG_MS);

    afterAll(async () => {
      await Promise.all([srv?.stop(), homeSrv?.stop(), trusted?.stop(), net?.close()]);
      for (const f of made.reverse()) rmSync(f, { recursive: true, force: true });
    }, HUNG_MS);

    it('bubblewrap cannot start in the simulated container; the server says it confines commands with Landlock', async () => {
      const b = bwrapUnder(containerLauncher('the container simulation') as string);
      expect(b.status, b.stderr).not.toBe(0);
      // Without bubblewrap installed the fallback is taken all the same (auto); with it, it must fail here.
      if (!/ENOENT/.test(b.stderr)) expect(b.stderr).toMatch(/namespace|Operation not permitted/);
      const info = await call(srv.url, 'server_info');
      expect(info.sc.sandbox.in_use, info.sc.sandbox.reason).toBe('landlock');
      expect(info.sc.sandbox.reason).toMatch(/^Landlock \(ABI \d+/);
      const env = await call(srv.url, 'check_exec_environment');
      expect(env.sc.sandbox.in_use).toBe('landlock');
      expect(env.sc.policy.network).toMatch(/denied by the kernel/);
    });

    it('SERVICE_SANDBOX=landlock forces it where bubblewrap would run (no launcher): commands are confined the same', async () => {
      const rt = ownedDir('/tmp', 'wb-ll-frt-', as);
      made.push(rt);
      const forced = await startBinAs({
        workspace: trustedWs,
        runtimeRoot: rt,
        as,
        env: { SERVICE_SANDBOX: 'landlock' },
      });
      try {
        const info = await call(forced.url, 'server_info');
        expect(info.sc.sandbox.in_use, info.sc.sandbox.reason).toBe('landlock');
        const r = await run(
          `cat ${files.tmp}; echo x > /tmp/wb-ll-forced-${tag} || echo refused`,
          () => forced,
        );
        expect(r.stdout + (r.stderr ?? '')).not.toContain(canary);
        expect(r.stdout).toMatch(/refused\n$/);
        expect(existsSync(`/tmp/wb-ll-forced-${tag}`)).toBe(false);
      } finally {
        await forced.stop();
      }
    });

    it('a write the sandbox refused carries the blocked note; one the server user would be refused too does not', async () => {
      const target = `/tmp/wb-ll-note-${tag}`;
      const r = await call(srv.url, 'exec_command', { cmd: `echo x > ${target}`, yield_time_ms: 30_000 });
      const note = (r.sc as { blocked?: { what: string; why: string } }).blocked;
      expect(note?.what, JSON.stringify(r.sc)).toBe(target);
      expect(note?.why).toMatch(/Landlock/);
      expect(existsSync(target)).toBe(false);
      if (as === 'nobody') {
        // A spelling the command policy cannot read, so the kernel answers.
        const q = await run(`d=/etc; echo x > "$d/wb-ll-note-${tag}"`);
        expect(q.stderr, JSON.stringify(q)).toMatch(/Permission denied/);
        expect((q as { blocked?: unknown }).blocked).toBeUndefined();
      }
    });

    it('the capability set inside a command is empty (CapEff 0, no-new-privileges), whoever runs the server', async () => {
      const r = await run('grep -E "^(CapEff|CapPrm|CapAmb|CapBnd|NoNewPrivs):" /proc/self/status');
      for (const k of ['CapPrm', 'CapEff', 'CapAmb'])
        expect(r.stdout).toMatch(new RegExp(`^${k}:\\s+0{16}$`, 'm'));
      if (as === 'root') expect(r.stdout).toMatch(/^CapBnd:\s+0{16}$/m);
      expect(r.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
    });

    it('mount, umount, unshare and nsenter fail', async () => {
      const r = await run(
        'mkdir -p m; mount -t tmpfs x m; echo "a=$?"; umount -l /proc; echo "b=$?"; unshare -U true; echo "c=$?"; ' +
          `nsenter -t ${srv.pid} -n -m true; echo "d=$?"`,
      );
      expect(r.stdout).toMatch(/^a=[1-9]\d*\nb=[1-9]\d*\nc=[1-9]\d*\nd=[1-9]\d*\n$/);
    });

    it("/proc/<server pid>/environ is unreadable: the server's token never reaches a command (its processes are listed: no PID namespace)", async () => {
      const r = await run(
        `cat /proc/${srv.pid}/environ; echo "a=$?"; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c SERVICE_AUTH_TOKEN; ` +
          `test -d /proc/${srv.pid} && echo listed`,
      );
      expect(r.stdout).toMatch(/a=[1-9]/);
      expect(r.stdout + (r.stderr ?? '')).not.toContain(TEST_TOKEN);
      expect(r.stdout).toMatch(/^0\nlisted\n$/m);
    });

    it('canaries in /root, another home directory, /tmp and /etc/shadow are unreadable (Permission denied)', async () => {
      const r = await run(
        `for f in ${files.root} ${files.home} ${files.tmp} /etc/shadow /etc/gshadow; do ` +
          'python3 -c "import sys; print(open(sys.argv[1]).read())" "$f" 2>&1 | tail -n 1; done',
      );
      expect(r.stdout + (r.stderr ?? '')).not.toContain(canary);
      expect(r.stdout?.match(/PermissionError/g)?.length, r.stdout).toBe(5);
      if (as === 'root') expect(readFileSync('/etc/shadow').length).toBeGreaterThan(0);
    });

    it('a write outside the writable set fails with an error the command sees; the workspace under /home is writable', async () => {
      const targets = [
        '/root/x',
        `${path.dirname(files.home)}/x`,
        '/var/tmp/x',
        '/usr/x',
        `/etc/wb-ll-${tag}`,
        `${homeParent}/x`,
        `/tmp/wb-ll-${tag}`,
        `/dev/wb-ll-${tag}`,
      ];
      const py = `import sys\nfor t in sys.argv[1:]:\n  try:\n    open(t,'w').write('x'); print('WROTE', t)\n  except OSError as e:\n    print('ERR', e.errno, t)`;
      const r = await run(`python3 -c "${py}" ${targets.join(' ')}`, () => homeSrv);
      expect(r.stdout).not.toContain('WROTE');
      expect(r.stdout?.trim().split('\n')).toHaveLength(targets.length);
      for (const t of targets) expect(existsSync(t), t).toBe(false);
      const w = await run('echo kept > written.txt && cat written.txt', () => homeSrv);
      expect(w.stdout).toBe('kept\n');
      expect(readFileSync(path.join(homeWs, 'written.txt'), 'utf8')).toBe('kept\n');
    });

    it('a $TMPDIR file written by one command is read by the next; the host /tmp is not writable', async () => {
      const name = `wb-ll-keep-${tag}.txt`;
      await run(`python3 -c "import os; open(os.environ['TMPDIR'] + '/${name}','w').write('persisted')"`);
      const r = await run(`cat "$TMPDIR/${name}"; echo; echo x > /tmp/${name} || echo refused`);
      expect(r.stdout).toMatch(/^persisted\nrefused\n$/);
      expect(existsSync(`/tmp/${name}`)).toBe(false);
    });

    it('raw devices are out of reach: only the terminal and null-like devices open', async () => {
      const r = await run(
        'for f in /dev/null /dev/urandom /dev/kmsg /dev/mem /dev/console $(ls /dev | grep -E "^(sd|vd|nvme|xvd|loop)" | head -3 | sed "s|^|/dev/|"); do ' +
          'head -c1 "$f" >/dev/null 2>&1 && echo "open $f" || echo "refused $f"; done',
      );
      const opened = (r.stdout ?? '').split('\n').filter((l) => l.startsWith('open '));
      expect(opened.sort()).toEqual(['open /dev/null', 'open /dev/urandom']);
    });

    it('safe: raw TCP (IPv4 and IPv6), UDP, bind and an abstract unix socket to host listeners all fail; nothing reaches them', async () => {
      const probe = path.join(ws, `net-${tag}.py`);
      writeFileSync(probe, netProbe(net.ports, net.abstractName));
      // The same probe outside any sandbox reaches every listener: the refusals below are the sandbox's.
      const host = spawnSync('python3', [probe], { encoding: 'utf8' }).stdout;
      expect(host).toMatch(/^tcp: OK\nudp: OK\n[^\n]*\nbind: OK\nabstract: OK\n$/);
      expect(await waitFor(() => net.hits.abstract > 0 && net.hits.tcp > 0)).toBe(true);
      const before = { ...net.hits };
      const r = await run(`python3 net-${tag}.py`);
      const lines = (r.stdout ?? '').trim().split('\n');
      expect(lines, r.stderr).toHaveLength(5);
      for (const l of lines) expect(l, r.stdout).not.toMatch(/: OK$/);
      expect(net.hits).toEqual(before);
    });

    it('trusted fails closed too: no network namespace to bridge the proxy into, so no internet socket at all, and it says so', async () => {
      writeFileSync(path.join(trustedWs, `net-${tag}.py`), netProbe(net.ports, net.abstractName));
      const before = { ...net.hits };
      const r = await run(`python3 net-${tag}.py; curl -sS http://wb-ll-${tag}.test/ || true`, () => trusted);
      const lines = (r.stdout ?? '').trim().split('\n');
      expect(lines, r.stderr).toHaveLength(5);
      for (const l of lines) expect(l, r.stdout).not.toMatch(/: OK$/);
      expect(r.stdout, r.stdout).toMatch(/^abstract: PermissionError \d+$/m);
      expect(net.hits).toEqual(before);
      const env = await call(trusted.url, 'check_exec_environment');
      expect(env.sc.sandbox).toMatchObject({ in_use: 'landlock', network: 'none' });
      expect(env.sc.policy.network).toMatch(/^NONE: denied by the kernel \(Landlock and seccomp/);
      expect(env.sc.sandbox.network_unavailable).toMatch(
        /no network namespace to bridge the proxy into; fix:/,
      );
      expect((r as { blocked?: { why: string } }).blocked?.why ?? '').toMatch(
        /^trusted has no network: the Landlock/,
      );
    });

    // kill -1 is attacked by the isolation suite (test/confinement/confinement2-isolation-suite.ts) with this variant
    // too.
    it('signals to the server, the test runner and init fail (kill -0, STOP, TERM)', async () => {
      const py =
        'import os, signal\n' +
        `for pid in (${srv.pid}, ${process.pid}, 1):\n` +
        '  for s in (0, signal.SIGSTOP, signal.SIGTERM):\n' +
        '    try:\n      os.kill(pid, s); print("sent", pid, int(s))\n' +
        '    except OSError as e:\n      print("refused", pid, int(s), e.errno)\n';
      writeFileSync(path.join(ws, `sig-${tag}.py`), py);
      const r = await run(`exec python3 sig-${tag}.py`);
      expect(r.stdout).not.toMatch(/^sent \d/m);
      expect(r.stdout?.match(/^refused \d+ \d+ 1$/gm)?.length, r.stdout).toBe(9);
      const alive = await run('echo alive');
      expect(alive.stdout).toBe('alive\n');
    });

    it(`a bounded fork storm (2000) stops at the process limit (${STORM_LIMIT}) and the server keeps answering`, async () => {
      writeFileSync(path.join(ws, `storm-${tag}.py`), forkStormPy(`storm-${tag}`, 1));
      const started = await call(srv.url, 'exec_command', {
        cmd: `exec python3 storm-${tag}.py`,
        yield_time_ms: 0,
      });
      const info = await call(srv.url, 'server_info');
      const { out, err } = await followToEnd(srv.url, started);
      if (info.sc.process_limit.enforced_by.startsWith('cgroup')) {
        expect(out).toMatch(/fork failed 11/);
        expect(err).toMatch(/reached its limit of 64 processes/);
      } else expect(err).toMatch(/grew past 64 processes/);
      const gone = () => !readPids().some((p) => p.includes(`storm-${tag}`));
      expect(await waitFor(gone)).toBe(true);
      expect((await run('echo alive')).stdout).toBe('alive\n');
    });
  });
}

/** The command lines of the host's processes. */
function readPids(): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      out.push(readFileSync(`/proc/${name}/cmdline`, 'latin1'));
    } catch {
      /* gone */
    }
  }
  return out;
}
