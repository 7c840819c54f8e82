// The real bin in oauth mode: docs/design-notes.md#secrets-at-start (a generated password is written once,
// directly on stderr; a configured one never), docs/design-notes.md#pre-registered-client-and-static-tokens
// (pre-registered client without redirect URIs → warning and exactly http://127.0.0.1/callback; static bearer
// tokens accepted beside OAuth, never generated in that mode), docs/oauth.md#pre-registered-client (post or
// basic for a confidential one), docs/design-notes.md#command-line (invalid values exit 2 with one line).
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorize,
  register,
  authorizeUrl,
  getPage,
  pkce,
  PASSWORD,
  submitForm,
  token,
  toolsList,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
const running: SpawnedServer[] = [];

beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
});
afterAll(async () => {
  for (const s of running) await s.stop();
  ws?.cleanup();
});

async function start(env: Record<string, string>): Promise<SpawnedServer> {
  const s = await startServer({
    workspace: ws.dir,
    env: { HOME: '/nonexistent-home', SERVICE_AUTH_MODE: 'oauth', SERVICE_AUTH_TOKEN: '', ...env },
  });
  running.push(s);
  return s;
}

describe('start-up in oauth mode', () => {
  it('a generated password is printed once on stderr, works on the page, and no bearer token is generated', async () => {
    const s = await start({});
    const err = s.stderr();
    const m = /generated an OAuth password for this run \(shown once\):\n\n {4}(\S+)\n/.exec(err);
    expect(m).not.toBeNull();
    const password = m?.[1] as string;
    expect(password).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/);
    expect(err.split(password).length - 1).toBe(1);
    expect(err).not.toMatch(/bearer token/);
    // The banner is not a log line.
    expect(err).not.toMatch(new RegExp(`workbench-mcp (info|warn|debug|error):[^\\n]*${password}`));
    const clientId = (await register(s.base, { redirect_uris: ['http://127.0.0.1:9/cb'] })).json
      .client_id as string;
    const p = pkce();
    const cb = await authorize(s.base, {
      clientId,
      redirectUri: 'http://127.0.0.1:9/cb',
      challenge: p.challenge,
      password,
    });
    expect(cb.get('code')).toBeTruthy();
    expect(cb.get('iss')).toBe(s.base);
  });

  it('a configured password is never printed; a configured static token is accepted beside OAuth', async () => {
    const s = await start({ SERVICE_OAUTH_PASSWORD: PASSWORD, SERVICE_AUTH_TOKEN: TEST_TOKEN });
    expect(s.stderr()).not.toContain(PASSWORD);
    expect(s.stderr()).not.toContain('generated');
    expect((await toolsList(s.url, TEST_TOKEN)).status).toBe(200);
    const none = await toolsList(s.url, undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${s.base}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('a pre-registered client without redirect URIs: a warning, and exactly http://127.0.0.1/callback', async () => {
    const s = await start({ SERVICE_OAUTH_PASSWORD: PASSWORD, SERVICE_OAUTH_CLIENT_ID: 'my-app' });
    expect(s.stderr()).toMatch(/warn: SERVICE_OAUTH_CLIENT_ID is set without SERVICE_OAUTH_REDIRECT_URIS/);
    const p = pkce();
    const base = {
      response_type: 'code',
      client_id: 'my-app',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    };
    expect(
      (await getPage(authorizeUrl(s.base, { ...base, redirect_uri: 'http://127.0.0.1/callback' }))).status,
    ).toBe(200);
    expect(
      (await getPage(authorizeUrl(s.base, { ...base, redirect_uri: 'http://127.0.0.1:8080/callback' })))
        .status,
    ).toBe(400);
  });

  it('a confidential pre-registered client may use post or basic, and dynamic registration stays on', async () => {
    const redirect = 'https://app.example.com/cb';
    const s = await start({
      SERVICE_OAUTH_PASSWORD: PASSWORD,
      SERVICE_OAUTH_CLIENT_ID: 'my-app',
      SERVICE_OAUTH_REDIRECT_URIS: `${redirect},http://localhost:5000/cb`,
      SERVICE_OAUTH_CLIENT_SECRET: 'pre-shared-secret-0123456789',
    });
    expect(s.stderr()).not.toContain('pre-shared-secret');
    const page = await getPage(
      authorizeUrl(s.base, {
        response_type: 'code',
        client_id: 'my-app',
        redirect_uri: redirect,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );
    expect(page.html).toContain('Pre-registered client my-app');
    expect(page.html).toContain('app.example.com');
    for (const how of ['post', 'basic', 'none'] as const) {
      const p = pkce();
      const cb = await authorize(s.base, {
        clientId: 'my-app',
        redirectUri: redirect,
        challenge: p.challenge,
      });
      const form = {
        grant_type: 'authorization_code',
        code: cb.get('code') ?? '',
        redirect_uri: redirect,
        code_verifier: p.verifier,
      };
      const r =
        how === 'post'
          ? await token(s.base, {
              ...form,
              client_id: 'my-app',
              client_secret: 'pre-shared-secret-0123456789',
            })
          : how === 'basic'
            ? await token(s.base, form, {
                authorization: `Basic ${Buffer.from('my-app:pre-shared-secret-0123456789').toString('base64')}`,
              })
            : await token(s.base, { ...form, client_id: 'my-app' });
      expect(r.status, how).toBe(how === 'none' ? 401 : 200);
      if (how !== 'none') expect((await toolsList(s.url, r.json.access_token)).status).toBe(200);
    }
    const reg = await fetch(`${s.base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [redirect] }),
    });
    expect(reg.status).toBe(201);
  });

  it.each([
    [
      { SERVICE_OAUTH_CLIENT_ID: 'x', SERVICE_OAUTH_REDIRECT_URIS: 'http://evil.example/cb' },
      /^workbench-mcp: SERVICE_OAUTH_REDIRECT_URIS: .*non-loopback/,
    ],
    [
      { SERVICE_OAUTH_CLIENT_ID: 'x', SERVICE_OAUTH_REDIRECT_URIS: 'https://a.example/cb#f' },
      /^workbench-mcp: SERVICE_OAUTH_REDIRECT_URIS: .*fragment/,
    ],
    [{ SERVICE_OAUTH_TOKEN_SECRET: 'abcd' }, /^workbench-mcp: SERVICE_OAUTH_TOKEN_SECRET must be/],
  ])('invalid OAuth settings stop the server with exit 2 and one line: %j', (env, line) => {
    const r = spawnSync(process.execPath, [BIN, '--workspace', ws.dir, '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', SERVICE_AUTH_MODE: 'oauth', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(line);
  });
});

describe('the password form through the real bin', () => {
  it('wrong then right password', async () => {
    const s = await start({ SERVICE_OAUTH_PASSWORD: PASSWORD });
    const reg = (
      await register(s.base, { redirect_uris: ['http://localhost:1/cb'], client_name: 'CLI test' })
    ).json;
    const page = await getPage(
      authorizeUrl(s.base, {
        response_type: 'code',
        client_id: reg.client_id,
        redirect_uri: 'http://localhost:1/cb',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 'st',
      }),
    );
    expect(page.html).toContain('CLI test');
    expect((await submitForm(s.base, { request: page.handle as string, password: 'nope' })).status).toBe(401);
    const ok = await submitForm(s.base, { request: page.handle as string, password: PASSWORD });
    expect(ok.status).toBe(302);
    expect(new URL(ok.location as string).searchParams.get('state')).toBe('st');
  });
});
