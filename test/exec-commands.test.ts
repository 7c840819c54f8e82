// Commands as workspace resources (spec §1.6, §3, §6, §8; tool-contract "Commands"; decisions 17–19, 35),
// with real processes and real PTYs over the real HTTP stack, once without a sandbox and once inside
// bubblewrap (skipped with the reason when bwrap is absent; a failure under CI=true).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from './helpers/workspace.js';
import { startInProcess, type InProcessServer } from './helpers/server.js';
import { call, callOn, cancel, needBwrap, processesWith, sleep, waitFor } from './exec-support.js';

const MODES = ['off', 'bwrap'] as const;

describe.each(MODES)('commands, SERVICE_SANDBOX=%s', (sandbox) => {
  const enabled = sandbox === 'off' || needBwrap('commands inside bubblewrap');
  const t = enabled ? it : it.skip;
  let ws: TempWorkspace;
  let srv: InProcessServer;
  let url: string;

  beforeAll(async () => {
    if (!enabled) return;
    ws = makeWorkspace({ 'a.txt': 'alpha\n', 'sub/b.txt': 'beta\n' });
    srv = await startInProcess({ workspace: ws.dir, env: { SERVICE_SANDBOX: sandbox } });
    url = srv.url;
  });
  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  t('server_info and check_exec_environment report the same sandbox (tool-contract "Commands")', async () => {
    const info = await call(url, 'server_info');
    const env = await call(url, 'check_exec_environment');
    expect(env.isError).toBe(false);
    expect(info.sc.sandbox.in_use).toBe(sandbox === 'bwrap' ? 'bwrap' : null);
    expect(env.sc.sandbox.in_use).toBe(info.sc.sandbox.in_use);
    expect(env.sc.limits).toMatchObject({
      max_running: 16,
      max_finished_kept: 32,
      retention_s: 900,
      total_buffer_bytes: 16_777_216,
    });
    expect(info.sc.limits.exec_max_active).toBe(16);
  });

  t('exit codes: `exit 3` and `false` are results, not tool errors (decision 17)', async () => {
    const a = await call(url, 'exec_command', { cmd: 'echo out; echo err >&2; exit 3' });
    expect(a.isError).toBe(false);
    expect(a.sc).toMatchObject({
      status: 'exited',
      exit_code: 3,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      stdout_truncated: false,
    });
    expect(a.sc.output_refs).toEqual({
      stdout: `command:${a.sc.command_id}:stdout`,
      stderr: `command:${a.sc.command_id}:stderr`,
    });
    expect(a.sc.next_action).toBeUndefined();
    const f = await call(url, 'exec_command', { cmd: 'false' });
    expect(f.isError).toBe(false);
    expect(f.sc).toMatchObject({ status: 'exited', exit_code: 1, signal: null });
    expect(f.text).toMatch(/Exited with code 1/);
  });

  t('workdir is confined to the workspace; cwd and HOME are as documented', async () => {
    const r = await call(url, 'exec_command', { cmd: 'pwd; cat b.txt; echo "$HOME"', workdir: 'sub' });
    const [pwd, beta, home] = r.sc.stdout.trim().split('\n');
    expect(pwd).toBe(`${ws.dir}/sub`);
    expect(beta).toBe('beta');
    expect(home).toBe(srv.runtime.dirs.home);
    const out = await call(url, 'exec_command', { cmd: 'pwd', workdir: '../..' });
    expect(out.sc.error.code).toBe('PATH_OUTSIDE_WORKSPACE');
    const file = await call(url, 'exec_command', { cmd: 'pwd', workdir: 'a.txt' });
    expect(file.sc.error.code).toBe('NOT_A_DIRECTORY');
  });

  t('a signal from outside ends a command as "terminated" with the signal name (decision 17)', async () => {
    const r = await call(url, 'exec_command', { cmd: 'sleep 41.17', yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    const k = await call(url, 'kill_command', { command_id: r.sc.command_id, signal: 'INT' });
    expect(k.sc).toMatchObject({
      status: 'terminated',
      signal_sent: 'SIGINT',
      signal: 'SIGINT',
      exit_code: null,
    });
  });

  t('yield → running with next_action → write_stdin poll → exited (tool-contract "Commands")', async () => {
    const r = await call(url, 'exec_command', { cmd: 'echo start; sleep 0.6; echo end', yield_time_ms: 100 });
    expect(r.sc.status).toBe('running');
    expect(r.sc.next_action).toEqual({
      tool: 'write_stdin',
      arguments: { command_id: r.sc.command_id, chars: '' },
    });
    expect(r.text).toContain('write_stdin {"command_id"');
    let last = r;
    const seen = [r.sc.stdout];
    for (let i = 0; i < 20 && last.sc.status === 'running'; i++) {
      last = await call(url, last.sc.next_action.tool, last.sc.next_action.arguments);
      seen.push(last.sc.stdout);
    }
    expect(last.sc).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(seen.join('')).toBe('start\nend\n'); // each result shows only what is new
    const again = await call(url, 'write_stdin', { command_id: r.sc.command_id });
    expect(again.sc).toMatchObject({ status: 'exited', exit_code: 0, stdout: '' });
  });

  t('timeout fires while nobody polls; the process is gone before anyone asks (spec §8)', async () => {
    const r = await call(url, 'exec_command', { cmd: 'sleep 42.31', timeout_ms: 300, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    expect(await waitFor(() => processesWith('42.31').length > 0, 2000)).toBe(true);
    expect(await waitFor(() => processesWith('42.31').length === 0, 5000)).toBe(true);
    const p = await call(url, 'write_stdin', { command_id: r.sc.command_id });
    expect(p.sc).toMatchObject({ status: 'timeout', signal: 'SIGTERM', exit_code: null });
    expect(p.text).toMatch(/Timed out/);
  });

  t('kill_command on a TERM-trapping process escalates and says so (decision 18)', async () => {
    const r = await call(url, 'exec_command', {
      cmd: 'trap "echo got-term" TERM; echo ready; while :; do sleep 0.05; done',
      yield_time_ms: 300,
    });
    expect(r.sc.stdout).toBe('ready\n');
    const k = await call(url, 'kill_command', { command_id: r.sc.command_id, wait_ms: 400 });
    expect(k.sc).toMatchObject({
      status: 'killed',
      signal_sent: 'SIGTERM',
      signal: 'SIGKILL',
      exit_code: null,
    });
    expect(k.text).toMatch(/SIGKILL/);
    const out = await call(url, 'read_output', { output_ref: `command:${r.sc.command_id}:stdout` });
    expect(out.sc.content).toContain('got-term');
    expect(out.sc.eof).toBe(true);
    const again = await call(url, 'kill_command', { command_id: r.sc.command_id });
    expect(again.sc).toMatchObject({ status: 'killed', signal_sent: null });
  });

  t(
    'kill_command on a command that exits when signalled reports "exited"; on a finished one sends nothing',
    async () => {
      const r = await call(url, 'exec_command', {
        cmd: 'trap "exit 0" TERM; while :; do sleep 0.05; done',
        yield_time_ms: 200,
      });
      const k = await call(url, 'kill_command', { command_id: r.sc.command_id });
      expect(k.sc).toMatchObject({ status: 'exited', signal_sent: 'SIGTERM', exit_code: 0, signal: null });
      const done = await call(url, 'exec_command', { cmd: 'true' });
      const k2 = await call(url, 'kill_command', { command_id: done.sc.command_id });
      expect(k2.sc).toMatchObject({ status: 'exited', signal_sent: null, exit_code: 0 });
      expect(k2.text).toMatch(/already finished/);
    },
  );

  t(
    'a grandchild (`sh -c "sleep & wait"`) is gone after kill_command (process counted in /proc)',
    async () => {
      const before = processesWith('43.29').length;
      expect(before).toBe(0);
      const r = await call(url, 'exec_command', { cmd: "sh -c 'sleep 43.29 & wait'", yield_time_ms: 300 });
      expect(r.sc.status).toBe('running');
      expect(processesWith('43.29').length).toBe(1);
      const k = await call(url, 'kill_command', { command_id: r.sc.command_id });
      expect(['terminated', 'killed']).toContain(k.sc.status);
      expect(await waitFor(() => processesWith('43.29').length === 0, 3000)).toBe(true);
    },
  );

  t('1000 children all die with kill_command and the server keeps answering (decision 33)', async () => {
    const r = await call(url, 'exec_command', {
      cmd: 'for i in $(seq 1000); do sleep 56.71 & done; echo spawned; wait',
      yield_time_ms: 0,
    });
    expect(await waitFor(() => processesWith('56.71').length === 1000, 15_000, 100)).toBe(true);
    const info = await call(url, 'server_info');
    expect(info.isError).toBe(false);
    const k = await call(url, 'kill_command', { command_id: r.sc.command_id });
    expect(['terminated', 'killed']).toContain(k.sc.status);
    expect(await waitFor(() => processesWith('56.71').length === 0, 10_000, 100)).toBe(true);
    const after = await call(url, 'exec_command', { cmd: 'echo alive' });
    expect(after.sc.stdout).toBe('alive\n');
  });

  t('background jobs end with their command (no orphans)', async () => {
    const r = await call(url, 'exec_command', { cmd: 'sleep 44.37 & echo spawned' });
    expect(r.sc).toMatchObject({ status: 'exited', exit_code: 0, stdout: 'spawned\n' });
    expect(await waitFor(() => processesWith('44.37').length === 0, 3000)).toBe(true);
  });

  t(
    'a PTY REPL driven across calls, ^C interrupts only the job (tool-contract "Commands": tty)',
    async () => {
      const r = await call(url, 'exec_command', {
        cmd: 'bash --norc --noprofile -i',
        tty: true,
        yield_time_ms: 500,
        env: { PS1: 'wb$ ' },
      });
      expect(r.sc.status).toBe('running');
      const id = r.sc.command_id;
      const send = (chars: string, yield_time_ms = 5000) =>
        call(url, 'write_stdin', { command_id: id, chars, yield_time_ms });
      let out = '';
      for (let i = 0; i < 20 && !/42/.test(out); i++)
        out += (await send(i === 0 ? 'echo $((6*7))\n' : '', 2000)).sc.stdout;
      expect(out).toMatch(/42/);
      await send('sleep 45.41\n', 300);
      expect(await waitFor(() => processesWith('45.41').length === 1, 3000)).toBe(true);
      await send('\u0003', 1000);
      expect(await waitFor(() => processesWith('45.41').length === 0, 3000)).toBe(true);
      let after = '';
      for (let i = 0; i < 20 && !/still-here/.test(after); i++)
        after += (await send(i === 0 ? 'echo still-here\n' : '', 2000)).sc.stdout;
      expect(after).toMatch(/still-here/);
      let fin = await send('exit 7\n');
      for (let i = 0; i < 20 && fin.sc.status === 'running'; i++) fin = await send('', 2000);
      expect(fin.sc).toMatchObject({ status: 'exited', exit_code: 7 });
      const closed = await call(url, 'write_stdin', { command_id: id, chars: 'x' });
      expect(closed.sc.error).toMatchObject({ code: 'COMMAND_CLOSED', retryable: false });
    },
  );

  t(
    'isatty is true under tty and false without; TERM/NO_COLOR follow (tool-contract "Commands")',
    async () => {
      const probe =
        'test -t 0 && echo in-tty || echo in-pipe; test -t 1 && echo out-tty || echo out-pipe; echo "TERM=$TERM NO_COLOR=${NO_COLOR:-unset}"';
      const tty = await call(url, 'exec_command', { cmd: probe, tty: true });
      expect(tty.sc.status).toBe('exited');
      expect(tty.sc.stdout).toMatch(/in-tty\nout-tty\nTERM=\S+ NO_COLOR=unset/);
      expect(tty.sc.stdout).not.toMatch(/TERM=dumb/);
      const pipe = await call(url, 'exec_command', { cmd: probe });
      expect(pipe.sc.stdout).toBe('in-pipe\nout-pipe\nTERM=dumb NO_COLOR=1\n');
      const py = await call(url, 'exec_command', {
        cmd: 'command -v python3 >/dev/null && python3 -c "import sys;print(sys.stdout.isatty())" || echo True',
        tty: true,
      });
      expect(py.sc.stdout.trim()).toBe('True');
    },
  );

  t('pipes: stdin is written then closed; write_stdin to such a command is COMMAND_CLOSED', async () => {
    const r = await call(url, 'exec_command', { cmd: 'cat; echo EOF-seen', stdin: 'line one\n' });
    expect(r.sc).toMatchObject({ status: 'exited', stdout: 'line one\nEOF-seen\n' });
    const running = await call(url, 'exec_command', { cmd: 'sleep 46.53', yield_time_ms: 0 });
    const w = await call(url, 'write_stdin', { command_id: running.sc.command_id, chars: 'hello\n' });
    expect(w.sc.error.code).toBe('COMMAND_CLOSED');
    expect(w.text).toMatch(/tty/);
    await call(url, 'kill_command', { command_id: running.sc.command_id, signal: 'KILL' });
  });

  t('ANSI escapes are stripped from model-facing text, raw bytes stay in the buffer', async () => {
    const r = await call(url, 'exec_command', { cmd: "printf '\\033[31mred\\033[0m plain\\n'" });
    expect(r.sc.stdout).toBe('red plain\n');
    expect(srv.runtime.commands.get(r.sc.command_id).streams.stdout.total).toBe(
      Buffer.byteLength('\x1b[31mred\x1b[0m plain\n'),
    );
  });
});

describe('commands: output, limits, clients (SERVICE_SANDBOX=off)', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  let url: string;

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'alpha\n' });
    srv = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'off', SERVICE_EXEC_MAX_ACTIVE: '2' },
    });
    url = srv.url;
  });
  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('`seq 1 1000000`: head and tail in the text, read_output pages across the dropped middle (tool-contract "Commands")', async () => {
    const expected = Array.from({ length: 1_000_000 }, (_, i) => `${i + 1}\n`).join('');
    const total = Buffer.byteLength(expected);
    const r = await call(url, 'exec_command', { cmd: 'seq 1 1000000', yield_time_ms: 20_000 });
    expect(r.sc).toMatchObject({
      status: 'exited',
      exit_code: 0,
      stdout_truncated: true,
      stdout_omitted_bytes: total - 65_536,
    });
    expect(r.sc.stdout.startsWith(expected.slice(0, 32_768))).toBe(true);
    expect(r.sc.stdout.endsWith(expected.slice(-32_768))).toBe(true);
    const ref = `command:${r.sc.command_id}:stdout`;
    expect(r.sc.stdout).toContain(`read_output {"output_ref":"${ref}","offset":32768,"limit":65536}`);
    expect(r.sc.next_action).toEqual({
      tool: 'read_output',
      arguments: { output_ref: ref, offset: 32_768, limit: 65_536 },
    });

    // Page from the suggested offset to the end: the head, then a skip to the kept tail.
    let args = r.sc.next_action.arguments;
    let collected = '';
    let skipped = 0;
    let last;
    for (let i = 0; i < 20; i++) {
      last = await call(url, 'read_output', args);
      expect(last.isError).toBe(false);
      skipped += last.sc.skipped_bytes;
      if (last.sc.skipped_bytes) {
        expect(collected).toBe(expected.slice(32_768, 65_536));
        collected = '';
      }
      collected += last.sc.content;
      expect(last.sc.total_bytes).toBe(total);
      if (last.sc.eof) break;
      args = last.sc.next_action.arguments;
    }
    expect(last?.sc.eof).toBe(true);
    expect(last?.sc.next_offset).toBeNull();
    const tailKept = 524_288 - 65_536;
    expect(skipped).toBe(total - 65_536 - tailKept);
    expect(collected).toBe(expected.slice(-tailKept));
    // An offset inside the dropped middle moves to the tail and says how far it jumped.
    const mid = await call(url, 'read_output', { output_ref: ref, offset: 1_000_000, limit: 10 });
    expect(mid.sc).toMatchObject({
      offset: total - tailKept,
      skipped_bytes: total - tailKept - 1_000_000,
      next_offset: total - tailKept + 10,
    });
  });

  it('the running-count limit: COMMAND_LIMIT_REACHED is retryable and names the running commands (spec §8)', async () => {
    const a = await call(url, 'exec_command', { cmd: 'sleep 47.61', yield_time_ms: 0 });
    const b = await call(url, 'exec_command', { cmd: 'sleep 47.62', yield_time_ms: 0 });
    const c = await call(url, 'exec_command', { cmd: 'true' });
    expect(c.isError).toBe(true);
    expect(c.sc.error).toMatchObject({ code: 'COMMAND_LIMIT_REACHED', retryable: true, category: 'runtime' });
    expect(c.sc.error.details.running.map((x: { command_id: string }) => x.command_id).sort()).toEqual(
      [a.sc.command_id, b.sc.command_id].sort(),
    );
    expect(c.text).toMatch(/Retryable: yes/);
    await call(url, 'kill_command', { command_id: a.sc.command_id, signal: 'KILL' });
    const d = await call(url, 'exec_command', { cmd: 'true' });
    expect(d.sc.status).toBe('exited');
    await call(url, 'kill_command', { command_id: b.sc.command_id, signal: 'KILL' });
  });

  it('started on one connection, polled and killed on others; a dropped connection stops nothing (decision 35)', async () => {
    const agentA = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const agentB = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const agentC = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r = await callOn(agentA, url, 'exec_command', {
        cmd: 'for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.1; done; sleep 48.71',
        yield_time_ms: 150,
      });
      expect(r.sc.status).toBe('running');
      agentA.destroy(); // the starting client goes away
      await sleep(300);
      let seenB = '';
      for (let i = 0; i < 40 && !seenB.includes('tick 10'); i++) {
        const p = await callOn(agentB, url, 'write_stdin', {
          command_id: r.sc.command_id,
          chars: '',
          yield_time_ms: 1000,
        });
        expect(p.sc.status).toBe('running');
        seenB += p.sc.stdout;
      }
      expect(r.sc.stdout + seenB).toBe(
        'tick 1\ntick 2\ntick 3\ntick 4\ntick 5\ntick 6\ntick 7\ntick 8\ntick 9\ntick 10\n',
      );
      const k = await callOn(agentC, url, 'kill_command', { command_id: r.sc.command_id });
      expect(k.sc).toMatchObject({ status: 'terminated', signal_sent: 'SIGTERM' });
      const seen = await callOn(agentB, url, 'read_output', { output_ref: r.sc.output_refs.stdout });
      expect(seen.sc.content).toContain('tick 10');
    } finally {
      agentA.destroy();
      agentB.destroy();
      agentC.destroy();
    }
  });

  it('notifications/cancelled for the starting request leaves the command running (spec §3, §6)', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const pending = callOn(
        agent,
        url,
        'exec_command',
        { cmd: 'sleep 0.5; echo finished-anyway', yield_time_ms: 5000 },
        4242,
      );
      await sleep(100);
      const c = await cancel(url, 4242);
      expect(c.status).toBe(202);
      const r = await pending;
      expect(r.sc).toMatchObject({ status: 'exited', exit_code: 0, stdout: 'finished-anyway\n' });
      const bg = await call(url, 'exec_command', { cmd: 'sleep 49.83', yield_time_ms: 0 });
      await cancel(url, 1);
      await sleep(200);
      const still = await call(url, 'write_stdin', { command_id: bg.sc.command_id, yield_time_ms: 0 });
      expect(still.sc.status).toBe('running');
      await call(url, 'kill_command', { command_id: bg.sc.command_id, signal: 'KILL' });
    } finally {
      agent.destroy();
    }
  });

  it('unknown ids: COMMAND_NOT_FOUND explains retention and says to run exec_command again', async () => {
    const r = await call(url, 'write_stdin', { command_id: 'no-such-command' });
    expect(r.sc.error).toMatchObject({ code: 'COMMAND_NOT_FOUND', retryable: false, category: 'not_found' });
    expect(r.sc.error.message).toMatch(/900 s/);
    expect(r.text).toMatch(/exec_command/);
    const o = await call(url, 'read_output', { output_ref: 'command:no-such-command:stdout' });
    expect(o.sc.error.code).toBe('COMMAND_NOT_FOUND');
    const bad = await call(url, 'read_output', { output_ref: 'stdout' });
    expect(bad.sc.error.code).toBe('INVALID_ARGUMENT');
    const k = await call(url, 'kill_command', { command_id: 'no-such-command' });
    expect(k.sc.error.code).toBe('COMMAND_NOT_FOUND');
  });

  it('invalid arguments are INVALID_ARGUMENT tool errors (yield cap, unknown signal)', async () => {
    const y = await call(url, 'exec_command', { cmd: 'true', yield_time_ms: 30_001 });
    expect(y.sc.error.code).toBe('INVALID_ARGUMENT');
    const s = await call(url, 'kill_command', { command_id: 'x', signal: 'HUP' });
    expect(s.sc.error.code).toBe('INVALID_ARGUMENT');
    const e = await call(url, 'exec_command', { cmd: 'true', env: { 'BAD-NAME': '1' } });
    expect(e.sc.error.code).toBe('INVALID_ARGUMENT');
  });
});
