// Commands as workspace resources (docs/design-notes.md#one-workspace-one-runtime; docs/tools.md#commands;
// docs/design-notes.md#command-status, docs/design-notes.md#command-results,
// docs/design-notes.md#bash-and-retention), with real processes and real PTYs over the real HTTP stack, once
// without a sandbox and once inside bubblewrap (skipped with the reason when bwrap is absent; a failure under
// CI=true). Output paging, limits and clients on several connections are in exec-clients.test.ts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { call, HUNG_MS, needBwrap, pollUntil, processesWith, uniqueMarker, waitFor } from './exec-support.js';

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

  t('server_info and check_exec_environment report the same sandbox (docs/tools.md#commands)', async () => {
    const info = await call(url, 'server_info');
    const env = await call(url, 'check_exec_environment');
    expect(env.isError).toBe(false);
    expect(info.sc.sandbox.in_use).toBe(sandbox === 'bwrap' ? 'bwrap' : undefined);
    expect(env.sc.sandbox.in_use).toBe(info.sc.sandbox.in_use);
    expect(env.sc.limits).toMatchObject({
      max_running: 16,
      max_finished_kept: 32,
      retention_s: 900,
      total_buffer_bytes: 16_777_216,
    });
    expect(info.sc.limits.exec_max_active).toBe(16);
  });

  t('exit codes: `exit 3` and `false` are results, not tool errors', async () => {
    const a = await call(url, 'exec_command', { cmd: 'echo out; echo err >&2; exit 3' });
    expect(a.isError).toBe(false);
    expect(a.sc).toMatchObject({
      status: 'exited',
      exit_code: 3,
      stdout: 'out\n',
      stderr: 'err\n',
    });
    // Nothing was left out, so there is nothing to page: no output_refs (docs/design-notes.md#lean-results).
    expect(a.sc.output_refs).toBeUndefined();
    expect(a.sc.next_action).toBeUndefined();
    const f = await call(url, 'exec_command', { cmd: 'false' });
    expect(f.isError).toBe(false);
    expect(f.sc).toMatchObject({ status: 'exited', exit_code: 1 });
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

  t('a signal from outside ends a command as "terminated" with the signal name', async () => {
    const r = await call(url, 'exec_command', { cmd: `sleep ${uniqueMarker()}`, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    const k = await call(url, 'kill_command', {
      command_id: r.sc.command_id,
      signal: 'INT',
      wait_ms: 30_000,
      kill_wait_ms: 10_000,
    });
    expect(k.sc).toMatchObject({
      status: 'terminated',
      signal_sent: 'SIGINT',
      signal: 'SIGINT',
    });
  });

  t('yield → running with next_action → write_stdin poll → exited (docs/tools.md#commands)', async () => {
    // The command waits for a file the test creates: it is running when the first result comes, however slow.
    const gate = `gate-${uniqueMarker()}`;
    const r = await call(url, 'exec_command', {
      cmd: `echo start; while [ ! -e ${gate} ]; do sleep 0.05; done; echo end`,
      yield_time_ms: 100,
    });
    expect(r.sc.status).toBe('running');
    expect(r.sc.next_action).toEqual({
      tool: 'write_stdin',
      arguments: { command_id: r.sc.command_id, chars: '' },
    });
    expect(r.text).toContain('write_stdin {"command_id"');
    writeFileSync(path.join(ws.dir, gate), '');
    let last = r;
    const seen = [r.sc.stdout];
    for (const end = Date.now() + HUNG_MS; last.sc.status === 'running' && Date.now() < end;) {
      last = await call(url, last.sc.next_action.tool, last.sc.next_action.arguments);
      seen.push(last.sc.stdout);
    }
    expect(last.sc).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(seen.join('')).toBe('start\nend\n'); // each result shows only what is new
    const again = await call(url, 'write_stdin', { command_id: r.sc.command_id });
    expect(again.sc).toMatchObject({ status: 'exited', exit_code: 0 });
  });

  t('timeout fires while nobody polls; the process is gone before anyone asks', async () => {
    const m = uniqueMarker();
    const r = await call(url, 'exec_command', { cmd: `sleep ${m}`, timeout_ms: 500, yield_time_ms: 0 });
    expect(r.sc.status).toBe('running');
    // Nobody polls: the server's own record of the command ends, and its process is gone.
    const c = srv.runtime.commands.get(r.sc.command_id);
    expect(await waitFor(() => !c.running)).toBe(true);
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
    const p = await call(url, 'write_stdin', { command_id: r.sc.command_id });
    expect(p.sc).toMatchObject({ status: 'timeout', signal: 'SIGTERM' });
    expect(p.text).toMatch(/Timed out/);
  });

  t('kill_command on a TERM-trapping process escalates and says so', async () => {
    const r = await call(url, 'exec_command', {
      cmd: 'trap "echo got-term" TERM; echo ready; while :; do sleep 0.05; done',
      yield_time_ms: 0,
    });
    // The trap is set once "ready" is printed; SIGTERM before that would end the shell instead.
    expect((await pollUntil(url, r.sc.command_id, /ready\n/, '', r.sc.stdout)).stdout).toContain('ready\n');
    const k = await call(url, 'kill_command', {
      command_id: r.sc.command_id,
      wait_ms: 400,
      kill_wait_ms: 10_000,
    });
    expect(k.sc).toMatchObject({
      status: 'killed',
      signal_sent: 'SIGTERM',
      signal: 'SIGKILL',
    });
    expect(k.text).toMatch(/SIGKILL/);
    // Whether the trap printed "got-term" before SIGKILL depends on scheduling, so it is not asserted here:
    // SIGTERM was sent first (signal_sent) and did not end the process (it was SIGKILLed).
    const out = await call(url, 'read_output', { output_ref: `command:${r.sc.command_id}:stdout` });
    expect(out.sc.content).toMatch(/^ready\n/);
    expect(out.sc.eof).toBe(true);
    const again = await call(url, 'kill_command', { command_id: r.sc.command_id });
    expect(again.sc).toMatchObject({ status: 'killed' });
  });

  t(
    'kill_command on a command that exits when signalled reports "exited"; on a finished one sends nothing',
    async () => {
      const r = await call(url, 'exec_command', {
        cmd: 'trap "exit 0" TERM; echo ready; while :; do sleep 0.05; done',
        yield_time_ms: 0,
      });
      expect((await pollUntil(url, r.sc.command_id, /ready\n/, '', r.sc.stdout)).stdout).toContain('ready\n');
      const k = await call(url, 'kill_command', {
        command_id: r.sc.command_id,
        wait_ms: 30_000,
        kill_wait_ms: 10_000,
      });
      expect(k.sc).toMatchObject({ status: 'exited', signal_sent: 'SIGTERM', exit_code: 0 });
      const done = await call(url, 'exec_command', { cmd: 'true' });
      const k2 = await call(url, 'kill_command', { command_id: done.sc.command_id });
      expect(k2.sc).toMatchObject({ status: 'exited', exit_code: 0 });
      expect(k2.text).toMatch(/already finished/);
    },
  );

  t(
    'a grandchild (`sh -c "sleep & wait"`) is gone after kill_command (process counted in /proc)',
    async () => {
      const m = uniqueMarker();
      const r = await call(url, 'exec_command', { cmd: `sh -c 'sleep ${m} & wait'`, yield_time_ms: 0 });
      expect(r.sc.status).toBe('running');
      expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
      const k = await call(url, 'kill_command', { command_id: r.sc.command_id, kill_wait_ms: 10_000 });
      expect(['terminated', 'killed']).toContain(k.sc.status);
      expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
    },
  );

  t(
    '1000 children all die with kill_command and the server keeps answering (docs/design-notes.md#tests)',
    async () => {
      // A marker of this run only: the count is of this test's processes, whatever else the machine runs.
      const m = uniqueMarker();
      const r = await call(url, 'exec_command', {
        cmd: `for i in $(seq 1000); do sleep ${m} & done; echo spawned; wait`,
        yield_time_ms: 0,
      });
      expect(await waitFor(() => processesWith(m).length === 1000, HUNG_MS, 250)).toBe(true);
      const info = await call(url, 'server_info');
      expect(info.isError).toBe(false);
      const k = await call(url, 'kill_command', { command_id: r.sc.command_id, kill_wait_ms: 10_000 });
      expect(['terminated', 'killed']).toContain(k.sc.status);
      expect(await waitFor(() => processesWith(m).length === 0, HUNG_MS, 250)).toBe(true);
      const after = await call(url, 'exec_command', { cmd: 'echo alive' });
      expect(after.sc.stdout).toBe('alive\n');
    },
    4 * HUNG_MS,
  );

  t('background jobs end with their command (no orphans)', async () => {
    // uniqueMarker: an orphan handed to init still carries it and would be counted.
    const m = uniqueMarker();
    const r = await call(url, 'exec_command', { cmd: `sleep ${m} & echo spawned`, yield_time_ms: 30_000 });
    expect(r.sc).toMatchObject({ status: 'exited', exit_code: 0, stdout: 'spawned\n' });
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
  });

  t('a PTY REPL driven across calls, ^C interrupts only the job (docs/tools.md#commands: tty)', async () => {
    const r = await call(url, 'exec_command', {
      cmd: 'bash --norc --noprofile -i',
      tty: true,
      yield_time_ms: 500,
      env: { PS1: 'wb$ ' },
    });
    expect(r.sc.status).toBe('running');
    const id = r.sc.command_id;
    const m = uniqueMarker();
    expect((await pollUntil(url, id, /42/, 'echo $((6*7))\n')).stdout).toMatch(/42/);
    await call(url, 'write_stdin', { command_id: id, chars: `sleep ${m}\n`, yield_time_ms: 0 });
    expect(await waitFor(() => processesWith(m).length === 1)).toBe(true);
    await call(url, 'write_stdin', { command_id: id, chars: '\u0003', yield_time_ms: 0 });
    expect(await waitFor(() => processesWith(m).length === 0)).toBe(true);
    // $((…)) makes the answer differ from the echo of what was typed.
    expect((await pollUntil(url, id, /still-42/, 'echo still-$((6*7))\n')).stdout).toMatch(/still-42/);
    const fin = (await pollUntil(url, id, null, 'exit 7\n')).last;
    expect(fin.sc).toMatchObject({ status: 'exited', exit_code: 7 });
    const closed = await call(url, 'write_stdin', { command_id: id, chars: 'x' });
    expect(closed.sc.error).toMatchObject({ code: 'COMMAND_CLOSED', retryable: false });
  });

  t('isatty is true under tty and false without; TERM/NO_COLOR follow (docs/tools.md#commands)', async () => {
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
  });

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

  t(
    'a failing Node assertion keeps its message and the program frame; Node-internal frames are one line',
    async () => {
      writeFileSync(path.join(ws.dir, 'fails.js'), "require('node:assert').strictEqual(1 + 1, 3);\n");
      const r = await call(url, 'exec_command', { cmd: `${JSON.stringify(process.execPath)} fails.js` });
      expect(r.sc.exit_code).toBe(1);
      expect(r.sc.stderr).toContain('2 !== 3');
      expect(r.sc.stderr).toMatch(
        /at Object\.<anonymous> \(.*fails\.js:1:\d+\)\n {4}at … \d+ frames in node:internal \{\n/,
      );
      expect(r.sc.stderr).not.toMatch(/\(node:internal\//);
      expect(r.text).toContain('frames in node:internal');
      const page = await call(url, 'read_output', { output_ref: `command:${r.sc.command_id}:stderr` });
      expect(page.sc.content).toBe(r.sc.stderr);
    },
  );
});
