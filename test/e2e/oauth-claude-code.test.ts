// Claude Code (`@anthropic-ai/claude-code` 2.1.330, a native binary installed on demand into
// node_modules/.cache/claude-code by .ci/run) against the spawned bin, with a temp HOME (
// docs/clients.md#the-clients-at-a-glance): `claude mcp list` health-checks without a model and reports the
// server connected over HTTP with a bearer header and over stdio (and not with a wrong header). Then OAuth the
// way Claude Code does it today — a Client ID Metadata Document whose redirect URIs are portless loopback
// callbacks while it listens on a random port (RFC 8252 §7.3): `claude mcp login` (in a pseudo-terminal from
// util-linux `script`, as it requires one) with MCP_OAUTH_CLIENT_METADATA_URL pointing at a local HTTPS
// document, $BROWSER submitting the password; `claude mcp list` then reports it connected.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  BROWSER_SCRIPT,
  browserEnv,
  cached,
  CI,
  makeCert,
  startDocServer,
  type DocServer,
  type TestCert,
} from './oauth-cimd-helpers.js';
import { runToEnd, startOAuthBin } from './oauth-helpers.js';

const CLAUDE = cached('claude-code', '@anthropic-ai/claude-code/bin/claude.exe');
const reason = CLAUDE
  ? undefined
  : '@anthropic-ai/claude-code is not installed (npm install --no-save --prefix node_modules/.cache/claude-code @anthropic-ai/claude-code@2.1.330, done by .ci/run)';
const haveScript = spawnSync('script', ['--version']).status === 0;
const cert = makeCert();
const loginReason = !haveScript
  ? 'util-linux `script` not found (claude mcp login needs a terminal)'
  : !cert
    ? 'openssl not found'
    : undefined;
if (reason) console.warn(`[oauth-claude-code] skipped: ${reason}`);
else if (loginReason) console.warn(`[oauth-claude-code] login test skipped: ${loginReason}`);

describe('Claude Code for the client test', () => {
  it('is present with script and openssl (required under CI=true)', () => {
    if ((reason || loginReason) && CI) expect.fail(`CI=true but ${reason ?? loginReason}`);
  });
});

const claude = (args: string[], env: Record<string, string>, cwd: string) =>
  runToEnd(CLAUDE as string, args, { env, cwd });

afterAll(() => cert?.cleanup());

describe.skipIf(!!reason)('Claude Code reports the server connected', () => {
  let ws: TempWorkspace;
  let bearerServer: SpawnedServer;
  let oauthServer: SpawnedServer | undefined;
  let docs: DocServer | undefined;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# demo\n' });
    home = mkdtempSync(path.join(tmpdir(), 'wb-claude-'));
    env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      NO_COLOR: '1',
    };
    bearerServer = await startServer({ workspace: ws.dir, env: { HOME: '/nonexistent-home' } });
  });
  afterAll(async () => {
    await bearerServer?.stop();
    await oauthServer?.stop();
    await docs?.close();
    ws?.cleanup();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('`claude mcp list`: HTTP with a bearer header and stdio are connected; a wrong or scheme-less header is not', async () => {
    const add = (...a: string[]) => claude(['mcp', 'add', ...a], env, ws.dir);
    expect(
      (
        await add(
          '--transport',
          'http',
          'wb-http',
          bearerServer.url,
          '--header',
          `Authorization: Bearer ${TEST_TOKEN}`,
        )
      ).code,
    ).toBe(0);
    expect(
      (
        await add(
          '--transport',
          'http',
          'wb-wrong',
          bearerServer.url,
          '--header',
          'Authorization: Bearer wrong-token-0123456789',
        )
      ).code,
    ).toBe(0);
    expect(
      (
        await add(
          '--transport',
          'http',
          'wb-noscheme',
          bearerServer.url,
          '--header',
          `Authorization: ${TEST_TOKEN}`,
        )
      ).code,
    ).toBe(0);
    expect((await add('wb-stdio', '--', process.execPath, BIN, '--stdio', '--workspace', ws.dir)).code).toBe(
      0,
    );
    const list = await claude(['mcp', 'list'], env, ws.dir);
    expect(list.out).toMatch(/wb-http: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/);
    expect(list.out).toMatch(/wb-stdio: .*--stdio.* - ✔ Connected/);
    expect(list.out).toMatch(/wb-wrong: .* - (✘ Failed to connect|! Needs authentication)/);
    expect(list.out).toMatch(/wb-noscheme: .* - (✘ Failed to connect|! Needs authentication)/);
  }, 300_000);

  it.skipIf(!!loginReason)(
    '`claude mcp login` with a Client ID Metadata Document (portless loopback callbacks, random port), then connected',
    async () => {
      const tls = cert as TestCert;
      docs = await startDocServer(tls);
      // The shape of https://claude.ai/oauth/claude-code-client-metadata (anthropics/claude-code #37767).
      docs.set('/claude-code.json', {
        body: {
          client_id: docs.url('/claude-code.json'),
          client_name: 'Claude Code (test document)',
          redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
      });
      oauthServer = await startOAuthBin(ws.dir, {
        NODE_EXTRA_CA_CERTS: tls.certPath,
        WB_TEST_CIMD_ALLOW_LOOPBACK: '1',
      });
      expect(
        (await claude(['mcp', 'add', '--transport', 'http', 'wb-oauth', oauthServer.url], env, ws.dir)).code,
      ).toBe(0);
      expect((await claude(['mcp', 'list'], env, ws.dir)).out).toMatch(
        /wb-oauth: .* - ! Needs authentication/,
      );

      const browser = path.join(home, 'browser.mjs');
      writeFileSync(browser, BROWSER_SCRIPT);
      chmodSync(browser, 0o755);
      const logFile = path.join(home, 'browser.log');
      writeFileSync(logFile, '');
      const login = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn('script', ['-qec', `'${CLAUDE}' mcp login wb-oauth`, '/dev/null'], {
          cwd: ws.dir,
          env: {
            ...env,
            BROWSER: browser,
            MCP_OAUTH_CLIENT_METADATA_URL: docs?.url('/claude-code.json') ?? '',
            ...browserEnv(logFile),
          },
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (out += c.toString()));
        const ceiling = setTimeout(() => child.kill('SIGKILL'), 150_000);
        child.on('exit', (code) => {
          clearTimeout(ceiling);
          resolve({ code, out });
        });
      });
      const steps = readFileSync(logFile, 'utf8');
      expect(steps, login.out).toContain('page 200 Claude Code (test document)');
      expect(steps).toMatch(/submit 302 http:\/\/localhost:\d+\/callback\?code=/);
      expect(login.out).toContain('Authenticated with "wb-oauth"');
      expect(login.code).toBe(0);
      expect(oauthServer.stderr()).toContain(
        `authorization code exchanged {"client_id":"${docs.url('/claude-code.json')}"}`,
      );
      expect((await claude(['mcp', 'list'], env, ws.dir)).out).toMatch(/wb-oauth: .* - ✔ Connected/);
    },
    300_000,
  );
});
