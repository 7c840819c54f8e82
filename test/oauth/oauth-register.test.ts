// POST /oauth/register over real HTTP (redirect_uris rules, auth methods, secrets as digests,
// unique redirect URIs); docs/oauth.md#registration (JSON ≤ 8 KiB, 1–10 URIs, no
// fragment or userinfo, loopback-only http, private-use schemes, narrowing reported back, 201/400 codes,
// bounded registry); docs/design-notes.md#limits (1024, oldest evicted) and
// docs/design-notes.md#pre-registered-client-and-static-tokens (default method `none`, echoed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redirectUriProblem } from '../../src/oauth/checks/redirect-uri-syntax.js';
import { digest } from '../../src/oauth/secrets.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorize,
  CALLBACK,
  pkce,
  register,
  startOAuthServer,
  token,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
let srv: OAuthTestServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  srv = await startOAuthServer({ workspace: ws.dir, maxDynamicClients: 3 });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

describe('redirect URI rules (docs/oauth.md#redirect-uris; RFC 6749 §3.1.2; RFC 8252 §7.1, §7.3)', () => {
  const accepted = [
    'https://claude.ai/api/mcp/auth_callback',
    'https://chatgpt.com/connector_platform_oauth_redirect',
    'http://localhost:33418/callback',
    'http://127.0.0.1:6274/oauth/callback?x=1',
    'http://[::1]:8080/cb',
    'cursor://anysphere.cursor-retrieval/oauth/user-workbench/callback',
    'com.example.app:/oauth2redirect',
    'vscode://vscode.github-authentication/did-authenticate',
  ];
  const refused: Array<[string, RegExp]> = [
    ['http://evil.example/cb', /non-loopback/],
    ['http://127.0.0.2/cb', /non-loopback/],
    ['http://localhost.evil.example/cb', /non-loopback/],
    ['https://claude.ai/cb#frag', /fragment/],
    ['https://claude.ai/cb#', /fragment/],
    ['https://user:pw@claude.ai/cb', /user information/],
    ['/relative/callback', /not an absolute URI/],
    ['javascript:alert(1)', /not allowed/],
    ['data:text/html,hi', /not allowed/],
    ['file:///etc/passwd', /not allowed/],
    ['urn:ietf:wg:oauth:2.0:oob', /not allowed/],
    ['https://claude.ai/a b', /not allowed in a URI/],
    ['', /non-empty/],
  ];
  it.each(accepted)('accepts %s', (uri) => expect(redirectUriProblem(uri)).toBeUndefined());
  it.each(refused)('refuses %s', (uri, why) => expect(redirectUriProblem(uri)).toMatch(why));
});

describe('registration over HTTP (RFC 7591 §3; docs/oauth.md#registration)', () => {
  it('201 with the client record; no method means none, echoed (docs/design-notes.md#pre-registered-client-and-static-tokens); no secret for public clients', async () => {
    const r = await register(srv.base, {
      redirect_uris: [CALLBACK],
      client_name: 'My Client',
      application_type: 'native',
      logo_uri: 'https://x/y.png',
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json).toMatchObject({
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'My Client',
    });
    expect(typeof r.json.client_id).toBe('string');
    expect(r.json.client_id.length).toBeGreaterThanOrEqual(20);
    expect(typeof r.json.client_id_issued_at).toBe('number');
    expect(r.json.client_secret).toBeUndefined();
    // registered metadata is returned (RFC 7591 §3.2.1); display-only, never rendered on the page
    expect(r.json.logo_uri).toBe('https://x/y.png');
    expect(r.json.application_type).toBe('native');
  });

  it.each(['client_secret_post', 'client_secret_basic'])(
    '%s: a secret is issued once and stored only as its digest',
    async (method) => {
      const r = await register(srv.base, { redirect_uris: [CALLBACK], token_endpoint_auth_method: method });
      expect(r.status).toBe(201);
      expect(r.json.token_endpoint_auth_method).toBe(method);
      expect(r.json.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(r.json.client_secret_expires_at).toBe(0);
      const stored = srv.oauth.context.clients.get(r.json.client_id);
      expect(stored?.secretDigest).toBe(digest(r.json.client_secret));
      expect(JSON.stringify(stored)).not.toContain(r.json.client_secret);
    },
  );

  it('unsupported grant and response types are narrowed and reported back, not refused', async () => {
    const r = await register(srv.base, {
      redirect_uris: [CALLBACK],
      grant_types: [
        'authorization_code',
        'client_credentials',
        'implicit',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      response_types: ['code', 'token'],
    });
    expect(r.status).toBe(201);
    expect(r.json.grant_types).toEqual(['authorization_code']);
    expect(r.json.response_types).toEqual(['code']);
    const r2 = await register(srv.base, { redirect_uris: [CALLBACK], grant_types: ['refresh_token'] });
    expect(r2.json.grant_types).toEqual(['authorization_code', 'refresh_token']);
  });

  const bad: Array<[string, unknown, string]> = [
    ['http://evil.example/cb', { redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
    ['a fragment', { redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
    ['duplicates', { redirect_uris: [CALLBACK, CALLBACK] }, 'invalid_redirect_uri'],
    ['no redirect_uris', { client_name: 'x' }, 'invalid_redirect_uri'],
    ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
    [
      '11 redirect_uris',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
      'invalid_redirect_uri',
    ],
    ['redirect_uris not an array', { redirect_uris: CALLBACK }, 'invalid_redirect_uri'],
    ['a non-string URI', { redirect_uris: [42] }, 'invalid_redirect_uri'],
    [
      'an unsupported auth method',
      { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
    ],
    ['client_name not a string', { redirect_uris: [CALLBACK], client_name: 7 }, 'invalid_client_metadata'],
    [
      'grant_types not an array',
      { redirect_uris: [CALLBACK], grant_types: 'authorization_code' },
      'invalid_client_metadata',
    ],
    ['a malformed scope', { redirect_uris: [CALLBACK], scope: 'a "b"' }, 'invalid_client_metadata'],
    ['a JSON array', [CALLBACK], 'invalid_client_metadata'],
    ['invalid JSON', '{"redirect_uris":', 'invalid_client_metadata'],
  ];
  it.each(bad)('%s → 400 %s', async (_name, meta, code) => {
    const r = await register(srv.base, meta);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(code);
    expect(typeof r.json.error_description).toBe('string');
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a non-JSON media type and a body over 8 KiB (413)', async () => {
    const r = await fetch(`${srv.base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_client_metadata');
    const big = await register(srv.base, { redirect_uris: [CALLBACK], client_name: 'x'.repeat(9000) });
    expect(big.status).toBe(413);
    expect(big.json.error).toBe('invalid_client_metadata');
  });

  it('GET on the registration endpoint is 405 with Allow: POST', async () => {
    const r = await fetch(`${srv.base}/oauth/register`);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
  });
});

describe('bounded registry (docs/design-notes.md#limits: oldest evicted; here bounded at 3)', () => {
  const redirect = 'http://localhost:7777/cb';
  const signIn = async (clientId: string) => {
    const p = pkce();
    const cb = await authorize(srv.base, { clientId, redirectUri: redirect, challenge: p.challenge });
    const t = await token(srv.base, {
      grant_type: 'authorization_code',
      code: cb.get('code') ?? '',
      redirect_uri: redirect,
      client_id: clientId,
      code_verifier: p.verifier,
    });
    expect(t.status).toBe(200);
    return t.json as { access_token: string; refresh_token: string };
  };
  const ping = (accessToken: string) =>
    fetch(srv.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
  const newClient = async () =>
    (await register(srv.base, { redirect_uris: [redirect] })).json.client_id as string;

  it('a flood of registrations evicts registrations without a grant, never a signed-in client', async () => {
    const operator = await newClient();
    const t = await signIn(operator);
    for (let i = 0; i < 10; i++) await newClient();
    expect(srv.oauth.context.clients.get(operator)).toBeDefined();
    expect((await ping(t.access_token)).status).toBe(200);
  });

  it('when every registration holds a grant, the oldest is evicted and its tokens stop working on /mcp (docs/oauth.md#access-tokens)', async () => {
    const first = await newClient();
    const t = await signIn(first);
    expect((await ping(t.access_token)).status).toBe(200);
    // Fill the registry with signed-in clients: the next registration must evict one that holds a grant.
    for (let i = 0; i < 3; i++) await signIn(await newClient());
    expect(srv.oauth.context.clients.get(first)).toBeUndefined();
    const gone = await ping(t.access_token);
    expect(gone.status).toBe(401);
    expect(gone.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const again = await token(srv.base, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: first,
    });
    expect(again.status).toBe(401);
    expect(again.json.error).toBe('invalid_client');
  });
});
