// The OS sandbox (docs/tools.md#permission-modes beyond-note; docs/design-notes.md#sandbox-mounts;
// docs/security-model.md): what bubblewrap really confines. Each check uses a spelling the command policy
// cannot read (a variable, a Python call), so the kernel — not the policy — is what says no. Needs bwrap:
// skipped with the reason when absent, a failure under CI=true.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { call, needBwrap, processesWith, waitFor } from './exec-support.js';

const enabled = needBwrap('the sandbox tests');
const d = enabled ? describe : describe.skip;

d('bubblewrap sandbox', () => {
  let ws: TempWorkspace;
  let safe: InProcessServer;
  let trusted: InProcessServer;
  let dangerous: InProcessServer;
  const port = () => Number(new URL(safe.url).port);

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'alpha\n' });
    safe = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'auto' } });
    trusted = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'auto', SERVICE_PERMISSION_MODE: 'trusted' },
    });
    dangerous = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'auto', SERVICE_PERMISSION_MODE: 'dangerous' },
    });
  });
  afterAll(async () => {
    await Promise.all([safe?.close(), trusted?.close(), dangerous?.close()]);
    ws?.cleanup();
  });

  it('check_exec_environment states the sandbox and its network per mode', async () => {
    const s = await call(safe.url, 'check_exec_environment');
    // HTTP(S) through the filtering proxy where the bridge was built (docs/tools.md#network-in-safe-mode), else none.
    expect(s.sc.sandbox).toMatchObject({ requested: 'auto', in_use: 'bwrap' });
    expect(['proxy', 'none']).toContain(s.sc.sandbox.network);
    // trusted: its own network namespace too, every host name through the proxy (docs/security-model.md#network-per-mode).
    const t = await call(trusted.url, 'check_exec_environment');
    expect(t.sc.sandbox).toMatchObject({ in_use: 'bwrap' });
    expect(['proxy', 'none']).toContain(t.sc.sandbox.network);
    const dd = await call(dangerous.url, 'check_exec_environment');
    expect(dd.sc.sandbox.in_use).toBeUndefined();
    expect(dd.sc.sandbox.reason).toMatch(/dangerous/);
  });

  it('safe and trusted: not even the host loopback (the server itself is unreachable)', async () => {
    const probe = `t=/dev/tcp/127.0.0.1/${port()}; if timeout 3 bash -c "exec 3<>$t" 2>/dev/null; then echo reachable; else echo unreachable; fi`;
    const s = await call(safe.url, 'exec_command', { cmd: probe });
    expect(s.sc.stdout).toBe('unreachable\n');
    const links = await call(safe.url, 'exec_command', {
      cmd: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
    });
    expect(links.sc.stdout).toBe('lo\n');
    const t = await call(trusted.url, 'exec_command', { cmd: probe });
    expect(t.sc.stdout).toBe('unreachable\n');
  });

  it('the system is read-only; the workspace (under /tmp) and the runtime directory are writable (docs/design-notes.md#sandbox-mounts)', async () => {
    const r = await call(safe.url, 'exec_command', {
      cmd: 'd=/usr; touch $d/wb-sandbox-test; echo "rc=$?"; touch here.txt && touch "$HOME/x" && echo ok',
    });
    expect(r.sc.stderr).toMatch(/Read-only file system/);
    expect(r.sc.stdout).toBe('rc=1\nok\n');
    expect(ws.dir.startsWith('/tmp/')).toBe(true);
  });

  it('/tmp and home directories of the host are hidden', async () => {
    const r = await call(safe.url, 'exec_command', { cmd: 'ls -A /tmp; echo ---; ls -A /root 2>/dev/null' });
    // Only the mount points of the workspace and the runtime directory where they lie under the host's /tmp.
    const [tmp, root] = (r.sc.stdout as string).split('---\n');
    const tops = [ws.dir, safe.runtime.dirs.root]
      .filter((p) => p.startsWith('/tmp/'))
      .map((p) => p.split('/')[2]);
    expect((tmp as string).trim().split('\n').sort()).toEqual([...new Set(tops)].sort());
    expect(root).toBe('');
  });

  it('own PID namespace: the whole tree ends with the command, even a process that left the session', async () => {
    const r = await call(safe.url, 'exec_command', {
      cmd: 'readlink /proc/self/ns/pid; echo "init=$(cat /proc/1/comm)"; setsid sleep 53.17 & sleep 0.2; echo started',
    });
    expect(r.sc.status).toBe('exited');
    const [ns, init] = (r.sc.stdout as string).split('\n');
    expect(ns).toMatch(/^pid:\[\d+\]$/);
    expect(ns).not.toBe(`pid:[${statSync('/proc/self/ns/pid').ino}]`);
    // The namespace's init is bubblewrap's: the server and the host's processes are out of sight.
    expect(init).toBe('init=bwrap');
    expect(await waitFor(() => processesWith('53.17').length === 0, 3000)).toBe(true);
  });

  it('a command that could write outside by a spelling the policy cannot see is still stopped by the kernel', async () => {
    const r = await call(trusted.url, 'exec_command', {
      cmd: 'f=/etc/wb-sandbox-test; echo x > "$f" || echo denied',
    });
    expect(r.sc.stdout).toBe('denied\n');
  });
});

// README "Security model": every command is a sandbox of its own, so no command can see, signal or trace the
// helper that starts commands, or another command.
d('a sandbox for each command', () => {
  let ws: TempWorkspace;
  let safe: InProcessServer;

  beforeAll(async () => {
    ws = makeWorkspace({});
    safe = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'auto' } });
  });
  afterAll(async () => {
    await safe?.close();
    ws?.cleanup();
  });

  it('two commands never share a PID namespace, and neither sees a process it did not start', async () => {
    const cmd = 'readlink /proc/self/ns/pid; ls -d /proc/[0-9]* | wc -l';
    const [a, b] = await Promise.all([
      call(safe.url, 'exec_command', { cmd: `${cmd}; sleep 1` }),
      call(safe.url, 'exec_command', { cmd: `${cmd}; sleep 1` }),
    ]);
    const [nsA, countA] = (a.sc.stdout as string).trim().split('\n');
    const [nsB, countB] = (b.sc.stdout as string).trim().split('\n');
    expect(nsA).toMatch(/^pid:\[\d+\]$/);
    expect(nsA).not.toBe(nsB);
    // bwrap's init, the shell, the two programs of the pipeline, and in `safe` the proxy's bridge.
    expect(Number(countA)).toBeLessThanOrEqual(5);
    expect(Number(countB)).toBeLessThanOrEqual(5);
  });

  it('commands started at once each get their stdin and its end', async () => {
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(safe.url, 'exec_command', { cmd: 'cat', stdin: `hello-${i}`, yield_time_ms: 30_000 }),
      ),
    );
    rs.forEach((r, i) => {
      expect(r.sc.status).toBe('exited');
      expect(r.sc.stdout).toBe(`hello-${i}`);
    });
  });

  it('a command cannot lift its process limit: the cgroup file system is out of sight in safe', async () => {
    // `safe` sees an allow-list of the host, without /sys (docs/security-model.md#what-a-command-sees); other
    // modes see the host's read-only (the system is bound read-only).
    const r = await call(safe.url, 'exec_command', {
      cmd: 'n=0; for f in $(find /sys/fs/cgroup -name pids.max 2>/dev/null); do n=$((n+1)); (echo 99999 > "$f") 2>/dev/null && echo "wrote $f"; done; echo "tried $n"; [ -e /sys/fs/cgroup ] || echo absent',
    });
    expect(r.sc.stdout).not.toMatch(/wrote/);
    expect(r.sc.stdout).toMatch(/tried 0\nabsent/);
  });
});

// README "Commands": a private /tmp kept across a server's commands where neither the workspace nor the runtime
// directory lies under /tmp; where one does, /tmp is empty and read-only, so a write next to the workspace fails.
d('/tmp inside the sandbox', () => {
  let home: string;
  let srv: InProcessServer;

  beforeAll(async () => {
    home = mkdtempSync(path.join(homedir(), '.wb-ws-'));
    srv = await startInProcess({ workspace: home, env: { SERVICE_SANDBOX: 'auto' } });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('a workspace outside /tmp: a /tmp file of one command is read by the next, never on the host', async () => {
    const name = `wb-private-${process.pid}.txt`;
    const w = await call(srv.url, 'exec_command', { cmd: `echo kept > /tmp/${name} && cat /tmp/${name}` });
    const runtimeUnderTmp = srv.runtime.dirs.root.startsWith('/tmp/');
    if (runtimeUnderTmp) {
      expect(w.sc.stderr).toMatch(/Read-only file system/);
      return;
    }
    expect(w.sc.stdout).toBe('kept\n');
    expect((await call(srv.url, 'exec_command', { cmd: `cat /tmp/${name}` })).sc.stdout).toBe('kept\n');
    expect(existsSync(`/tmp/${name}`)).toBe(false);
  });
});
