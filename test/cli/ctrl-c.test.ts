// A normal Ctrl-C stops the server quietly. A terminal sends SIGINT to the whole foreground process group — the
// server, its spawner helper and the proxy's relay (native/wb-netrelay.c) alike — so the helpers must leave the
// shutdown to the server instead of dying first (which the server would report as a helper that ended); the
// server then says in one line that it stopped.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { parseReadyLine } from '../../src/core/ready-line.js';
import { BIN, TEST_TOKEN } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { call } from '../exec/exec-support.js';

let ws: TempWorkspace | undefined;
afterEach(() => ws?.cleanup());

describe('Ctrl-C (SIGINT to the process group, as a terminal sends it)', () => {
  it('exits 0 with no warning about its helpers, and one line saying it stopped', async () => {
    ws = makeWorkspace({ 'README.md': '# ctrl-c\n' });
    // Its own process group, as a shell gives a foreground job.
    const proc = spawn(process.execPath, [BIN, '--workspace', ws.dir, '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', SERVICE_AUTH_TOKEN: TEST_TOKEN },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      proc.stderr?.on('data', (c: Buffer) => {
        err += c.toString();
        const ready = parseReadyLine(err);
        if (ready) resolve(ready.url);
      });
      proc.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    // A pipe command makes sure the spawner helper runs and is in the group.
    // The start banner names what is served and how to publish it, as a command that runs here (README "Going
    // remote"; test/cli/first-hour.test.ts runs it).
    expect(err).toContain(`workbench-mcp: serving ${ws.dir} (permission mode safe)`);
    expect(err).toMatch(/^ +(node \S+|workbench-mcp) tunnel cloudflared --port 0 --workspace /m);
    const r = await call(url, 'exec_command', { cmd: 'echo hi' });
    expect(r.sc.stdout).toBe('hi\n');
    // 'close': stderr is read to its end.
    const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    const before = err.length;
    process.kill(-(proc.pid as number), 'SIGINT');
    expect(await exited).toBe(0);
    // Helpers (the spawner helper, the proxy's relay) ending at shutdown is expected: no warning, only the
    // one line that says the server stopped. The warm-up's last line (src/cli/warm-up.ts) may come at any time
    // before it, and is no shutdown warning.
    const after = err.slice(before).replace(/^workbench-mcp info: warm-up done \{.*\}\n/m, '');
    expect(after).toBe('workbench-mcp: stopped (SIGINT)\n');
  });
});
