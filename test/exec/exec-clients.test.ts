// Commands seen by their clients (docs/tools.md#commands, docs/design-notes.md#notifications,
// docs/tools.md#limits), without a sandbox over the real HTTP stack: a million lines of output paged through
// read_output, the running-count limit, a command started on one connection and polled or killed on others,
// notifications/cancelled, unknown ids and invalid arguments.
import { existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { call, callOn, cancel, HUNG_MS, uniqueMarker, waitFor } from './exec-support.js';

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

  it('`seq 1 1000000`: head and tail in the text, read_output pages across the dropped middle (docs/tools.md#commands)', async () => {
    const expected = Array.from({ length: 1_000_000 }, (_, i) => `${i + 1}\n`).join('');
    const total = Buffer.byteLength(expected);
    const r = await call(url, 'exec_command', { cmd: 'seq 1 1000000', yield_time_ms: 30_000 });
    expect(r.sc).toMatchObject({
      status: 'exited',
      exit_code: 0,
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
      skipped += last.sc.skipped_bytes ?? 0;
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
    expect(last?.sc.next_action).toBeUndefined();
    const tailKept = 524_288 - 65_536;
    expect(skipped).toBe(total - 65_536 - tailKept);
    expect(collected).toBe(expected.slice(-tailKept));
    // An offset inside the dropped middle moves to the tail and says how far it jumped.
    const mid = await call(url, 'read_output', { output_ref: ref, offset: 1_000_000, limit: 10 });
    expect(mid.sc).toMatchObject({
      offset: total - tailKept,
      skipped_bytes: total - tailKept - 1_000_000,
    });
    expect(mid.sc.next_action.arguments.offset).toBe(total - tailKept + 10);
  });

  it('the running-count limit: COMMAND_LIMIT_REACHED is retryable and names the running commands (docs/tools.md#limits)', async () => {
    const a = await call(url, 'exec_command', { cmd: `sleep ${uniqueMarker()}`, yield_time_ms: 0 });
    const b = await call(url, 'exec_command', { cmd: `sleep ${uniqueMarker()}`, yield_time_ms: 0 });
    const c = await call(url, 'exec_command', { cmd: 'true' });
    expect(c.isError).toBe(true);
    expect(c.sc.error).toMatchObject({ code: 'COMMAND_LIMIT_REACHED', retryable: true, category: 'runtime' });
    expect(c.sc.error.details.running.map((x: { command_id: string }) => x.command_id).sort()).toEqual(
      [a.sc.command_id, b.sc.command_id].sort(),
    );
    expect(c.text).toMatch(/Retryable: yes/);
    await call(url, 'kill_command', { command_id: a.sc.command_id, signal: 'KILL', kill_wait_ms: 10_000 });
    const d = await call(url, 'exec_command', { cmd: 'true', yield_time_ms: 30_000 });
    expect(d.sc.status).toBe('exited');
    await call(url, 'kill_command', { command_id: b.sc.command_id, signal: 'KILL' });
  });

  it('started on one connection, polled and killed on others; a dropped connection stops nothing (docs/design-notes.md#one-workspace-one-runtime)', async () => {
    const agentA = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const agentB = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const agentC = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r = await callOn(agentA, url, 'exec_command', {
        cmd: `for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.1; done; sleep ${uniqueMarker()}`,
        yield_time_ms: 150,
      });
      expect(r.sc.status).toBe('running');
      agentA.destroy(); // the starting client goes away
      let seenB = '';
      for (const end = Date.now() + HUNG_MS; !seenB.includes('tick 10') && Date.now() < end;) {
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
      const k = await callOn(agentC, url, 'kill_command', {
        command_id: r.sc.command_id,
        wait_ms: 30_000,
        kill_wait_ms: 10_000,
      });
      expect(k.sc).toMatchObject({ status: 'terminated', signal_sent: 'SIGTERM' });
      const seen = await callOn(agentB, url, 'read_output', {
        output_ref: `command:${r.sc.command_id}:stdout`,
      });
      expect(seen.sc.content).toContain('tick 10');
    } finally {
      agentA.destroy();
      agentB.destroy();
      agentC.destroy();
    }
  });

  it('notifications/cancelled for the starting request leaves the command running (docs/design-notes.md#notifications)', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // The command says it started, then waits for a file: the cancel surely arrives while the call runs.
      const m = uniqueMarker();
      const pending = callOn(
        agent,
        url,
        'exec_command',
        {
          cmd: `touch started-${m}; while [ ! -e go-${m} ]; do sleep 0.05; done; echo finished-anyway`,
          yield_time_ms: 30_000,
        },
        4242,
      );
      expect(await waitFor(() => existsSync(path.join(ws.dir, `started-${m}`)))).toBe(true);
      const c = await cancel(url, 4242);
      expect(c.status).toBe(202);
      writeFileSync(path.join(ws.dir, `go-${m}`), '');
      const r = await pending;
      expect(r.sc).toMatchObject({ status: 'exited', exit_code: 0, stdout: 'finished-anyway\n' });
      const bg = await call(url, 'exec_command', { cmd: `sleep ${uniqueMarker()}`, yield_time_ms: 0 });
      expect((await cancel(url, 1)).status).toBe(202);
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
