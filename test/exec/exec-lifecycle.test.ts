// The life of commands around the server's own (docs/tools.md#commands; docs/design-notes.md#command-line;
// docs/design-notes.md#bash-and-retention, docs/design-notes.md#runtime-directory): the spawned server
// withholds its secrets from children, keeps the runtime directory outside the workspace and removes it at
// shutdown, ends every command tree on SIGTERM and on stdin EOF (stdio), refuses to start when a required
// sandbox cannot run; retention and eviction with an injected clock; permission-mode refusals and environment
// rules.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { BIN, startInProcess, startServer, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { call, needBwrap, processesWith, uniqueMarker, waitFor } from './exec-support.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';

const SECRETS = {
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY',
  GITHUB_TOKEN: 'ghp_0123456789abcdefghijABCDEFGHIJ012345',
  INNOCENT_LOOKING: 'ghp_ZYXWVUTSRQPONMLKJIHGfedcba9876543210',
  NPM_CONFIG_AUTH: 'plain-value-under-a-secret-name',
  NODE_OPTIONS: '--max-old-space-size=512',
  PYTHONPATH: '/somewhere/else',
};

describe('spawned server: environment, runtime directory, shutdown (docs/design-notes.md#command-line)', () => {
  let ws: TempWorkspace;
  beforeAll(() => {
    ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  });
  afterAll(() => ws?.cleanup());

  it('secrets of the server environment never reach a command (docs/tools.md#commands: environment)', async () => {
    const srv = await startServer({
      workspace: ws.dir,
      env: { ...SECRETS, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
    });
    try {
      const r = await call(srv.url, 'exec_command', { cmd: 'env' });
      expect(r.sc.status).toBe('exited');
      const env = r.sc.stdout as string;
      for (const [k, v] of Object.entries(SECRETS)) {
        expect(env).not.toContain(`${k}=`);
        expect(env).not.toContain(v);
      }
      expect(env).not.toContain('SERVICE_AUTH_TOKEN');
      expect(env).not.toContain('test-token-0123456789abcdef');
      expect(env).toMatch(/^LANG=C\.UTF-8$/m);
      expect(env).toMatch(/^LC_ALL=C\.UTF-8$/m);
      expect(env).toMatch(/^PAGER=cat$/m);
      expect(env).toMatch(/^GIT_PAGER=cat$/m);
      expect(env).toMatch(/^NO_COLOR=1$/m);
      expect(env).toMatch(/^TERM=dumb$/m);
    } finally {
      await srv.stop();
    }
  });

  it('runtime directory: outside the workspace, HOME/TMPDIR/XDG_CACHE_HOME inside it, removed at SIGTERM; command trees end (docs/design-notes.md#runtime-directory)', async () => {
    const srv = await startServer({ workspace: ws.dir });
    const [child, deaf] = [uniqueMarker(), uniqueMarker()];
    let root = '';
    try {
      const env = await call(srv.url, 'check_exec_environment');
      root = env.sc.runtime_dirs.root;
      expect(root.startsWith(ws.dir + '/')).toBe(false);
      expect(existsSync(root)).toBe(true);
      const r = await call(srv.url, 'exec_command', {
        cmd: 'echo "$HOME|$TMPDIR|$XDG_CACHE_HOME"; touch "$TMPDIR/scratch"',
      });
      expect(r.sc.stdout.trim()).toBe(`${root}/home|${root}/tmp|${root}/cache`);
      expect(existsSync(`${root}/tmp/scratch`)).toBe(true);
      const bg = await call(srv.url, 'exec_command', {
        cmd: `sh -c 'sleep ${child} & wait'`,
        yield_time_ms: 0,
      });
      expect(bg.sc.status).toBe('running');
      const trap = await call(srv.url, 'exec_command', {
        cmd: `trap "" TERM; sleep ${deaf}`,
        yield_time_ms: 0,
      });
      expect(trap.sc.status).toBe('running');
      expect(await waitFor(() => processesWith(child).length === 1 && processesWith(deaf).length === 1)).toBe(
        true,
      );
    } finally {
      expect(await srv.stop('SIGTERM')).toBe(0);
    }
    expect(existsSync(root)).toBe(false);
    // A SIGKILLed process may stay in /proc for a moment after the server exited; its sleep lasts > 1000 s.
    expect(await waitFor(() => processesWith(child).length === 0)).toBe(true);
    expect(await waitFor(() => processesWith(deaf).length === 0)).toBe(true); // it ignored TERM: shutdown escalated
  });

  // A command's bwrap (making its mount points in the instance's directory) may still be starting
  // when the signal comes: shutdown waits for it before removing the directory, and a directory that will not go
  // is logged, never a crash. Ten starts, each stopped the moment it says it is listening.
  it('SIGTERM the moment the server is listening, ten times: exit 0 each time, the runtime directory removed (docs/design-notes.md#runtime-directory)', async () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'wb-rt-'));
    try {
      for (let i = 0; i < 10; i++) {
        const srv = await startServer({ workspace: ws.dir, env: { SERVICE_RUNTIME_ROOT: parent } });
        const pid = srv.proc.pid as number;
        const code = await srv.stop('SIGTERM');
        expect(code, srv.stderr()).toBe(0);
        // Removed whole: nothing of this instance, and no empty directory above it.
        expect(existsSync(path.join(parent, 'workbench-mcp')), `instance ${pid}`).toBe(false);
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('a runtime directory that will not go (a mount inside it) is logged at shutdown, and the exit is still 0', async () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'wb-rt-'));
    let held = '';
    try {
      const srv = await startServer({ workspace: ws.dir, env: { SERVICE_RUNTIME_ROOT: parent } });
      const base = path.join(parent, 'workbench-mcp');
      const instance = path.join(base, readdirSync(base)[0] as string, String(srv.proc.pid));
      held = path.join(instance, 'held');
      if (!mountTmpfs(held, '64k', 'the runtime directory held by a mount')) {
        held = '';
        expect(await srv.stop('SIGTERM')).toBe(0);
        return;
      }
      expect(await srv.stop('SIGTERM'), srv.stderr()).toBe(0);
      expect(srv.stderr()).toMatch(/the runtime directory could not be removed.*EBUSY/);
    } finally {
      if (held) unmountTmpfs(held);
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('SIGINT shuts down like SIGTERM: exit 0, command trees ended', async () => {
    const srv = await startServer({ workspace: ws.dir });
    const m = uniqueMarker();
    const r = await call(srv.url, 'exec_command', { cmd: `sleep ${m}`, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
    expect(await srv.stop('SIGINT')).toBe(0);
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
  });

  it('stdio: stdin EOF shuts the server down and ends its commands', async () => {
    const proc = spawn(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    const m = uniqueMarker();
    let out = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => (out += c));
    const req = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'exec_command', arguments: { cmd: `sh -c 'sleep ${m} & wait'`, yield_time_ms: 0 } },
    };
    proc.stdin.write(JSON.stringify(req) + '\n');
    expect(await waitFor(() => out.includes('\n'))).toBe(true);
    const reply = JSON.parse(out.split('\n')[0] as string);
    expect(reply.result.structuredContent.status).toBe('running');
    expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
    proc.stdin.end();
    // The ceiling only ends a hung test (the server must exit by itself on EOF).
    const hung = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(hung);
    expect(code).toBe(0);
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
  });

  it('a crashed instance leaves commands behind; the next instance of the workspace ends them at start', async () => {
    const first = await startServer({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'off' } });
    const m = uniqueMarker(); // orphaned to init after the crash, and still counted by its marker
    const r = await call(first.url, 'exec_command', { cmd: `sleep ${m}`, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
    await first.stop('SIGKILL'); // no shutdown hooks run
    // Not asserted alive here: any server starting on this host meanwhile (another test file) may already
    // have ended it through the dead instance's pids cgroup (pids-limit.ts) — the same promise, kept sooner.
    const second = await startServer({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'off' } });
    try {
      expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
    } finally {
      await second.stop();
    }
  });

  it('in bubblewrap, commands die with a crashed server at once (--die-with-parent)', async () => {
    if (!needBwrap('the crash test inside bubblewrap')) return;
    const first = await startServer({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'bwrap' } });
    const m = uniqueMarker();
    const r = await call(first.url, 'exec_command', { cmd: `sleep ${m}`, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
    await first.stop('SIGKILL');
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
  });

  it('SERVICE_SANDBOX=bwrap when bwrap cannot run: the server refuses to start (exit 2, one line)', async () => {
    const err = await startServer({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'bwrap', PATH: '/nonexistent-dir' },
    }).then(
      async (s) => {
        await s.stop();
        return 'started';
      },
      (e: Error) => e.message,
    );
    expect(err).toMatch(/server exited with 2/);
    expect(err).toMatch(/SERVICE_SANDBOX=bwrap, but bwrap \(bubblewrap\) is not installed/);
  });
});

describe('retention and eviction with an injected clock (docs/design-notes.md#bash-and-retention)', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    ws = makeWorkspace({});
    srv = await startInProcess({
      workspace: ws.dir,
      clock,
      env: { SERVICE_SANDBOX: 'off', SERVICE_EXEC_MAX_RETAINED: '2', SERVICE_EXEC_RETENTION_S: '900' },
    });
  });
  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('a finished command is kept for the retention time after it ended, then COMMAND_NOT_FOUND', async () => {
    const r = await call(srv.url, 'exec_command', { cmd: 'echo kept' });
    expect(r.sc.status).toBe('exited');
    clock.advance(899_000);
    const p = await call(srv.url, 'read_output', { output_ref: `command:${r.sc.command_id}:stdout` });
    expect(p.sc.content).toBe('kept\n');
    clock.advance(2_000);
    const gone = await call(srv.url, 'write_stdin', { command_id: r.sc.command_id });
    expect(gone.sc.error).toMatchObject({ code: 'COMMAND_NOT_FOUND', retryable: false });
    expect(gone.sc.error.message).toMatch(/900 s/);
  });

  it('a command whose final status was never returned outlives the retention time until it is returned once', async () => {
    // It waits for a file the test creates, so it is still running when the first result comes.
    const r = await call(srv.url, 'exec_command', {
      cmd: 'while [ ! -e gate ]; do sleep 0.05; done; echo late',
      yield_time_ms: 0,
    });
    expect(r.sc.status).toBe('running');
    writeFileSync(path.join(ws.dir, 'gate'), '');
    const c = srv.runtime.commands.get(r.sc.command_id);
    expect(await waitFor(() => !c.running)).toBe(true);
    clock.advance(10_000_000);
    const p = await call(srv.url, 'write_stdin', { command_id: r.sc.command_id });
    expect(p.sc).toMatchObject({ status: 'exited', exit_code: 0, stdout: 'late\n' });
    clock.advance(901_000);
    const gone = await call(srv.url, 'write_stdin', { command_id: r.sc.command_id });
    expect(gone.sc.error.code).toBe('COMMAND_NOT_FOUND');
  });

  it('a command that cannot be started is status "failed" with the reason on stderr (docs/design-notes.md#command-status)', async () => {
    const spec = {
      cmd: 'true',
      cwd: `${ws.dir}/vanished`,
      workdir: 'vanished',
      timeoutMs: 5000,
      maxOutputBytes: 65536,
      stdin: '',
      env: {},
    };
    for (const tty of [false, true]) {
      const c = srv.runtime.commands.start({ ...spec, tty });
      expect(await waitFor(() => !c.running)).toBe(true);
      const r = await call(srv.url, 'write_stdin', { command_id: c.id });
      if (tty && c.status !== 'failed') {
        // The PTY library starts its child before chdir fails: it reports the child's own exit instead.
        expect(r.sc.status).toBe('exited');
        expect(r.sc.exit_code).not.toBe(0);
        continue;
      }
      expect(r.sc).toMatchObject({ status: 'failed' });
      expect(r.sc.stderr).toMatch(/could not be started/);
      expect(r.text).toMatch(/Failed to start/);
    }
  });

  it('if the spawner helper dies, its commands are stopped and reported, and the next command starts a new one', async () => {
    const m = uniqueMarker();
    const r = await call(srv.url, 'exec_command', { cmd: `sleep ${m}`, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
    const sleeper = processesWith(m)[0] as number;
    const stat = readFileSync(`/proc/${sleeper}/stat`, 'latin1');
    const helper = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    expect(readFileSync(`/proc/${helper}/cmdline`, 'latin1')).toContain('spawner-main');
    process.kill(helper, 'SIGKILL');
    expect(await waitFor(() => !srv.runtime.commands.get(r.sc.command_id).running)).toBe(true);
    const p = await call(srv.url, 'write_stdin', { command_id: r.sc.command_id });
    expect(p.sc).toMatchObject({ status: 'terminated', signal: 'SIGKILL' });
    expect(p.sc.stderr).toMatch(/helper .* ended unexpectedly/);
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
    const again = await call(srv.url, 'exec_command', { cmd: 'echo again' });
    expect(again.sc).toMatchObject({ status: 'exited', stdout: 'again\n' });
  });

  it('at most SERVICE_EXEC_MAX_RETAINED finished commands are kept, oldest dropped first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await call(srv.url, 'exec_command', { cmd: `echo ${i}` })).sc.command_id);
      clock.advance(1000);
    }
    const first = await call(srv.url, 'write_stdin', { command_id: ids[0] as string });
    expect(first.sc.error.code).toBe('COMMAND_NOT_FOUND');
    for (const id of ids.slice(1))
      expect((await call(srv.url, 'write_stdin', { command_id: id })).sc.status).toBe('exited');
  });
});

describe('total retained output (docs/tools.md#limits: SERVICE_EXEC_TOTAL_BUFFER_BYTES)', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  beforeAll(async () => {
    ws = makeWorkspace({});
    srv = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'off', SERVICE_EXEC_TOTAL_BUFFER_BYTES: String(1 << 20) },
    });
  });
  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('finished commands beyond the byte budget are dropped oldest first; each stream keeps at most its buffer', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(srv.url, 'exec_command', { cmd: 'seq 1 200000', yield_time_ms: 30_000 });
      expect(r.sc).toMatchObject({ status: 'exited', stdout_omitted_bytes: expect.any(Number) });
      ids.push(r.sc.command_id);
    }
    expect(srv.runtime.commands.retainedBytes()).toBeLessThanOrEqual(1 << 20);
    expect((await call(srv.url, 'write_stdin', { command_id: ids[0] as string })).sc.error.code).toBe(
      'COMMAND_NOT_FOUND',
    );
    for (const id of ids.slice(1)) {
      const r = await call(srv.url, 'read_output', {
        output_ref: `command:${id}:stdout`,
        offset: 0,
        limit: 6,
      });
      expect(r.sc.content).toBe('1\n2\n3\n');
    }
    const env = await call(srv.url, 'check_exec_environment');
    expect(env.sc.limits.total_buffer_bytes).toBe(1 << 20);
    expect(env.sc.usage).toMatchObject({ finished_kept: 2, retained_output_bytes: 2 * 524_288 });
  });
});

describe('permission modes and environment rules (docs/tools.md#permission-modes; docs/design-notes.md#command-arguments)', () => {
  let ws: TempWorkspace;
  let safe: InProcessServer;
  let dangerous: InProcessServer;
  beforeAll(async () => {
    ws = makeWorkspace({ 'build/out.txt': 'x\n' });
    safe = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'off' } });
    dangerous = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'off', SERVICE_PERMISSION_MODE: 'dangerous' },
    });
  });
  afterAll(async () => {
    await safe?.close();
    await dangerous?.close();
    ws?.cleanup();
  });

  it.each([
    ['rm -rf build', 'destructive'],
    ['git reset --hard HEAD~1', 'destructive'],
    ['git clean -fdx', 'destructive'],
    ['sudo ls', 'destructive'],
    ['echo x > /etc/wb-test', 'outside_write'],
    ['cp a.txt ../elsewhere.txt', 'outside_write'],
    ['cd / && touch wb-test', 'outside_write'],
    ['curl https://example.com', 'network'],
    ['npm install left-pad', 'network'],
  ])('safe mode refuses %j as %s with PERMISSION_REQUIRED and how to proceed', async (cmd, rule) => {
    const r = await call(safe.url, 'exec_command', { cmd });
    expect(r.isError).toBe(true);
    expect(r.sc.error).toMatchObject({
      code: 'PERMISSION_REQUIRED',
      category: 'permission',
      retryable: false,
      details: { rule, permission_mode: 'safe' },
    });
    expect(r.text).toMatch(/--permission-mode (dangerous|trusted)/);
  });

  it.each([
    'cat /etc/os-release >/dev/null',
    'ls /usr/lib > listing.txt',
    'rm build/out.txt',
    'echo hi > "$TMPDIR/x"',
    'git status 2>&1 | head -1',
  ])('safe mode allows %j (plain reads anywhere, writes inside)', async (cmd) => {
    const r = await call(safe.url, 'exec_command', { cmd });
    expect(r.isError).toBe(false);
    expect(r.sc.status).toBe('exited');
  });

  it('dangerous mode runs destructive commands', async () => {
    ws.write('scratch/f.txt', 'x');
    const r = await call(dangerous.url, 'exec_command', { cmd: 'rm -rf scratch && echo gone' });
    expect(r.sc).toMatchObject({ status: 'exited', stdout: 'gone\n' });
  });

  it('per-call env: secret and loader keys refused outside dangerous; ordinary keys passed', async () => {
    const s = await call(safe.url, 'exec_command', { cmd: 'true', env: { GITHUB_TOKEN: 'x' } });
    expect(s.sc.error).toMatchObject({
      code: 'PERMISSION_REQUIRED',
      details: { rule: 'secret_env', keys: ['GITHUB_TOKEN'] },
    });
    const l = await call(safe.url, 'exec_command', { cmd: 'true', env: { LD_PRELOAD: '/x.so' } });
    expect(l.sc.error).toMatchObject({ code: 'PERMISSION_REQUIRED', details: { rule: 'loader_env' } });
    const ok = await call(safe.url, 'exec_command', {
      cmd: 'echo "$GIT_AUTHOR_NAME"',
      env: { GIT_AUTHOR_NAME: 'Ada' },
    });
    expect(ok.sc.stdout).toBe('Ada\n');
    const d = await call(dangerous.url, 'exec_command', {
      cmd: 'echo "$GITHUB_TOKEN"',
      env: { GITHUB_TOKEN: 'tok' },
    });
    expect(d.sc.stdout).toBe('tok\n');
  });

  it('a $HOME/.bashrc a command wrote never runs ahead of a later command, in safe and dangerous, on pipes and in a tty', async () => {
    for (const srv of [safe, dangerous]) {
      const plant = await call(srv.url, 'exec_command', {
        cmd: 'echo "echo PLANTED" > "$HOME/.bashrc" && echo "$SHLVL"',
      });
      // bash -c raised the level the server gave (1), as a shell typed in a terminal does.
      expect(plant.sc).toMatchObject({ status: 'exited', stdout: '2\n' });
      for (const tty of [false, true]) {
        const r = await call(srv.url, 'exec_command', { cmd: 'echo next', tty });
        expect([tty, r.sc.status, String(r.sc.stdout).replace(/\r/g, '')]).toEqual([tty, 'exited', 'next\n']);
      }
      await call(srv.url, 'exec_command', { cmd: 'rm "$HOME/.bashrc"' });
    }
    // Below 1 it would turn the sourcing back on: a loader variable, refused outside dangerous.
    const l = await call(safe.url, 'exec_command', { cmd: 'true', env: { SHLVL: '0' } });
    expect(l.sc.error).toMatchObject({ code: 'PERMISSION_REQUIRED', details: { rule: 'loader_env' } });
  });

  it('tools/list annotations of the command tools are truthful (docs/tools.md#results-and-errors)', async () => {
    const tools = safe.runtime.catalog.realAnnotations;
    expect(tools.get('exec_command')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    });
    expect(tools.get('write_stdin')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(tools.get('kill_command')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: false,
    });
    expect(tools.get('read_output')).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(tools.get('check_exec_environment')).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
    });
  });
});
