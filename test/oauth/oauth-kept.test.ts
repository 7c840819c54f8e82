// OAuth across a restart (docs/oauth.md "Across restarts", docs/configuration.md "Kept credentials"): without
// SERVICE_OAUTH_TOKEN_SECRET the signing key is kept in the state directory (0600), so an access token issued
// before a restart still works after it; refresh grants of the pre-registered client and of metadata-document
// clients are kept (refresh-token digests only) and still refresh; a dynamic registration stays process-local,
// so its token is refused after a restart. A configured secret, or SERVICE_STATE_DIR=off, keeps nothing.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../exec/exec-support.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { workspaceId } from '../../src/state/state-dir.js';
import { CI, makeCert, startDocServer, type DocServer, type TestCert } from '../e2e/oauth-cimd-helpers.js';
import { authorize, CALLBACK, fullFlow, PASSWORD, pkce, token, toolsList } from '../e2e/oauth-helpers.js';

// A pinned origin: the audience of every token, whatever port each run listens on.
const ORIGIN = 'https://workbench.test';
let ws: TempWorkspace;
let dir: string;
const running: SpawnedServer[] = [];

beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  dir = mkdtempSync(path.join(tmpdir(), 'wb-oauth-kept-'));
});
afterAll(async () => {
  for (const s of running) await s.stop();
  ws?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function start(state: string, extra: Record<string, string> = {}): Promise<SpawnedServer> {
  const s = await startServer({
    workspace: ws.dir,
    env: {
      SERVICE_AUTH_MODE: 'oauth',
      SERVICE_AUTH_TOKEN: '',
      SERVICE_OAUTH_PASSWORD: PASSWORD,
      SERVICE_OAUTH_CLIENT_ID: 'kept-app',
      SERVICE_OAUTH_REDIRECT_URIS: CALLBACK,
      SERVICE_SERVER_URL: ORIGIN,
      SERVICE_STATE_DIR: state,
      ...extra,
    },
  });
  running.push(s);
  return s;
}

/** Signs the pre-registered public client in; returns its tokens. */
async function signIn(s: SpawnedServer): Promise<{ access: string; refresh: string }> {
  const p = pkce();
  const cb = await authorize(s.base, { clientId: 'kept-app', challenge: p.challenge });
  const t = await token(s.base, {
    grant_type: 'authorization_code',
    code: cb.get('code') ?? '',
    redirect_uri: CALLBACK,
    client_id: 'kept-app',
    code_verifier: p.verifier,
  });
  expect(t.status, t.text).toBe(200);
  return { access: t.json.access_token, refresh: t.json.refresh_token };
}

const listStatus = async (s: SpawnedServer, access: string) => (await toolsList(s.url, access)).status;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('OAuth tokens survive a restart', () => {
  it('an access token issued before a restart still works, and the kept refresh grant still refreshes', async () => {
    const state = path.join(dir, 'state');
    const first = await start(state);
    const kept = path.join(state, workspaceId(ws.dir));
    const keyFile = path.join(kept, 'oauth-signing-key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(first.stderr()).toContain(`OAuth signing key made and kept in ${keyFile}`);
    const { access, refresh } = await signIn(first);
    const dynamic = await fullFlow(first.base, { resource: `${ORIGIN}/mcp` });
    expect(await listStatus(first, access)).toBe(200);
    expect(await listStatus(first, dynamic.access)).toBe(200);
    const grants = path.join(kept, 'oauth-grants.json');
    expect(
      await waitFor(() => existsSync(grants) && readFileSync(grants, 'utf8').includes(sha256(refresh))),
    ).toBe(true);
    const text = readFileSync(grants, 'utf8');
    expect(statSync(grants).mode & 0o777).toBe(0o600);
    expect(text).not.toContain(refresh); // digests only
    expect(text).not.toContain(dynamic.clientId); // dynamic registrations are process-local
    expect(await first.stop()).toBe(0);

    const second = await start(state);
    expect(second.stderr()).not.toContain('OAuth signing key made');
    expect(await listStatus(second, access)).toBe(200);
    const after = await toolsList(second.url, dynamic.access);
    expect(after.status).toBe(401);
    expect(after.json.error_description).toMatch(/no longer registered/);
    const r = await token(second.base, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: 'kept-app',
    });
    expect(r.status, r.text).toBe(200);
    expect(await listStatus(second, r.json.access_token)).toBe(200);
    // The refresh token rotated: the old one is spent, and presenting it again revokes the grant (kept too).
    const reused = await token(second.base, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: 'kept-app',
    });
    expect(reused.status).toBe(400);
    expect(await listStatus(second, r.json.access_token)).toBe(401);
    await second.stop();

    // Nothing kept, or a configured secret: the earlier token is not accepted.
    const off = await start('off');
    expect(await listStatus(off, access)).toBe(401);
    await off.stop();
    const secret = await start(state, { SERVICE_OAUTH_TOKEN_SECRET: 'ab'.repeat(32) });
    expect(await listStatus(secret, access)).toBe(401);
    await secret.stop();
  });
});

const cert = makeCert();
if (!cert && !CI) console.warn('[oauth-kept] metadata-document case skipped: openssl not found');

describe.skipIf(!cert)('a metadata-document client across a restart', () => {
  let docs: DocServer;
  const tls = cert as TestCert;
  beforeAll(async () => {
    docs = await startDocServer(tls);
  });
  afterAll(async () => {
    await docs?.close();
    tls.cleanup();
  });

  it('its access token and its refresh grant survive; the document is fetched again after the restart', async () => {
    const state = path.join(dir, 'state-cimd');
    const env = { NODE_EXTRA_CA_CERTS: tls.certPath, WB_TEST_CIMD_ALLOW_LOOPBACK: '1' };
    docs.set('/client.json', {
      body: {
        client_id: docs.url('/client.json'),
        client_name: 'Kept Doc Client',
        redirect_uris: ['http://localhost/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    const clientId = docs.url('/client.json');
    const redirect = 'http://localhost:50125/callback';
    const first = await start(state, env);
    const p = pkce();
    const cb = await authorize(first.base, { clientId, redirectUri: redirect, challenge: p.challenge });
    const t = await token(first.base, {
      grant_type: 'authorization_code',
      code: cb.get('code') ?? '',
      redirect_uri: redirect,
      client_id: clientId,
      code_verifier: p.verifier,
    });
    expect(t.status, t.text).toBe(200);
    const grants = path.join(state, workspaceId(ws.dir), 'oauth-grants.json');
    const digest = sha256(t.json.refresh_token);
    expect(await waitFor(() => existsSync(grants) && readFileSync(grants, 'utf8').includes(digest))).toBe(
      true,
    );
    await first.stop();

    const second = await start(state, env);
    const before = docs.hits('/client.json');
    expect(await listStatus(second, t.json.access_token)).toBe(200);
    const r = await token(second.base, {
      grant_type: 'refresh_token',
      refresh_token: t.json.refresh_token,
      client_id: clientId,
    });
    expect(r.status, r.text).toBe(200);
    expect(docs.hits('/client.json')).toBeGreaterThan(before);
    await second.stop();
  });
});
