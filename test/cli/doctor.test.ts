// `workbench-mcp doctor [URL]` (docs/remote-access.md; the TLS set-up of docs/design-notes.md#tests): run from the built bin against real servers
// behind a local TLS proxy on 443 with real-shaped public names. It passes through the proxy in bearer mode and,
// with SERVICE_OAUTH_PASSWORD, through a full OAuth sign-in; it fails with the right line and fix for a wrong
// token, and for OAuth metadata that names the loopback origin (no SERVICE_SERVER_URL or trusted proxy headers
// behind a proxy that rewrites Host). Without a URL it checks the local endpoint only.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  needRoot,
  publishNames,
  removeDir,
  writeRoute,
  type PublishedNames,
} from '../helpers/public-names.js';
import { runDoctor } from '../helpers/tunnel-run.js';

const IP = '127.0.0.83';
const tag = randomBytes(3).toString('hex');
const BEARER_HOST = `wb${tag}-doctor-bearer.trycloudflare.com`;
const LOOPBACK_HOST = `wb${tag}-rewrites-host.ngrok-free.app`;
const PINNED_HOST = `wb${tag}-doctor-pinned.trycloudflare.com`;
const PASSWORD = 'correct horse battery staple';
const ROOT = needRoot('doctor through real-shaped public names');

let dir: string;
let names: PublishedNames | undefined;
let ws: TempWorkspace;
let bearer: SpawnedServer | undefined;
let unpinned: SpawnedServer | undefined;
let pinned: SpawnedServer | undefined;

const doctorEnv = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? '',
  NODE_EXTRA_CA_CERTS: names?.caFile ?? '',
  ...extra,
});

beforeAll(async () => {
  ws = makeWorkspace({ 'README.md': '# doctor\n' });
  bearer = await startServer({ workspace: ws.dir });
  if (!ROOT) return;
  dir = mkdtempSync(path.join(tmpdir(), 'wb-doctor-'));
  const routes = path.join(dir, 'routes');
  const oauthEnv = { SERVICE_AUTH_MODE: 'oauth', SERVICE_OAUTH_PASSWORD: PASSWORD, SERVICE_AUTH_TOKEN: '' };
  unpinned = await startServer({ workspace: ws.dir, env: oauthEnv });
  pinned = await startServer({
    workspace: ws.dir,
    env: { ...oauthEnv, SERVICE_SERVER_URL: `https://${PINNED_HOST}` },
  });
  writeRoute(routes, BEARER_HOST, { port: bearer.port, style: 'cloudflare' });
  writeRoute(routes, LOOPBACK_HOST, { port: unpinned.port, style: 'loopback' });
  writeRoute(routes, PINNED_HOST, { port: pinned.port, style: 'cloudflare' });
  const hosts = [BEARER_HOST, LOOPBACK_HOST, PINNED_HOST];
  names = await publishNames(IP, hosts, routes);
}, 120_000);

afterAll(async () => {
  await names?.close();
  await Promise.all([bearer?.stop(), unpinned?.stop(), pinned?.stop()]);
  ws?.cleanup();
  removeDir(dir);
});

describe.runIf(ROOT)('doctor, through the TLS proxy', () => {
  it('bearer mode: every check passes, exit 0', async () => {
    const r = await runDoctor(
      [`https://${BEARER_HOST}/mcp`, '--port', String(bearer?.port)],
      doctorEnv({ SERVICE_AUTH_TOKEN: TEST_TOKEN }),
    );
    expect(r.out).toMatch(/^pass +local endpoint: http:\/\/127\.0\.0\.1:\d+ answers \(workbench-mcp /m);
    expect(r.out).toMatch(new RegExp(`^pass +public endpoint: https://${BEARER_HOST} answers`, 'm'));
    expect(r.out).toMatch(/^pass +server card: \d+ tools, auth bearer$/m);
    expect(r.out).toMatch(/^skip +OAuth metadata: the server is in bearer mode$/m);
    expect(r.out).toMatch(
      /^pass +unauthenticated call: 401 with WWW-Authenticate: Bearer realm="workbench-mcp"$/m,
    );
    expect(r.out).toMatch(/^pass +authenticated tools\/list \(handshake era\): \d+ tools$/m);
    expect(r.out).toMatch(/^pass +authenticated tools\/list \(2026-07-28\): \d+ tools$/m);
    expect(r.out).not.toMatch(/^FAIL/m);
    expect(r.code).toBe(0);
  });

  it('a wrong token is never sent: the server cannot prove it knows it (http/proof.ts), exit 1', async () => {
    const r = await runDoctor(
      [`https://${BEARER_HOST}/mcp`, '--port', String(bearer?.port)],
      doctorEnv({ SERVICE_AUTH_TOKEN: 'not-the-servers-token-0123456789' }),
    );
    expect(r.out).toMatch(
      /^FAIL +server identity: https:\/\/\S+ could not prove it knows the configured token or password, so none was sent: .* — fix: check what listens there/m,
    );
    expect(r.out).not.toMatch(/authenticated tools\/list/);
    expect(r.out).toMatch(/^pass +public endpoint/m);
    expect(r.code).toBe(1);
  });

  it('OAuth metadata naming the loopback origin (no SERVICE_SERVER_URL, Host rewritten by the proxy) is flagged', async () => {
    const r = await runDoctor(
      [`https://${LOOPBACK_HOST}/mcp`, '--port', String(unpinned?.port)],
      doctorEnv({}),
    );
    const loopback = `http://127.0.0.1:${unpinned?.port}`;
    const fix = `fix: restart the server with SERVICE_SERVER_URL=https://${LOOPBACK_HOST} (or --server-url https://${LOOPBACK_HOST})`;
    expect(r.out).toContain(
      `FAIL  protected-resource metadata: names ${loopback} instead of https://${LOOPBACK_HOST} — ${fix}`,
    );
    expect(r.out).toContain(
      `FAIL  authorization-server metadata: names ${loopback} instead of https://${LOOPBACK_HOST} — ${fix}`,
    );
    expect(r.out).toMatch(/^FAIL +server card: auth\.resource is http:\/\/127\.0\.0\.1:\d+\/mcp/m);
    expect(r.out).toMatch(
      /^FAIL +unauthenticated call: the challenge points at Bearer resource_metadata="http:\/\/127/m,
    );
    expect(r.out).toMatch(/^skip +OAuth sign-in: set SERVICE_OAUTH_PASSWORD/m);
    expect(r.code).toBe(1);
  });

  it('OAuth with a pinned origin and SERVICE_OAUTH_PASSWORD: metadata, 401, the full sign-in and tools/list pass', async () => {
    const r = await runDoctor(
      [`https://${PINNED_HOST}/mcp`, '--port', String(pinned?.port)],
      doctorEnv({ SERVICE_OAUTH_PASSWORD: PASSWORD }),
    );
    expect(r.out).toMatch(
      new RegExp(`^pass +protected-resource metadata: resource https://${PINNED_HOST}/mcp$`, 'm'),
    );
    expect(r.out).toMatch(
      new RegExp(`^pass +authorization-server metadata: issuer https://${PINNED_HOST}$`, 'm'),
    );
    expect(r.out).toMatch(
      /^pass +unauthenticated call: 401 with WWW-Authenticate: Bearer resource_metadata="https:/m,
    );
    expect(r.out).toMatch(
      /^pass +OAuth sign-in: registration, password page, code and token exchange all worked$/m,
    );
    expect(r.out).toMatch(/^pass +authenticated tools\/list \(2026-07-28\)/m);
    expect(r.code).toBe(0);
    const wrong = await runDoctor(
      [`https://${PINNED_HOST}/mcp`, '--port', String(pinned?.port)],
      doctorEnv({ SERVICE_OAUTH_PASSWORD: 'not the password' }),
    );
    expect(wrong.out).toMatch(
      /^FAIL +server identity: .* could not prove it knows the configured token or password, so none was sent/m,
    );
    expect(wrong.code).toBe(1);
  });
});

describe('doctor, without a public URL', () => {
  it('checks the local endpoint with the token from SERVICE_AUTH_TOKEN_FILE; the public checks are skipped', async () => {
    const file = path.join(ws.dir, '..', `wb-doctor-token-${tag}`);
    writeFileSync(file, `${TEST_TOKEN}\n`, { mode: 0o600 });
    try {
      const r = await runDoctor(['--port', String(bearer?.port)], {
        PATH: process.env.PATH ?? '',
        SERVICE_AUTH_TOKEN_FILE: file,
      });
      expect(r.out).toMatch(/^pass +local endpoint/m);
      expect(r.out).toMatch(/^skip +public endpoint: no URL given/m);
      expect(r.out).toMatch(/^pass +authenticated tools\/list \(handshake era\)/m);
      expect(r.code).toBe(0);
    } finally {
      removeDir(file);
    }
  });

  it('given http://127.0.0.1:PORT/mcp of a server on a port other than 8765, without --port: every check passes', async () => {
    expect(bearer?.port).not.toBe(8765);
    const r = await runDoctor([`http://127.0.0.1:${bearer?.port}/mcp`], {
      PATH: process.env.PATH ?? '',
      SERVICE_AUTH_TOKEN: TEST_TOKEN,
    });
    expect(r.out).toMatch(/^pass +server identity/m);
    expect(r.out).toMatch(/^pass +authenticated tools\/list \(2026-07-28\)/m);
    expect(r.code, r.out).toBe(0);
  });

  it('nothing listening: the local endpoint fails with how to start the server, exit 1', async () => {
    const port = await freePort();
    const r = await runDoctor(['--port', String(port)], { PATH: process.env.PATH ?? '' });
    expect(r.out).toMatch(
      new RegExp(
        `^FAIL +local endpoint: http://127\\.0\\.0\\.1:${port}/\\.well-known/mcp\\.json did not answer \\(ECONNREFUSED\\) — fix: start the server`,
        'm',
      ),
    );
    expect(r.code).toBe(1);
  });
});
