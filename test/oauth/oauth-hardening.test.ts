// Hardening of the OAuth endpoints, over real HTTP on 127.0.0.1: the authorization endpoint is no open
// redirector (a client that registered an attacker's URI gets no redirect for a bad request: RFC 9700
// §4.11.2); the password POST must come from this origin when the browser says where it came from
// (Sec-Fetch-Site, Origin; RFC 9700 §4.7); noauth treats every proxy sign as "not local"
// (docs/design-notes.md#noauth-behind-a-proxy); a right token sent without the `Bearer ` scheme gets a 401
// that says how to send it, never echoing it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, TEST_TOKEN, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorizeUrl,
  fullFlow,
  getPage,
  pkce,
  PASSWORD,
  rawRequest,
  registerPublic,
  startOAuthServer,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
let oauth: OAuthTestServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  oauth = await startOAuthServer({ workspace: ws.dir, env: { SERVICE_AUTH_TOKEN: TEST_TOKEN } });
});
afterAll(async () => {
  await oauth?.close();
  ws?.cleanup();
});

describe('no open redirector (RFC 9700 §4.11.2)', () => {
  it('a client registered with an attacker URI gets a page, not a redirect, for a request the operator never saw', async () => {
    const evil = 'https://attacker.example/phish';
    const clientId = await registerPublic(oauth.base, evil);
    for (const bad of [
      { response_type: 'token' },
      { code_challenge: undefined },
      { resource: 'https://x.example' },
    ]) {
      const p = await getPage(
        authorizeUrl(oauth.base, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: evil,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          ...bad,
        }),
      );
      expect(p.status).toBe(400);
      expect(p.location).toBeUndefined();
      expect(p.html).not.toContain('attacker.example/phish?');
    }
  });
});

describe('the password POST comes from this origin (RFC 9700 §4.7)', () => {
  const CALLBACK = 'http://127.0.0.1:9/callback';
  let clientId: string;
  beforeAll(async () => {
    clientId = await registerPublic(oauth.base, CALLBACK);
  });

  async function submit(headers: Record<string, string>) {
    const page = await getPage(
      authorizeUrl(oauth.base, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: CALLBACK,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );
    // node:http (rawRequest), because fetch will not send a chosen Origin or Sec-Fetch-Site.
    return rawRequest(`${oauth.base}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({
        request: page.handle ?? '',
        password: PASSWORD,
        action: 'approve',
      }).toString(),
    });
  }

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['Origin of another site', { origin: 'https://attacker.example' }],
    ['Origin: null (a sandboxed page)', { origin: 'null' }],
    ['Origin of another port', { origin: 'http://127.0.0.1:1' }],
    [
      'same-origin fetch metadata with a foreign Origin',
      { 'sec-fetch-site': 'same-origin', origin: 'https://attacker.example' },
    ],
  ])('%s → 403 page, no code', async (_n, headers) => {
    const r = await submit(headers);
    expect(r.status).toBe(403);
    expect(r.headers.get('location')).toBeNull();
    expect(r.text).toContain('submitted from');
  });

  it.each([
    [
      'Sec-Fetch-Site: same-origin and this Origin',
      (b: string) => ({ 'sec-fetch-site': 'same-origin', origin: b }),
    ],
    ['neither header (a script or an older browser)', () => ({})],
  ])('%s → 302 with a code', async (_n, make) => {
    const r = await submit(make(oauth.base));
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toMatch(/[?&]code=/);
  });
});

describe('noauth refuses requests that came through a proxy (docs/design-notes.md#noauth-behind-a-proxy)', () => {
  let local: InProcessServer;
  let proxied: InProcessServer;
  beforeAll(async () => {
    local = await startInProcess({ workspace: ws.dir, env: { SERVICE_AUTH_MODE: 'noauth' } });
    proxied = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_AUTH_MODE: 'noauth', SERVICE_EXTERNAL_AUTH_PROXY: '1' },
    });
  });
  afterAll(async () => {
    await local?.close();
    await proxied?.close();
  });
  const ping = (url: string, headers: Record<string, string> = {}) =>
    rawRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it.each([
    ['via', '1.1 cloudflare'],
    ['cf-connecting-ip', '203.0.113.7'],
    ['true-client-ip', '203.0.113.7'],
    ['x-forwarded-server', 'edge-1'],
    ['x-original-forwarded-for', '203.0.113.7'],
    ['x-forwarded-for', '203.0.113.7'],
  ])('%s → 403 naming the header; allowed with SERVICE_EXTERNAL_AUTH_PROXY=1', async (name, value) => {
    const r = await ping(local.url, { [name]: value });
    expect(r.status).toBe(403);
    expect(r.json.error_description).toContain(name);
    expect((await ping(proxied.url, { [name]: value })).status).toBe(200);
  });

  it('a Host header sent twice → 403', async () => {
    const port = Number(new URL(local.base).port);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () =>
        s.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.example\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        ),
      );
      let data = '';
      s.on('data', (c) => (data += c.toString()));
      s.on('end', () => resolve(data));
      s.on('error', reject);
      s.setTimeout(60_000, () => s.destroy(new Error('timeout')));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 403/);
    expect(reply).toContain('repeated Host header');
  });

  it('a plain local request is served', async () => {
    expect((await ping(local.url)).status).toBe(200);
  });
});

describe('a right token sent without "Bearer " says so', () => {
  let bearer: InProcessServer;
  beforeAll(async () => {
    bearer = await startInProcess({ workspace: ws.dir });
  });
  afterAll(async () => {
    await bearer?.close();
  });
  const call = (url: string, authorization: string) =>
    rawRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it.each([
    ['the bare token', (t: string) => t],
    ['Token <token>', (t: string) => `Token ${t}`],
    ['Bearer:<token>', (t: string) => `Bearer:${t}`],
  ])(
    'bearer mode, %s → 401 telling to send Authorization: Bearer <token>, not echoing it',
    async (_n, make) => {
      const r = await call(bearer.url, make(TEST_TOKEN));
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(r.json.error_description).toMatch(/token is right.*"Authorization: Bearer <token>"/);
      expect(r.text).not.toContain(TEST_TOKEN);
    },
  );

  it('bearer mode, a wrong token without the scheme → 401 without claiming it is right', async () => {
    const r = await call(bearer.url, 'not-the-token-0123456789');
    expect(r.status).toBe(401);
    expect(r.json.error_description).not.toMatch(/is right/);
    expect(r.json.error_description).toContain('Authorization: Bearer <token>');
  });

  it('oauth mode: an access token or the static token without the scheme → the same hint', async () => {
    const { access } = await fullFlow(oauth.base);
    for (const credential of [access, TEST_TOKEN]) {
      const r = await call(oauth.url, credential);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toContain('resource_metadata=');
      expect(r.json.error_description).toMatch(/token is right/);
      expect(r.text).not.toContain(credential);
    }
    const wrong = await call(oauth.url, 'eyJhbGciOiJIUzI1NiJ9.e30.x');
    expect(wrong.json.error_description).not.toMatch(/is right/);
  });
});
