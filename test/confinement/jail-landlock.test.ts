// The tool jail on the Landlock helper (src/process/jail/jail-landlock.ts), driven directly: SERVICE_SANDBOX=landlock
// makes ToolJail skip bubblewrap, so the programs below start exactly as git and rg do (process/jail/argv.ts
// runArgv with the jail). Each program stands for what a hostile repository would make git run if git's own
// hardening (git/run.ts) ever let it: it must not write outside (a canary in a directory the server user may
// write, outside every hidden path), nor in the workspace, nor reach a host TCP or UDP listener, nor read the
// server's secret files or the kept state of any instance, nor anything off the allow-list (host-view.ts) of
// `safe` commands, nor signal the server. git and rg themselves still work in a workspace under /tmp
// (a hidden directory). The servers in a simulated container (both users) are confinement2-git-suite.ts.
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgv } from '../../src/process/jail/argv.js';
import { ToolJail } from '../../src/process/jail/jail.js';
import { createRuntimeDirs, removeRuntimeDirs, type RuntimeDirs } from '../../src/process/runtime-dir.js';
import { containerLauncher } from '../helpers/container-sim.js';
import { REPO_ROOT } from '../helpers/server.js';
import { git } from '../helpers/workspace.js';

const usable = containerLauncher('the Landlock tool jail') !== undefined;
const d = usable ? describe : describe.skip;

d('the tool jail on Landlock (bubblewrap not used)', () => {
  const tag = randomBytes(4).toString('hex');
  let ws: string;
  let rt: string;
  let outside: string;
  let secret: string;
  let srv: string;
  let dirs: RuntimeDirs;
  let jail: ToolJail;
  const hits = { tcp: 0, udp: 0 };
  const tcp = createServer((s) => {
    hits.tcp++;
    s.destroy();
  });
  const udp = createSocket('udp4');
  const ports = { tcp: 0, udp: 0 };
  const run = (file: string, args: string[], timeoutMs = 20_000) =>
    runArgv(file, args, {
      cwd: ws,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dirs.home, LANG: 'C.UTF-8' },
      timeoutMs,
      maxStdoutBytes: 1 << 20,
      jail,
    });

  beforeAll(async () => {
    ws = mkdtempSync(path.join(tmpdir(), 'wb-jail-ws-'));
    rt = mkdtempSync(path.join(tmpdir(), 'wb-jail-rt-'));
    // Outside the workspace and outside every path the sandboxes hide: writable by the server user.
    outside = path.join(REPO_ROOT, 'node_modules/.cache', `wb-jail-outside-${tag}`);
    mkdirSync(outside, { recursive: true });
    chmodSync(outside, 0o777);
    secret = path.join(outside, 'token');
    writeFileSync(secret, 'SECRET-TOKEN\n', { mode: 0o644 });
    git(ws, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(ws, 'a.txt'), 'alpha needle\n');
    writeFileSync(path.join(ws, 'b.txt'), 'beta\n');
    git(ws, 'add', '-A');
    git(ws, '-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '-m', 'first');
    writeFileSync(path.join(ws, 'b.txt'), 'beta needle\n');
    dirs = createRuntimeDirs({ configured: rt }, ws);
    // A state root and another project under /srv, outside every directory a deny-list would hide.
    srv = mkdtempSync('/srv/wb-jail-');
    for (const f of ['state/workbench-mcp/0123456789abcdef/bearer-token', 'other-project/.env']) {
      mkdirSync(path.dirname(path.join(srv, f)), { recursive: true });
      writeFileSync(path.join(srv, f), 'KEPT-SECRET\n', { mode: 0o644 });
    }
    jail = new ToolJail({
      requested: 'landlock',
      pathVar: process.env.PATH,
      workspaceReal: ws,
      dirs,
      privateFiles: [secret],
      sealed: [path.join(srv, 'state/workbench-mcp')],
      readAllow: [path.join(srv, 'state')],
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    udp.on('message', () => hits.udp++);
    ports.tcp = (tcp.address() as { port: number }).port;
    ports.udp = udp.address().port;
  });

  afterAll(async () => {
    await new Promise((r) => tcp.close(r));
    await new Promise((r) => udp.close(() => r(undefined)));
    jail?.close();
    if (dirs) removeRuntimeDirs(dirs);
    for (const p of [ws, rt, outside, srv]) if (p) rmSync(p, { recursive: true, force: true });
  });

  it('is the jail in use, and says so', () => {
    const s = jail.status();
    expect(s.in_use, s.reason).toBe('landlock');
    expect(s.reason).toMatch(/Landlock/);
  });

  it('git and rg work in a workspace under /tmp', async () => {
    const st = await run('git', ['-c', 'safe.directory=*', 'status', '--porcelain']);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout.toString()).toBe(' M b.txt\n');
    expect(st.stderr).toBe('');
    const log = await run('git', ['-c', 'safe.directory=*', 'log', '--format=%s']);
    expect(log.stdout.toString()).toBe('first\n');
    const rg = await run('rg', ['--no-heading', '--sort', 'path', 'needle', '.']);
    expect(rg.code, rg.stderr).toBe(0);
    expect(rg.stdout.toString()).toBe('./a.txt:alpha needle\n./b.txt:beta needle\n');
  });

  it('a planted program writes nowhere but its scratch directory, which is gone after', async () => {
    const script = [
      `echo x > ${outside}/canary`,
      'echo x > a.txt',
      'echo x > new.txt',
      `echo x > ${dirs.home}/planted`,
      'echo ok > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"',
      'echo "$HOME" = "$TMPDIR"',
    ].join('; ');
    const r = await run('sh', ['-c', script]);
    const scratch = /^ok\n(\S+) = \1\n$/.exec(r.stdout.toString())?.[1];
    expect(r.stdout.toString()).toMatch(/^ok\n(\S+) = \1\n$/);
    expect(r.stderr).toMatch(/Permission denied/);
    expect(existsSync(path.join(outside, 'canary'))).toBe(false);
    expect(existsSync(path.join(ws, 'new.txt'))).toBe(false);
    expect(existsSync(path.join(dirs.home, 'planted'))).toBe(false);
    // The run's own scratch directory is gone; what is left belongs to the jails prepared ahead, waiting.
    expect(path.dirname(scratch ?? '')).toBe(path.join(dirs.root, 'jail'));
    expect(existsSync(scratch ?? '/')).toBe(false);
  });

  it('no TCP or UDP reaches a host listener', async () => {
    const py = [
      'import socket',
      'def t(n, f):',
      '  try:',
      '    f(); print(n + ": OK")',
      '  except OSError as e:',
      '    print(n + ": " + str(e.errno))',
      `t("tcp", lambda: socket.create_connection(("127.0.0.1", ${ports.tcp}), timeout=5).close())`,
      `t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", ${ports.udp})))`,
    ].join('\n');
    // The system's python: a user's (pyenv under /root) lies in a directory the jail hides.
    const r = await run(existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', ['-c', py]);
    expect(r.stdout.toString(), r.stderr).toMatch(/^tcp: \d+\nudp: \d+\n$/);
    expect(hits).toEqual({ tcp: 0, udp: 0 });
  });

  it("the server's secret files, files in /tmp and the runtime directory are unreadable; no signal reaches the server", async () => {
    const inTmp = path.join(tmpdir(), `wb-jail-tmpfile-${tag}`);
    writeFileSync(inTmp, 'IN-TMP\n', { mode: 0o644 });
    writeFileSync(path.join(dirs.home, 'f'), 'IN-HOME\n', { mode: 0o644 });
    try {
      // Names stay listable, as for Landlock commands (sandbox-landlock.ts); contents do not.
      const r = await run('sh', [
        '-c',
        `cat ${secret}; cat ${inTmp}; cat ${dirs.home}/f; kill -0 ${process.pid} && echo SIGNALLED; echo end`,
      ]);
      expect(r.stdout.toString()).toBe('end\n');
      expect(r.stderr.match(/Permission denied/g)?.length, r.stderr).toBe(3);
    } finally {
      rmSync(inTmp, { force: true });
    }
  });

  it('sees the allow-list of safe commands: kept state (even inside SERVICE_READ_ALLOW) and /srv are unreadable', async () => {
    const files = [`${srv}/state/workbench-mcp/0123456789abcdef/bearer-token`, `${srv}/other-project/.env`];
    const r = await run('sh', ['-c', `cat ${files.join(' ')}; echo end`]);
    expect(r.stdout.toString()).toBe('end\n');
    expect(r.stderr.match(/Permission denied/g)?.length, r.stderr).toBe(2);
  });

  it('what the program leaves in its process group ends with it, and the call does not wait for it', async () => {
    const r = await run('sh', ['-c', 'sleep 300 & echo $!']);
    expect(r.timedOut).toBe(false);
    const pid = Number(r.stdout.toString().trim());
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid), `sleep ${pid} still runs`).toBe(true);
  });

  it('a process that left the group (setsid) holding the output does not hold the call past its timeout', async () => {
    // The leader waits (bounded) until the child has its own session, then exits.
    const script =
      'setsid sh -c \'echo $$ > "$TMPDIR/p"; exec sleep 300\' & ' +
      'i=0; while [ ! -s "$TMPDIR/p" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; cat "$TMPDIR/p"';
    const r = await run('sh', ['-c', script], 1500);
    expect(r.timedOut).toBe(true);
    const pid = Number(r.stdout.toString().trim());
    expect(pid).toBeGreaterThan(0);
    try {
      process.kill(pid, 'SIGKILL'); // still confined, but not the test's to leave behind
    } catch {
      /* already gone */
    }
  });
});

/** Whether `pid` has ended (gone, or a zombie awaiting its reaper), polled a bounded number of times. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return true;
    }
    if (/\) Z /.test(stat)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}
