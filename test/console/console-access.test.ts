// Who can reach the operator's console (docs/console.md#access), over raw HTTP: the one-time link (good, reused,
// forged), the session cookie's attributes, Host and Origin checks (DNS rebinding, cross-site requests), the
// CSRF token on every state change, the Content-Security-Policy, `workbench-mcp console` minting a fresh link
// from the state directory (still the first server's after a second one on the workspace stopped),
// SERVICE_CONSOLE=0, and the /mcp port answering 404 for every console path.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { consoleLink } from './support.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Raw HTTP, so Host and Origin are exactly what the test says (fetch would set them itself). */
function request(
  port: number,
  method: string,
  p: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      // A connection per request (agent: false): a kept-alive one the console closed (5 s) would be a reset.
      {
        agent: false,
        host: '127.0.0.1',
        port,
        method,
        path: p,
        headers: { host: `127.0.0.1:${port}`, ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('console access', () => {
  let ws: TempWorkspace;
  let state: string;
  let srv: SpawnedServer;
  let port: number;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    state = mkdtempSync(path.join(tmpdir(), 'wb-console-state-'));
    srv = await startServer({ workspace: ws.dir, env: { SERVICE_STATE_DIR: state } });
    const link = new URL(consoleLink(srv.stderr()));
    port = Number(link.port);
    const opened = await request(port, 'GET', `${link.pathname}${link.search}`);
    expect(opened.status).toBe(303);
    const set = String(opened.headers['set-cookie']);
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    cookie = set.split(';')[0] as string;
    const page = await request(port, 'GET', '/', { cookie });
    expect(page.status).toBe(200);
    csrf = /name="csrf" content="([^"]+)"/.exec(page.body)?.[1] as string;
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // The same link a second time, and a forged one.
    expect((await request(port, 'GET', `${link.pathname}${link.search}`)).status).toBe(403);
    expect((await request(port, 'GET', '/open?t=forged-token-forged-token')).status).toBe(403);
  }, 120_000);

  afterAll(async () => {
    await srv?.stop();
    ws?.cleanup();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it('without the session cookie: the page says how to get a link, the API answers 401', async () => {
    const page = await request(port, 'GET', '/');
    expect(page.status).toBe(401);
    expect(page.body).toContain('console');
    expect((await request(port, 'GET', '/api/state')).status).toBe(401);
    expect((await request(port, 'GET', '/api/state', { cookie: 'wb_console_1=x' })).status).toBe(401);
  });

  it('every answer carries a CSP that allows only its own origin', async () => {
    for (const p of ['/', '/app.js', '/style.css', '/api/state']) {
      const r = await request(port, 'GET', p, { cookie });
      expect(r.status, p).toBe(200);
      expect(r.headers['content-security-policy'], p).toMatch(/default-src 'none'; script-src 'self'/);
      expect(r.headers['x-frame-options'], p).toBe('DENY');
    }
  });

  it('a foreign Host (DNS rebinding) and a foreign Origin are refused, with the session cookie too', async () => {
    expect((await request(port, 'GET', '/api/state', { cookie, host: `evil.example:${port}` })).status).toBe(
      421,
    );
    expect((await request(port, 'GET', '/api/state', { cookie, host: 'localhost:1' })).status).toBe(421);
    const cross = await request(port, 'GET', '/api/state', { cookie, origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    const post = await request(port, 'POST', '/api/credential', {
      cookie,
      origin: `http://127.0.0.1:${port + 1}`,
      'x-csrf-token': csrf,
    });
    expect(post.status).toBe(403);
  });

  it('a state change needs the Origin and the CSRF token; with both it works', async () => {
    const origin = `http://127.0.0.1:${port}`;
    const none = await request(port, 'POST', '/api/credential', { cookie, origin });
    expect(none.status).toBe(403);
    expect(JSON.parse(none.body).error).toBe('csrf');
    const wrong = await request(port, 'POST', '/api/credential', {
      cookie,
      origin,
      'x-csrf-token': `${csrf}x`,
    });
    expect(wrong.status).toBe(403);
    const noOrigin = await request(port, 'POST', '/api/credential', { cookie, 'x-csrf-token': csrf });
    expect(noOrigin.status).toBe(403);
    const ok = await request(port, 'POST', '/api/credential', { cookie, origin, 'x-csrf-token': csrf });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).credential).toBe(TEST_TOKEN);
    const unknown = await request(
      port,
      'POST',
      '/api/approvals/Rnope/decide',
      { cookie, origin, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      '{"action":"approve"}',
    );
    expect(unknown.status).toBe(409);
  });

  it('workbench-mcp console prints a fresh link (once usable); a wrong link key is refused', async () => {
    const r = spawnSync(process.execPath, [BIN, 'console', '--workspace', ws.dir], {
      env: { PATH: process.env.PATH ?? '', HOME: state, SERVICE_STATE_DIR: state },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const link = new URL(r.stdout.trim());
    expect(link.port).toBe(String(port));
    expect((await request(port, 'GET', `${link.pathname}${link.search}`)).status).toBe(303);
    expect((await request(port, 'GET', `${link.pathname}${link.search}`)).status).toBe(403);
    const bad = await request(port, 'POST', '/api/link', { authorization: 'Bearer not-the-key' });
    expect(bad.status).toBe(401);
  });

  it('a second server on the same workspace, stopped, leaves `workbench-mcp console` finding the first', async () => {
    const second = await startServer({ workspace: ws.dir, env: { SERVICE_STATE_DIR: state } });
    const secondPort = Number(new URL(consoleLink(second.stderr())).port);
    expect(secondPort).not.toBe(port);
    expect(second.stderr()).toMatch(/another server \(pid \d+\) runs on this workspace/);
    await second.stop();
    const r = spawnSync(process.execPath, [BIN, 'console', '--workspace', ws.dir], {
      env: { PATH: process.env.PATH ?? '', HOME: state, SERVICE_STATE_DIR: state },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(new URL(r.stdout.trim()).port).toBe(String(port));
  });

  it("a start on the port this workspace's server listens on names that server, not another program", () => {
    const r = spawnSync(process.execPath, [BIN, '--workspace', ws.dir, '--port', String(srv.port)], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: state,
        SERVICE_STATE_DIR: state,
        SERVICE_AUTH_TOKEN: TEST_TOKEN,
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `this workspace's server already runs there (pid ${srv.proc.pid}, http://127.0.0.1:${srv.port}/mcp)`,
    );
    expect(r.stderr).toMatch(/get its console with \S+.* console --workspace /);
    expect(r.stderr).not.toContain('another program');
  });

  it('the /mcp port answers 404 for every console path', async () => {
    const paths: Array<[string, string]> = [
      ['GET', '/'],
      ['GET', '/open?t=x'],
      ['GET', '/app.js'],
      ['GET', '/style.css'],
      ['GET', '/api/state'],
      ['GET', '/api/events'],
      ['POST', '/api/link'],
      ['POST', '/api/credential'],
      ['POST', '/api/approvals/R1/decide'],
      ['POST', '/api/commands/x/kill'],
      ['POST', '/api/edits/E1/revert'],
    ];
    for (const [method, p] of paths) {
      const r = await request(srv.port, method, p, { authorization: `Bearer ${TEST_TOKEN}`, cookie });
      expect(r.status, `${method} ${p}`).toBe(404);
    }
  });
});

describe('SERVICE_CONSOLE=0', () => {
  it('prints no console link and opens no console listener; the console port may not be the /mcp port', async () => {
    const ws = makeWorkspace({ 'a.txt': 'a\n' });
    try {
      const state = mkdtempSync(path.join(tmpdir(), 'wb-console-off-'));
      const srv = await startServer({
        workspace: ws.dir,
        env: { SERVICE_CONSOLE: '0', SERVICE_STATE_DIR: state },
      });
      expect(srv.stderr()).not.toContain("operator's console");
      // No listener was started: it would have left its port and link key in the state directory.
      const kept = readdirSync(state, { recursive: true }).map(String);
      expect(kept.some((f) => f.endsWith('console.json'))).toBe(false);
      await srv.stop();
      rmSync(state, { recursive: true, force: true });
      const same = spawnSync(
        process.execPath,
        [BIN, '--workspace', ws.dir, '--port', '8799', '--console-port', '8799'],
        {
          env: {
            PATH: process.env.PATH ?? '',
            HOME: tmpdir(),
            SERVICE_AUTH_TOKEN: TEST_TOKEN,
            SERVICE_STATE_DIR: 'off',
          },
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(same.status).toBe(2);
      expect(same.stderr).toContain('--console-port 8799 is the /mcp port');
    } finally {
      ws.cleanup();
    }
  });
});
