// docs/tools.md#commands: the first exec_command of a freshly started server answers
// `running` only once its process exists — what a command needs (sandbox probe, spawner helper) is started after
// the ready line, and a `running` answer waits for the spawn itself; and a tty command returns as soon as its
// first output has paused, so a REPL answers its prompt in its first call instead of waiting out yield_time_ms.
import { afterEach, describe, expect, it } from 'vitest';
import { call, uniqueMarker, waitFor } from './exec-support.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { procTable, type Proc } from '../helpers/hostile-bin.js';

/** Processes whose command line carries `marker` (the shell, bwrap or sleep of the command), from /proc. */
function carrying(marker: string): number[] {
  return [...procTable().values()]
    .filter((p) => p.pid !== process.pid && p.cmdline.includes(marker))
    .map((p) => p.pid);
}

/**
 * The processes that may become a command once it is handed over: a prepared sandbox's bwrap (its argv ends in
 * wb-exec) or wb-exec itself, waiting for its request, and any process that already carries the marker.
 */
function mayBecome(table: Map<number, Proc>, marker: string): Set<number> {
  const out = new Set<number>();
  for (const p of table.values()) {
    const first = p.cmdline.split(' ')[0] ?? '';
    if (
      p.cmdline.includes(marker) ||
      first.endsWith('/wb-exec') ||
      (first.endsWith('bwrap') && p.cmdline.includes('wb-exec'))
    )
      out.add(p.pid);
  }
  return out;
}

let ws: TempWorkspace | undefined;
let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  ws?.cleanup();
  server = undefined;
  ws = undefined;
});

describe('the first command of a fresh server', () => {
  it.each(['off', 'auto'])(
    'SERVICE_SANDBOX=%s: `running` is answered only when the process exists (yield_time_ms 0)',
    async (sandbox) => {
      ws = makeWorkspace({ 'README.md': '# first\n' });
      server = await startServer({ workspace: ws.dir, env: { SERVICE_SANDBOX: sandbox } });
      const marker = uniqueMarker();
      const r = await call(server.url, 'exec_command', { cmd: `sleep ${marker}`, yield_time_ms: 0 });
      expect(r.sc.status).toBe('running');
      // Taken right after the answer, with no wait: the process must already be there — started the usual way
      // (bwrap or the shell carries the marker), or a sandbox prepared ahead (bwrap and wb-exec waiting at its
      // end) that was handed the command and execs it once wb-exec has read it. Which one it was shows once the
      // command runs: the process carrying the marker is one of these or below one of them.
      const atAnswer = procTable();
      const candidates = mayBecome(atAnswer, marker);
      expect(await waitFor(() => carrying(marker).length > 0)).toBe(true);
      const later = procTable();
      const lineage = (pid: number): number[] => {
        const chain: number[] = [];
        for (let p = later.get(pid); p && chain.length < 64; p = later.get(p.ppid)) chain.push(p.pid);
        return chain;
      };
      const fromAnswer = carrying(marker).some((pid) => lineage(pid).some((a) => candidates.has(a)));
      expect(fromAnswer, JSON.stringify([...atAnswer.values()].filter((p) => candidates.has(p.pid)))).toBe(
        true,
      );
      const k = await call(server.url, 'kill_command', { command_id: r.sc.command_id, signal: 'KILL' });
      expect(['killed', 'terminated']).toContain(k.sc.status);
    },
  );
});

describe('a tty command returns once its first output settles', () => {
  it('a REPL started with tty: true answers its prompt within its first call, long before yield_time_ms', async () => {
    ws = makeWorkspace({ 'README.md': '# repl\n' });
    server = await startServer({ workspace: ws.dir, env: { SERVICE_SANDBOX: 'off' } });
    const r = await call(server.url, 'exec_command', {
      cmd: 'bash --norc --noprofile -i',
      tty: true,
      yield_time_ms: 30_000,
    });
    expect(r.sc.status).toBe('running');
    expect(r.sc.stdout).toMatch(/[#$] $/); // bash's prompt, e.g. `bash-5.2# `
    // It returned because the prompt settled, not because the 30 s yield ran out.
    expect(r.sc.elapsed_ms).toBeLessThan(30_000);
    await call(server.url, 'kill_command', { command_id: r.sc.command_id, signal: 'KILL' });
  });
});

describe('the first-command rehearsal leaves nothing behind (src/cli/warm-up.ts rehearse)', () => {
  it('after its three runs, check_exec_environment counts no running and no finished command', async () => {
    ws = makeWorkspace({});
    server = await startServer({ workspace: ws.dir, env: { SERVICE_LOG_LEVEL: 'debug' } });
    const done = await waitFor(() => /first-command rehearsal done/.test(server?.stderr() ?? ''));
    expect(done, server.stderr()).toBe(true);
    expect(server.stderr()).toMatch(/first-command rehearsal done \{"runs":3,"forgotten":true\}/);
    const env = await call(server.url, 'check_exec_environment');
    expect(env.sc.usage).toMatchObject({ running: 0, finished_kept: 0 });
  });
});

describe('the warm-up request to its own endpoint (src/cli/warm-http.ts)', () => {
  for (const [mode, env] of [
    ['bearer', {}],
    ['noauth', { SERVICE_AUTH_MODE: 'noauth' }],
  ] as const) {
    it(`is answered 200 in ${mode} mode, with the server's own credential where it has one`, async () => {
      ws = makeWorkspace({});
      server = await startServer({ workspace: ws.dir, env: { SERVICE_LOG_LEVEL: 'debug', ...env } });
      const line = /warm-up request to its own endpoint (\{.*\})/;
      const seen = await waitFor(() => line.test(server?.stderr() ?? ''));
      expect(seen, server.stderr()).toBe(true);
      expect(JSON.parse(line.exec(server.stderr())?.[1] ?? '{}')).toEqual({ answer: 200 });
      const traced =
        server.stderr().match(/request \{"http":"POST \/mcp","method":"tools\/list".*\}/)?.[0] ?? '';
      expect(traced).toContain('"status":200');
      expect(traced).toContain(mode === 'bearer' ? '"client":"token#1"' : '"client":"local"');
    });
  }
});

describe('the rehearsal after a client called first (src/cli/warm-up.ts rehearse)', () => {
  /** An in-process server whose log lines are kept, a client call made, then the warm-up run. */
  async function warmUpAfter(tool: string, args: Record<string, unknown>): Promise<string[]> {
    const [{ startInProcess }, { callTool }, { afterReady }] = await Promise.all([
      import('../helpers/server.js'),
      import('../helpers/rpc.js'),
      import('../../src/cli/warm-up.js'),
    ]);
    const lines: string[] = [];
    const keep = (msg: string) => void lines.push(msg);
    const log = { debug: keep, info: keep, warn: keep, error: keep };
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    const srv = await startInProcess({ workspace: ws.dir, log });
    try {
      const r = await callTool(srv.url, tool, args);
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      afterReady(srv.runtime, log);
      const over = await waitFor(() => lines.some((l) => /^first-command rehearsal (done|left out)/.test(l)));
      expect(over, lines.join('\n')).toBe(true);
      return lines;
    } finally {
      await srv.close();
    }
  }

  it('a client whose first call was not a command still finds the command path rehearsed', async () => {
    const lines = await warmUpAfter('read_file', { path: 'a.txt' });
    expect(lines).toContain('first-command rehearsal done');
  });

  it('after a client ran a command itself, the rehearsal is left out (that call warmed the path)', async () => {
    const lines = await warmUpAfter('exec_command', { cmd: 'true' });
    expect(lines).toContain('first-command rehearsal left out: a client ran a command first');
    expect(lines).not.toContain('first-command rehearsal done');
  });
});
