// Client ID Metadata Documents (MCP 2025-11-25 authorization "Client ID Metadata Documents";
// draft-ietf-oauth-client-id-metadata-document; docs/design-notes.md#nothing-is-downloaded) against a local
// HTTPS document server with a throwaway certificate the in-process server is given as a CA. A document
// client completes authorize and token (public, and private_key_jwt with a published JWK Set); documents that
// must not be used are refused on an error page: another client_id, a redirect, too large, not JSON, a shared
// secret; redirect URIs are enforced; private, loopback and link-local addresses are never fetched unless the
// test-only setting allows loopback; Cache-Control decides reuse; a document that never arrives is given up
// on its deadline.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { CimdResolver } from '../../src/oauth/clients/cimd.js';
import { classifyAddress } from '../../src/oauth/clients/public-address.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { CI, makeCert, startDocServer, type DocServer, type TestCert } from '../e2e/oauth-cimd-helpers.js';
import {
  authorize,
  authorizeUrl,
  getPage,
  pkce,
  startOAuthServer,
  token,
  toolsList,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

const cert = makeCert();
if (!cert && !CI)
  console.warn('[oauth-cimd] skipped: openssl not found (Debian: apt-get install -y openssl)');

describe('openssl for the document server', () => {
  it('is present (required under CI=true)', () => {
    if (!cert && CI) expect.fail('CI=true but openssl is missing');
  });
});

describe.skipIf(!cert)('Client ID Metadata Documents', () => {
  let ws: TempWorkspace;
  let srv: OAuthTestServer; // loopback allowed (the test-only setting), the test CA trusted
  let strict: OAuthTestServer; // the same CA, loopback NOT allowed: what production does
  let docs: DocServer;
  const tls = cert as TestCert;
  let doc: (p: string, extra?: Record<string, unknown>) => Record<string, unknown>;

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'alpha\n' });
    docs = await startDocServer(tls);
    srv = await startOAuthServer({ workspace: ws.dir, cimd: { allowLoopback: true, ca: tls.cert } });
    strict = await startOAuthServer({ workspace: ws.dir, cimd: { allowLoopback: false, ca: tls.cert } });
    // Claude Code's document lists portless loopback callbacks and listens on a random port.
    doc = (p, extra = {}) => ({
      client_id: docs.url(p),
      client_name: 'Doc Client',
      redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extra,
    });
  });
  afterAll(async () => {
    await srv?.close();
    await strict?.close();
    await docs?.close();
    ws?.cleanup();
    tls.cleanup();
  });

  const open = (s: OAuthTestServer, clientId: string, redirect = 'http://localhost:50123/callback') =>
    getPage(
      authorizeUrl(s.base, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirect,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );

  it('a document client completes authorize + token and its token lists tools; the page names the document host', async () => {
    docs.set('/public.json', { body: doc('/public.json'), headers: { 'cache-control': 'max-age=300' } });
    const clientId = docs.url('/public.json');
    const page = await open(srv, clientId);
    expect(page.status, page.html).toBe(200);
    expect(page.html).toContain('Doc Client');
    expect(page.html).toContain(`localhost:${docs.port}`); // the verified identity: the document's host
    const p = pkce();
    const redirect = 'http://localhost:50123/callback';
    const cb = await authorize(srv.base, {
      clientId,
      redirectUri: redirect,
      challenge: p.challenge,
      state: 's',
    });
    const t = await token(srv.base, {
      grant_type: 'authorization_code',
      code: cb.get('code') ?? '',
      redirect_uri: redirect,
      client_id: clientId,
      code_verifier: p.verifier,
    });
    expect(t.status, t.text).toBe(200);
    expect((await toolsList(srv.url, t.json.access_token)).status).toBe(200);
    const r = await token(srv.base, {
      grant_type: 'refresh_token',
      refresh_token: t.json.refresh_token,
      client_id: clientId,
    });
    expect(r.status, r.text).toBe(200);
    expect(docs.hits('/public.json')).toBe(1); // cached for max-age
  });

  it('Cache-Control: no-store → the document is fetched again at every step', async () => {
    docs.set('/nostore.json', { body: doc('/nostore.json'), headers: { 'cache-control': 'no-store' } });
    const clientId = docs.url('/nostore.json');
    const p = pkce();
    const redirect = 'http://127.0.0.1:50124/callback';
    const cb = await authorize(srv.base, { clientId, redirectUri: redirect, challenge: p.challenge });
    expect(docs.hits('/nostore.json')).toBe(2); // the page, then the password POST
    await token(srv.base, {
      grant_type: 'authorization_code',
      code: cb.get('code') ?? '',
      redirect_uri: redirect,
      client_id: clientId,
      code_verifier: p.verifier,
    });
    expect(docs.hits('/nostore.json')).toBe(3);
  });

  it.each([
    [
      'a client_id other than the URL (impersonation)',
      { body: { client_id: 'https://claude.ai/oauth/x' } },
      /not exactly the URL/,
    ],
    [
      'a redirect (302 to another document)',
      { status: 302, headers: { location: '/public.json' } },
      /redirect/,
    ],
    ['a 6 KiB document (Content-Length)', { big: true }, /larger than 5120 bytes/],
    ['a 6 KiB document sent chunked', { big: true, chunked: true }, /larger than 5120 bytes/],
    ['text/html instead of JSON', { headers: { 'content-type': 'text/html' } }, /Content-Type is text\/html/],
    ['HTTP 404', { status: 404 }, /HTTP 404/],
    ['invalid JSON', { raw: '{"client_id":' }, /not valid JSON/],
    [
      'client_secret_post (a shared secret)',
      { body: { token_endpoint_auth_method: 'client_secret_post' } },
      /none or private_key_jwt/,
    ],
    ['a client_secret member', { body: { client_secret: 'abc' } }, /must not carry a client secret/],
    ['no redirect_uris', { body: { redirect_uris: undefined } }, /redirect_uris is required/],
    [
      'private_key_jwt without keys',
      { body: { token_endpoint_auth_method: 'private_key_jwt' } },
      /jwks_uri or jwks/,
    ],
  ])('%s → an error page, never a redirect', async (_n, c, why) => {
    const p = `/bad-${randomUUID()}.json`;
    const cc = c as {
      body?: Record<string, unknown>;
      status?: number;
      headers?: Record<string, string>;
      big?: boolean;
      chunked?: boolean;
      raw?: string;
    };
    const body =
      cc.raw ?? (cc.big ? { ...doc(p), client_name: 'x'.repeat(6 * 1024) } : { ...doc(p), ...cc.body });
    docs.set(p, { body, status: cc.status, headers: cc.headers, chunked: cc.chunked });
    const page = await open(srv, docs.url(p));
    expect(page.status).toBe(400);
    expect(page.location).toBeUndefined();
    expect(page.html).toMatch(why);
  });

  it('a redirect URI the document does not list is refused on a page', async () => {
    docs.set('/narrow.json', { body: doc('/narrow.json', { redirect_uris: ['https://app.example/cb'] }) });
    const page = await open(srv, docs.url('/narrow.json'), 'https://evil.example/cb');
    expect(page.status).toBe(400);
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('is not registered for this application');
  });

  it.each([
    ['http:// (not https)', (port: number) => `http://localhost:${port}/c.json`, /not registered/],
    ['no path', (port: number) => `https://localhost:${port}/`, /must have a path/],
    ['a dot segment', (port: number) => `https://localhost:${port}/a/../c.json`, /\. or \.\. path segments/],
    ['user information', (port: number) => `https://u:p@localhost:${port}/c.json`, /user information/],
  ])('a client_id URL with %s is refused without a fetch', async (_n, make, why) => {
    const page = await open(srv, make(docs.port));
    expect(page.status).toBe(400);
    expect(page.html).toMatch(why);
  });

  it('without the test-only setting a document on a loopback host is never fetched (DNS checked first)', async () => {
    docs.set('/loop.json', { body: doc('/loop.json') });
    const page = await open(strict, docs.url('/loop.json'));
    expect(page.status).toBe(400);
    expect(page.html).toMatch(/resolves to (127\.0\.0\.1|::1), a private, loopback or reserved address/);
    expect(docs.hits('/loop.json')).toBe(0);
  });

  it.each([
    'https://10.0.0.1/client.json',
    'https://192.168.1.10/client.json',
    'https://169.254.169.254/latest/meta-data.json',
    'https://[fd00::1]/client.json',
    'https://[::ffff:10.0.0.1]/client.json',
    'https://100.64.0.1/client.json',
  ])('%s (private, link-local, CGNAT) is refused even with loopback allowed', async (id) => {
    const page = await open(srv, id);
    expect(page.status).toBe(400);
    expect(page.html).toMatch(/private, loopback or reserved address/);
  });

  it('a document that never answers is given up on its deadline (no hang)', async () => {
    docs.set('/hang.json', { hang: true });
    const resolver = new CimdResolver({
      clock: systemClock,
      allowLoopback: true,
      ca: tls.cert,
      timeoutMs: 1_000,
    });
    const r = await resolver.resolve(docs.url('/hang.json'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.description).toMatch(/did not answer within 1000 ms/);
  }, 60_000);

  describe('private_key_jwt (RFC 7523; ChatGPT publishes its keys this way)', () => {
    let key: CryptoKey;
    let otherKey: CryptoKey;
    let clientId: string;
    const redirect = 'https://chatgpt.example/connector_platform_oauth_redirect';

    beforeAll(async () => {
      const pair = await generateKeyPair('ES256');
      key = pair.privateKey;
      otherKey = (await generateKeyPair('ES256')).privateKey;
      const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
      docs.set('/jwks.json', { body: { keys: [jwk] } });
      docs.set('/chatgpt.json', {
        body: doc('/chatgpt.json', {
          client_name: 'ChatGPT',
          redirect_uris: [redirect],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: docs.url('/jwks.json'),
        }),
      });
      clientId = docs.url('/chatgpt.json');
    });

    const assertion = (signWith: CryptoKey, jti = randomUUID(), aud = `${srv.base}/oauth/token`) =>
      new SignJWT({ jti })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(signWith);

    const codeFor = async () => {
      const p = pkce();
      const cb = await authorize(srv.base, { clientId, redirectUri: redirect, challenge: p.challenge });
      return { code: cb.get('code') ?? '', verifier: p.verifier };
    };
    const exchange = (c: { code: string; verifier: string }, extra: Record<string, string | undefined>) =>
      token(srv.base, {
        grant_type: 'authorization_code',
        code: c.code,
        redirect_uri: redirect,
        code_verifier: c.verifier,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        ...extra,
      });

    it('a signed assertion buys a token; refresh with a fresh assertion; the same jti twice is refused', async () => {
      const a = await assertion(key);
      const t = await exchange(await codeFor(), { client_assertion: a, client_id: clientId });
      expect(t.status, t.text).toBe(200);
      expect((await toolsList(srv.url, t.json.access_token)).status).toBe(200);
      const again = await exchange(await codeFor(), { client_assertion: a });
      expect(again.status).toBe(401);
      expect(again.json.error_description).toMatch(/already used/);
      const r = await token(srv.base, {
        grant_type: 'refresh_token',
        refresh_token: t.json.refresh_token,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await assertion(key, randomUUID(), srv.base), // the issuer as audience also works
      });
      expect(r.status, r.text).toBe(200);
    });

    it.each([
      [
        'signed by a key the client does not publish',
        async () => ({ client_assertion: await assertion(otherKey) }),
      ],
      [
        'for another audience',
        async () => ({ client_assertion: await assertion(key, randomUUID(), 'https://other.example/token') }),
      ],
      [
        'missing (a public-client request)',
        async () => ({ client_assertion_type: undefined, client_id: clientId }),
      ],
    ])('an assertion %s → 401 invalid_client', async (_n, make) => {
      const t = await exchange(await codeFor(), await make());
      expect(t.status).toBe(401);
      expect(t.json.error).toBe('invalid_client');
    });
  });
});

describe('address classification (CIMD draft §8.6 SSRF; docs/design-notes.md#nothing-is-downloaded)', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'refused'],
    ['172.20.0.1', 'refused'],
    ['192.168.0.1', 'refused'],
    ['169.254.169.254', 'refused'],
    ['100.64.1.1', 'refused'],
    ['0.0.0.0', 'refused'],
    ['224.0.0.1', 'refused'],
    ['255.255.255.255', 'refused'],
    ['::', 'refused'],
    ['fe80::1', 'refused'],
    ['fd12:3456::1', 'refused'],
    ['ff02::1', 'refused'],
    ['::ffff:192.168.1.1', 'refused'],
    ['64:ff9b::a00:1', 'refused'],
    ['2001:db8::1', 'refused'],
    ['not-an-ip', 'refused'],
  ])('%s is %s', (address, verdict) => {
    expect(classifyAddress(address)).toBe(verdict);
  });
});
