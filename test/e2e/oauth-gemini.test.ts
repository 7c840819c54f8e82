// Gemini CLI (`@google/gemini-cli` 0.61, installed on demand into node_modules/.cache/gemini-cli by .ci/run)
// against the spawned bin in oauth mode (Gemini CLI's dynamic registration and full OAuth flow;
// docs/clients.md#the-clients-at-a-glance). Gemini registers with `"scope": ""` (refused before
// docs/design-notes.md#registration-leniency), asks for consent on stdin (answered "y"), opens the authorize
// URL with `xdg-open` — here a script on PATH that submits the password form and follows the 302 to Gemini's
// localhost callback — exchanges the code, lists our tools and sends them to the model: a local stand-in for
// the Gemini API (GOOGLE_GEMINI_BASE_URL) that answers every turn with text and records that the tool
// declarations arrived. `gemini mcp list` then reports the server connected with the stored token. Absent
// CLI: skipped with the reason; CI=true: a failure.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  BROWSER_SCRIPT,
  browserEnv,
  cached,
  CI,
  startRecordingProxy,
  type RecordingProxy,
  settledBrowserLog,
} from './oauth-cimd-helpers.js';
import { runToEnd, startOAuthBin } from './oauth-helpers.js';

const GEMINI = cached('gemini-cli', '@google/gemini-cli/bundle/gemini.js');
const reason = GEMINI
  ? undefined
  : '@google/gemini-cli is not installed (npm install --no-save --prefix node_modules/.cache/gemini-cli @google/gemini-cli@0.61.0, done by .ci/run)';
if (reason) console.warn(`[oauth-gemini] skipped: ${reason}`);

describe('Gemini CLI for the OAuth test', () => {
  it('is present (required under CI=true)', () => {
    if (reason && CI) expect.fail(`CI=true but ${reason}`);
  });
});

const run = (cmd: string, args: string[], o: { cwd: string; env: Record<string, string> }) =>
  runToEnd(cmd, args, o);

/** A stand-in for the Gemini API: JSON for the router's classifier, one SSE text chunk for a turn. */
function startModelStub(): Promise<{ server: http.Server; base: string; sawTools: () => boolean }> {
  let tools = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (body.includes('"read_file"')) tools = true;
      const stream = (req.url ?? '').includes('streamGenerateContent');
      const text = stream
        ? 'done'
        : JSON.stringify({
            complexity_reasoning: 'simple',
            complexity_score: 10,
            reasoning: 'simple',
            model_choice: 'flash',
          });
      const reply = {
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      };
      if (stream)
        res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(`data: ${JSON.stringify(reply)}\r\n\r\n`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        sawTools: () => tools,
      }),
    ),
  );
}

describe.skipIf(!GEMINI)('Gemini CLI: dynamic registration and the full OAuth flow', () => {
  let ws: TempWorkspace;
  let server: SpawnedServer;
  let proxy: RecordingProxy;
  let home: string;
  let model: Awaited<ReturnType<typeof startModelStub>>;
  let env: Record<string, string>;
  const settledLog = () => settledBrowserLog(home);

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# demo\n' });
    home = mkdtempSync(path.join(tmpdir(), 'wb-gemini-'));
    server = await startOAuthBin(ws.dir);
    proxy = await startRecordingProxy(server.port);
    model = await startModelStub();
    mkdirSync(path.join(home, '.gemini'));
    mkdirSync(path.join(home, 'bin'));
    writeFileSync(
      path.join(home, '.gemini/settings.json'),
      JSON.stringify({
        mcpServers: { wb: { httpUrl: `${proxy.base}/mcp`, oauth: { enabled: true } } },
        security: { folderTrust: { enabled: false }, auth: { selectedType: 'gemini-api-key' } },
      }),
    );
    writeFileSync(path.join(home, 'bin/xdg-open'), BROWSER_SCRIPT);
    chmodSync(path.join(home, 'bin/xdg-open'), 0o755);
    writeFileSync(path.join(home, 'browser.log'), '');
    env = {
      PATH: `${path.join(home, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: home,
      GEMINI_API_KEY: 'stand-in-key',
      GOOGLE_GEMINI_BASE_URL: model.base,
      NO_COLOR: '1',
      ...browserEnv(path.join(home, 'browser.log')),
    };
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await new Promise((r) => model?.server.close(r));
    ws?.cleanup();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('registers with scope "", completes the password page, lists our tools and hands them to the model', async () => {
    const child = spawn(process.execPath, [GEMINI as string, '-p', 'hello'], {
      cwd: ws.dir,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.stdin.write('y\n'); // the consent prompt ("Opening authentication page… [Y/n]")
    const code = await new Promise<number | null>((resolve) => {
      const ceiling = setTimeout(() => child.kill('SIGKILL'), 180_000);
      child.on('exit', (c) => {
        clearTimeout(ceiling);
        resolve(c);
      });
    });
    child.stdin.destroy();
    const steps = await settledLog();
    expect(steps, out).toMatch(/^open http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/m);
    expect(steps).toContain('page 200 Gemini CLI MCP Client');
    expect(steps).toMatch(
      /submit 302 http:\/\/localhost:\d+\/oauth\/callback\?code=[^&\s]+&state=[^&\s]+&iss=/,
    );
    expect(steps).toContain('callback 200');
    expect(server.stderr()).toContain('"client_name":"Gemini CLI MCP Client"');
    expect(proxy.registrations()).toEqual([
      expect.objectContaining({ scope: '', client_name: 'Gemini CLI MCP Client' }),
    ]);
    expect(code, out).toBe(0);
    expect(out).toContain('done');
    expect(model.sawTools()).toBe(true);
  }, 240_000);

  it('`gemini mcp list` then reports the server connected with the stored token', async () => {
    // Asynchronously: the recording proxy lives in this process and must keep serving meanwhile.
    const r = await run(process.execPath, [GEMINI as string, 'mcp', 'list'], { cwd: ws.dir, env });
    expect(r.out).toContain(`wb: ${proxy.base}/mcp (http) - Connected`);
  }, 180_000);
});
