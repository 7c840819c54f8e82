// Discovery and /mcp in oauth mode, over real HTTP: docs/oauth.md#metadata (the two /.well-known/oauth-*
// documents), docs/oauth.md#access-tokens (tokens bound to the client and the exact resource); docs/oauth.md
// (base URL rules, both protected-resource paths, one issuer string, access-token claims and the 401 cases)
// and docs/http.md#order-of-checks step 2 (resource_metadata challenge, error="invalid_token" when a token
// was sent); docs/design-notes.md#pre-registered-client-and-static-tokens (static bearer tokens accepted
// beside OAuth). RFC 8414 §2–3, RFC 9728 §2–3, §5.1.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, SignJWT, UnsecuredJWT } from 'jose';
import { ManualClock } from '../../src/core/clock.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  fullFlow,
  rawRequest,
  startOAuthServer,
  toolsList,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

const SECRET_HEX = randomBytes(32).toString('hex');
const STATIC = 'static-token-0123456789abcdef';
let ws: TempWorkspace;
let srv: OAuthTestServer;
let clock: ManualClock;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  clock = new ManualClock(Date.now());
  srv = await startOAuthServer({
    workspace: ws.dir,
    clock,
    env: {
      SERVICE_OAUTH_TOKEN_SECRET: SECRET_HEX,
      SERVICE_AUTH_TOKEN: STATIC,
      SERVICE_OAUTH_TOKEN_TTL: '3600',
    },
  });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

/** GET through node:http, so tests can send a Host header of their choice. */
const getJson = (url: string, headers: Record<string, string> = {}) => rawRequest(url, { headers });

describe('discovery documents (docs/oauth.md#metadata; RFC 9728 §2–3; RFC 8414 §2)', () => {
  it.each([
    ['/.well-known/oauth-protected-resource', ''],
    ['/.well-known/oauth-protected-resource/mcp', '/mcp'],
  ])('%s names the resource its path was derived from (RFC 9728 §3.3) and this issuer', async (p, suffix) => {
    const r = await getJson(srv.base + p);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      resource: `${srv.base}${suffix}`,
      authorization_servers: [srv.base],
      bearer_methods_supported: ['header'],
    });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('authorization-server metadata: one issuer string, every endpoint, S256 only, iss parameter supported', async () => {
    const r = await getJson(`${srv.base}/.well-known/oauth-authorization-server`);
    expect(r.json).toEqual({
      issuer: srv.base,
      authorization_endpoint: `${srv.base}/oauth/authorize`,
      token_endpoint: `${srv.base}/oauth/token`,
      registration_endpoint: `${srv.base}/oauth/register`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [
        'none',
        'client_secret_post',
        'client_secret_basic',
        'private_key_jwt',
      ],
      token_endpoint_auth_signing_alg_values_supported: expect.arrayContaining(['ES256', 'RS256', 'EdDSA']),
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(r.json.issuer.endsWith('/')).toBe(false);
  });

  it('OPTIONS on a metadata path is a CORS preflight; POST is 405', async () => {
    const pre = await fetch(`${srv.base}/.well-known/oauth-authorization-server`, {
      method: 'OPTIONS',
      headers: { origin: 'https://claude.ai' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect((await fetch(`${srv.base}/.well-known/oauth-protected-resource`, { method: 'POST' })).status).toBe(
      405,
    );
  });

  it('the server card points at the protected-resource metadata (docs/design-notes.md#server-card)', async () => {
    const r = await getJson(`${srv.base}/.well-known/mcp.json`);
    expect(r.json.auth).toMatchObject({
      type: 'oauth2',
      resource: `${srv.base}/mcp`,
      protected_resource_metadata: `${srv.base}/.well-known/oauth-protected-resource/mcp`,
    });
  });

  it('the Host header decides the base when nothing else is configured (https for non-loopback hosts)', async () => {
    const r = await getJson(`${srv.base}/.well-known/oauth-authorization-server`, {
      host: 'abc.trycloudflare.com',
    });
    expect(r.json.issuer).toBe('https://abc.trycloudflare.com');
    expect(r.json.token_endpoint).toBe('https://abc.trycloudflare.com/oauth/token');
  });

  it('forwarded headers are ignored without SERVICE_TRUST_PROXY_HEADERS', async () => {
    const r = await getJson(`${srv.base}/.well-known/oauth-protected-resource/mcp`, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
    });
    expect(r.json.resource).toBe(`${srv.base}/mcp`);
  });
});

describe('/mcp in oauth mode (docs/http.md#order-of-checks step 2; RFC 9728 §5.1)', () => {
  const challenge = () => `Bearer resource_metadata="${srv.base}/.well-known/oauth-protected-resource/mcp"`;

  it('no token → 401 with resource_metadata and no error', async () => {
    const r = await toolsList(srv.url, undefined);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(challenge());
  });

  it('a valid access token → 200; the token carries the configured TTL', async () => {
    const f = await fullFlow(srv.base);
    expect(f.json.expires_in).toBe(3600);
    const r = await toolsList(srv.url, f.access);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json.result.tools)).toBe(true);
  });

  it('a static SERVICE_AUTH_TOKEN is accepted beside OAuth (docs/design-notes.md#pre-registered-client-and-static-tokens)', async () => {
    expect((await toolsList(srv.url, STATIC)).status).toBe(200);
  });

  async function forged(
    claims: Record<string, unknown>,
    key: Uint8Array = Buffer.from(SECRET_HEX, 'hex'),
    typ = 'at+jwt',
  ) {
    const now = Math.floor(clock.now() / 1000);
    return new SignJWT({ client_id: claims.sub, sid: 'x', ...claims })
      .setProtectedHeader({ alg: 'HS256', typ })
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setJti('j1')
      .sign(key);
  }

  it.each([
    ['garbage', async () => 'not-a-jwt'],
    [
      'alg none',
      async (f: Awaited<ReturnType<typeof fullFlow>>) =>
        new UnsecuredJWT({ ...decodeJwt(f.access) }).encode(),
    ],
    [
      'another key',
      async (f: Awaited<ReturnType<typeof fullFlow>>) => forged({ ...decodeJwt(f.access) }, randomBytes(32)),
    ],
    [
      'another resource (aud)',
      async (f: Awaited<ReturnType<typeof fullFlow>>) =>
        forged({ ...decodeJwt(f.access), aud: 'https://other.example/mcp' }),
    ],
    [
      'the origin as aud instead of the exact resource',
      async (f: Awaited<ReturnType<typeof fullFlow>>) => forged({ ...decodeJwt(f.access), aud: srv.base }),
    ],
    [
      'aud as a list',
      async (f: Awaited<ReturnType<typeof fullFlow>>) =>
        forged({ ...decodeJwt(f.access), aud: [`${srv.base}/mcp`, 'https://other.example/mcp'] }),
    ],
    [
      'another issuer',
      async (f: Awaited<ReturnType<typeof fullFlow>>) =>
        forged({ ...decodeJwt(f.access), iss: 'https://other.example' }),
    ],
    [
      'an unknown client',
      async (f: Awaited<ReturnType<typeof fullFlow>>) =>
        forged({ ...decodeJwt(f.access), sub: 'ghost', client_id: 'ghost' }),
    ],
    [
      'a revoked or unknown grant family',
      async (f: Awaited<ReturnType<typeof fullFlow>>) =>
        forged({ ...decodeJwt(f.access), sid: 'no-such-family' }),
    ],
  ])('%s → 401 with error="invalid_token"', async (_n, make) => {
    const f = await fullFlow(srv.base);
    const tok = await make(f);
    const r = await toolsList(srv.url, tok);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(`${challenge()}, error="invalid_token"`);
    expect(r.json.error).toBe('invalid_token');
  });

  it('a token of the same key and claims is accepted (control for the forgeries above)', async () => {
    const f = await fullFlow(srv.base);
    const c = decodeJwt(f.access);
    expect((await toolsList(srv.url, await forged({ ...c }))).status).toBe(200);
  });

  it('an expired token → 401 (injected clock), one second before expiry → 200', async () => {
    const f = await fullFlow(srv.base);
    clock.advance(3600_000 - 1000);
    expect((await toolsList(srv.url, f.access)).status).toBe(200);
    clock.advance(1000);
    const r = await toolsList(srv.url, f.access);
    expect(r.status).toBe(401);
    expect(r.json.error_description).toContain('expired');
  });

  it('a token used through another Host (another audience) → 401', async () => {
    const f = await fullFlow(srv.base);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = {
      host: 'abc.trycloudflare.com',
      authorization: `Bearer ${f.access}`,
      'content-type': 'application/json',
    };
    expect(
      (
        await rawRequest(srv.url, {
          method: 'POST',
          headers: { ...headers, host: new URL(srv.base).host },
          body,
        })
      ).status,
    ).toBe(200);
    const r = await rawRequest(srv.url, { method: 'POST', headers, body });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://abc.trycloudflare.com/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('a token signed with SERVICE_OAUTH_TOKEN_SECRET verifies with that key', async () => {
    const f = await fullFlow(srv.base);
    const { jwtVerify } = await import('jose');
    const v = await jwtVerify(f.access, Buffer.from(SECRET_HEX, 'hex'), {
      algorithms: ['HS256'],
      currentDate: new Date(clock.now()),
    });
    expect(v.protectedHeader.alg).toBe('HS256');
  });
});

describe('SERVICE_SERVER_URL pins every URL (docs/oauth.md#endpoints)', () => {
  let pinned: OAuthTestServer;
  beforeAll(async () => {
    pinned = await startOAuthServer({
      workspace: ws.dir,
      env: { SERVICE_SERVER_URL: 'https://mcp.example.com/' },
    });
  });
  afterAll(async () => pinned?.close());

  it('issuer, endpoints, resource and tokens use it, without a trailing slash, whatever the Host', async () => {
    const as = await getJson(`${pinned.base}/.well-known/oauth-authorization-server`, {
      host: 'other.example',
    });
    expect(as.json.issuer).toBe('https://mcp.example.com');
    expect(as.json.authorization_endpoint).toBe('https://mcp.example.com/oauth/authorize');
    const prm = await getJson(`${pinned.base}/.well-known/oauth-protected-resource/mcp`);
    expect(prm.json.resource).toBe('https://mcp.example.com/mcp');
    expect(prm.json.authorization_servers).toEqual(['https://mcp.example.com']);
    const f = await fullFlow(pinned.base, { resource: 'https://mcp.example.com/mcp' });
    expect(decodeJwt(f.access)).toMatchObject({
      iss: 'https://mcp.example.com',
      aud: 'https://mcp.example.com/mcp',
    });
    expect((await toolsList(pinned.url, f.access)).status).toBe(200);
  });
});
