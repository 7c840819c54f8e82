// The command-sandbox attacks (test/helpers/confinement.ts), as one suite run twice: with the server as root
// (what CI is) and as an unprivileged user (setpriv → nobody). Each test is a real attack through
// exec_command against the built bin; each uses a spelling the command policy cannot read (python,
// variables), so the kernel — not the policy — is what must say no. Canaries outside the workspace are
// planted by the test (as root) and removed after. Needs bubblewrap: skipped with the reason when absent, a
// failure under CI=true.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReadyLine } from '../../src/core/ready-line.js';
import { BIN, BIN_NODE_FLAGS, TEST_TOKEN } from '../helpers/server.js';
import { canaryFiles, plantCanaries } from '../helpers/confinement.js';
import { call, followToEnd, forkStormPy, HUNG_MS, needBwrap, waitFor } from '../exec/exec-support.js';

export type RunAs = 'root' | 'nobody';
const NOBODY = 65534;
/** The process limit the servers of this suite run with (small, so the storm test is quick). */
export const STORM_LIMIT = 64;

interface Server {
  url: string;
  pid: number;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** The built bin, optionally through `setpriv` as nobody; resolves on the ready line. */
function startBin(workspace: string, runtimeRoot: string, as: RunAs): Promise<Server> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: as === 'root' ? '/root' : '/nonexistent',
    SERVICE_AUTH_TOKEN: TEST_TOKEN,
    SERVICE_SANDBOX: 'bwrap',
    SERVICE_RUNTIME_ROOT: runtimeRoot,
    SERVICE_EXEC_MAX_PROCESSES: String(STORM_LIMIT),
  };
  const node = [process.execPath, ...BIN_NODE_FLAGS, BIN, '--workspace', workspace, '--port', '0'];
  const argv =
    as === 'root' ? node : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...node];
  const proc = spawn(argv[0] as string, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const hung = setTimeout(() => reject(new Error(`no ready line within ${HUNG_MS} ms: ${err}`)), HUNG_MS);
    proc.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const ready = parseReadyLine(err);
      if (!ready) return;
      clearTimeout(hung);
      resolve({
        url: ready.url,
        pid: proc.pid as number,
        proc,
        stop: () =>
          new Promise<void>((r) => {
            if (proc.exitCode !== null) return r();
            proc.once('exit', () => r());
            proc.kill('SIGTERM');
          }),
      });
    });
    proc.once('exit', (code) => {
      clearTimeout(hung);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
}

/** Whether this suite can run as `as` here (nobody needs root to switch users, and setpriv). */
function canRun(as: RunAs): boolean {
  if (!needBwrap(`the command-sandbox attacks (server as ${as})`)) return false;
  if (as === 'root' && process.getuid?.() !== 0) {
    if (process.env.CI === 'true') throw new Error('the root attack suite needs root under CI=true');
    console.log('SKIP the command-sandbox attacks as root: the tests do not run as root');
    return false;
  }
  if (as === 'nobody') {
    const why =
      process.getuid?.() !== 0
        ? 'switching to nobody needs root'
        : spawnSync('setpriv', ['--version']).error
          ? 'setpriv (util-linux) is not installed'
          : '';
    if (why) {
      if (process.env.CI === 'true') throw new Error(`the unprivileged attack suite under CI=true: ${why}`);
      console.log(`SKIP the command-sandbox attacks as nobody: ${why}`);
      return false;
    }
  }
  return true;
}

/** A directory owned by the server's user. */
function ownedDir(parent: string, prefix: string, as: RunAs): string {
  const d = mkdtempSync(path.join(parent, prefix));
  if (as === 'nobody') chownSync(d, NOBODY, NOBODY);
  chmodSync(d, 0o755);
  return d;
}

export function commandConfinementSuite(as: RunAs): void {
  const d = canRun(as) ? describe : describe.skip;
  d(`command sandbox attacks, server as ${as}`, () => {
    const tag = randomBytes(6).toString('hex');
    const canary = `CANARY-${tag}`;
    const made: string[] = [];
    let tmpWs: string;
    let homeParent: string;
    let homeWs: string;
    let runtimeRoot: string;
    let srv: Server;
    let homeSrv: Server;
    const files = canaryFiles('wb-canary', tag);
    const run = async (cmd: string, s: () => Server = () => srv) => {
      const r = await call(s().url, 'exec_command', { cmd, yield_time_ms: 30_000 });
      expect(r.sc.status, JSON.stringify(r.sc)).not.toBe('running');
      return r.sc as { stdout: string; stderr: string; status: string; exit_code?: number };
    };

    beforeAll(async () => {
      plantCanaries(files, canary, made);
      tmpWs = ownedDir('/tmp', 'wb-cmd-ws-', as);
      runtimeRoot = ownedDir('/tmp', 'wb-cmd-rt-', as);
      // A second workspace under /home: hidden directories bound back must stay writable.
      homeParent = ownedDir('/home', `wb-cmd-${tag}-`, as);
      homeWs = ownedDir(homeParent, 'ws-', as);
      made.push(tmpWs, runtimeRoot, homeParent);
      [srv, homeSrv] = await Promise.all([
        startBin(tmpWs, runtimeRoot, as),
        startBin(homeWs, runtimeRoot, as),
      ]);
    }, HUNG_MS);

    afterAll(async () => {
      await Promise.all([srv?.stop(), homeSrv?.stop()]);
      for (const f of made.reverse()) rmSync(f, { recursive: true, force: true });
    }, HUNG_MS);

    it('the capability set inside a command is empty (CapEff 0, no-new-privileges), whoever runs the server', async () => {
      const r = await run('grep -E "^(CapEff|CapPrm|CapAmb|NoNewPrivs):" /proc/self/status');
      expect(r.stdout).toMatch(/^CapPrm:\s+0{16}$/m);
      expect(r.stdout).toMatch(/^CapEff:\s+0{16}$/m);
      expect(r.stdout).toMatch(/^CapAmb:\s+0{16}$/m);
      expect(r.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
    });

    it('umount /tmp (to uncover the host /tmp) and umount -l /proc fail; the /tmp canary stays unseen', async () => {
      const r = await run(
        `umount /tmp; echo "a=$?"; umount -l /tmp; echo "b=$?"; umount -l /proc; echo "c=$?"; cat ${files.tmp}`,
      );
      expect(r.stdout).toMatch(/a=[1-9]/);
      expect(r.stdout).toMatch(/b=[1-9]/);
      expect(r.stdout).toMatch(/c=[1-9]/);
      expect(r.stdout + r.stderr).not.toContain(canary);
    });

    it('mount --bind of a hidden directory and a fresh tmpfs mount fail', async () => {
      const r = await run(
        'mkdir -p m; mount --bind /home m; echo "a=$?"; mount -t tmpfs x m; echo "b=$?"; ls -A m',
      );
      expect(r.stdout).toMatch(/^a=[1-9]\d*\nb=[1-9]\d*\n$/);
    });

    it('mount -o remount,rw / and then a write into the host /etc fails; nothing appears in /etc', async () => {
      const target = `/etc/wb-remount-${tag}`;
      const r = await run(
        `mount -o remount,bind,rw /; echo "a=$?"; python3 -c "open('${target}','w').write('x')" 2>&1 | tail -n 1`,
      );
      expect(r.stdout).toMatch(/a=[1-9]/);
      expect(r.stdout).toMatch(/Read-only file system|Permission denied/);
      expect(existsSync(target)).toBe(false);
    });

    it('unshare and nsenter into the server namespaces fail (no user namespace may be made, no setns)', async () => {
      const r = await run(
        `unshare -U true; echo "a=$?"; unshare -m true; echo "b=$?"; nsenter --net=/proc/1/ns/net true; echo "c=$?"; ` +
          `nsenter -t ${srv.pid} -n -m true; echo "d=$?"`,
      );
      expect(r.stdout).toMatch(/^a=[1-9]\d*\nb=[1-9]\d*\nc=[1-9]\d*\nd=[1-9]\d*\n$/);
    });

    it("/proc/<server pid>/environ is unreadable: the server's token never reaches a command", async () => {
      const r = await run(
        `cat /proc/${srv.pid}/environ; echo "a=$?"; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c SERVICE_AUTH_TOKEN`,
      );
      expect(r.stdout).toMatch(/a=[1-9]/);
      expect(r.stdout).not.toContain(TEST_TOKEN);
      expect(r.stdout.trim().split('\n').pop()).toBe('0');
      // The server's processes are out of sight: /proc holds only the sandbox's PID namespace.
      const ps = await run('ls /proc | grep -c "^[0-9]"');
      expect(Number(ps.stdout.trim())).toBeLessThan(10);
    });

    it('canaries in /root, another home directory, /tmp outside the workspace and /etc/shadow are unreadable', async () => {
      const r = await run(
        `for f in ${files.root} ${files.home} ${files.tmp}; do python3 -c "import sys; print(open(sys.argv[1]).read())" "$f" 2>&1 | tail -n 1; done; ` +
          'cat /etc/shadow /etc/gshadow | wc -c; ls -A /root /home | grep -c wb-canary',
      );
      expect(r.stdout + r.stderr).not.toContain(canary);
      expect(r.stdout).toMatch(/No such file or directory/);
      expect(r.stderr).toMatch(/shadow: Permission denied/);
      expect(r.stdout.trim().split('\n').slice(-2)).toEqual(['0', '0']);
      if (as === 'root') expect(readFileSync('/etc/shadow').length).toBeGreaterThan(0);
    });

    it('a write outside the writable set fails with an error the command sees (never into a vanishing tmpfs)', async () => {
      const targets = ['/root/x', `${path.dirname(files.home)}/x`, '/var/tmp/x', '/usr/x', `${homeParent}/x`];
      const py = `import sys\nfor t in sys.argv[1:]:\n  try:\n    open(t,'w').write('x'); print('WROTE', t)\n  except OSError as e:\n    print('ERR', e.errno, t)`;
      const r = await run(`python3 -c "${py}" ${targets.join(' ')}`, () => homeSrv);
      expect(r.stdout).not.toContain('WROTE');
      expect(r.stdout.trim().split('\n')).toHaveLength(targets.length);
      for (const t of targets) expect(existsSync(t), t).toBe(false);
      // The workspace under /home is writable, and what was written is there on the host.
      const w = await run('echo kept > written.txt && cat written.txt', () => homeSrv);
      expect(w.stdout).toBe('kept\n');
      expect(readFileSync(path.join(homeWs, 'written.txt'), 'utf8')).toBe('kept\n');
    });

    // These servers' runtime directories lie under /tmp, so /tmp is empty and read-only inside (no mount point
    // is ever made where a command can write) and $TMPDIR is the place for temporary files.
    it('a $TMPDIR file written by one command is read by the next; /tmp is read-only when the runtime directory lies under it', async () => {
      const name = `wb-keep-${tag}.txt`;
      await run(`python3 -c "import os; open(os.environ['TMPDIR'] + '/${name}','w').write('persisted')"`);
      const r = await run(`cat "$TMPDIR/${name}"; echo; echo x > /tmp/${name} || echo refused`);
      expect(r.stdout).toMatch(/^persisted\nrefused\n$/);
      expect(existsSync(`/tmp/${name}`)).toBe(false);
      const env = await call(srv.url, 'check_exec_environment');
      expect(readFileSync(path.join(env.sc.runtime_dirs.tmp, name), 'utf8')).toBe('persisted');
    });

    it('TIOCSTI terminal injection: no controlling terminal, no host terminal device, the ioctl fails', async () => {
      const py =
        'import fcntl, termios\ntry:\n  fcntl.ioctl(0, termios.TIOCSTI, b"x"); print("INJECTED")\nexcept OSError as e:\n  print("refused", e.errno)';
      const r = await run(
        `if (: < /dev/tty) 2>/dev/null; then echo has-tty; else echo no-tty; fi; ls /dev/pts | grep -vc ptmx; python3 -c '${py}'`,
      );
      expect(r.stdout).toMatch(/^no-tty\n0\nrefused \d+\n$/);
    });

    it('find . -delete is refused in safe like rm -rf; the refusal names policy the second line, the kernel the first', async () => {
      writeFileSync(path.join(tmpWs, 'victim.txt'), 'still here\n');
      if (as === 'nobody') chownSync(path.join(tmpWs, 'victim.txt'), NOBODY, NOBODY);
      const r = await call(srv.url, 'exec_command', { cmd: 'find . -name victim.txt -delete' });
      expect(r.isError).toBe(true);
      expect(r.sc.error.code).toBe('PERMISSION_REQUIRED');
      expect(r.sc.error.message).toMatch(
        /-delete` deletes every file it matches.*second line.*kernel sandbox/,
      );
      expect(readFileSync(path.join(tmpWs, 'victim.txt'), 'utf8')).toBe('still here\n');
    });

    it(`a bounded fork storm (2000) stops at the process limit (${STORM_LIMIT}) and the server keeps answering`, async () => {
      const py = forkStormPy(`storm-${tag}`, 1);
      const started = await call(srv.url, 'exec_command', {
        cmd: `exec python3 -c '${py}'`,
        yield_time_ms: 0,
      });
      const info = await call(srv.url, 'server_info');
      expect(info.sc.process_limit.max_processes).toBe(STORM_LIMIT);
      const { out, err } = await followToEnd(srv.url, started);
      if (info.sc.process_limit.enforced_by.startsWith('cgroup')) {
        expect(out).toMatch(/fork failed 11/);
        expect(Number(/forked (\d+)/.exec(out)?.[1])).toBeLessThan(STORM_LIMIT);
        expect(err).toMatch(/reached its limit of 64 processes/);
      } else {
        expect(err).toMatch(/grew past 64 processes/);
      }
      // Every process of the storm is gone, and the server still answers at once.
      expect(await waitFor(() => countWith(`storm-${tag}`) === 0)).toBe(true);
      const again = await run('echo alive');
      expect(again.stdout).toBe('alive\n');
    });
  });
}

/** Live processes whose command line contains `marker` (the storm's program text carries the test's tag). */
function countWith(marker: string): number {
  return spawnSync('pgrep', ['-f', marker], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).length;
}
