// POST /oauth/token over real HTTP and its attack matrix (registered auth method, codes single use and valid
// five minutes, PKCE S256); docs/oauth.md#codes (spent on first presentation even when failing; bound to
// client, redirect URI, challenge, resource) and docs/oauth.md#tokens (RFC 6749 errors as no-store JSON;
// refresh tokens rotated, reuse revokes the family); RFC 6749 §2.3.1, §4.1.3, §5.1, §5.2, §6; RFC 7636 §4.6;
// RFC 8707 §2.2; RFC 9700 §4.14.2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../src/core/clock.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorize,
  CALLBACK,
  fullFlow,
  pkce,
  register,
  registerPublic,
  startOAuthServer,
  token,
  toolsList,
  type OAuthTestServer,
  type JsonReply,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
let srv: OAuthTestServer;
let clock: ManualClock;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  clock = new ManualClock(Date.now());
  srv = await startOAuthServer({ workspace: ws.dir, clock });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

/** A fresh public client and a code for it. */
async function codeFor(opts: { redirectUri?: string; resource?: string } = {}) {
  const redirectUri = opts.redirectUri ?? CALLBACK;
  const clientId = await registerPublic(srv.base, redirectUri);
  const p = pkce();
  const cb = await authorize(srv.base, {
    clientId,
    redirectUri,
    challenge: p.challenge,
    resource: opts.resource,
  });
  return { clientId, redirectUri, verifier: p.verifier, code: cb.get('code') as string };
}

function exchange(
  c: { clientId: string; redirectUri: string; verifier: string; code: string },
  over: Record<string, string | undefined> = {},
  headers: Record<string, string> = {},
) {
  return token(
    srv.base,
    {
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: c.redirectUri,
      client_id: c.clientId,
      code_verifier: c.verifier,
      ...over,
    },
    headers,
  );
}

function expectError(r: JsonReply, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.json.error).toBe(code);
  expect(typeof r.json.error_description).toBe('string');
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
}

describe('a good exchange (RFC 6749 §5.1; docs/oauth.md#access-tokens)', () => {
  it('returns a Bearer HS256 JWT bound to the exact resource and the client, and a refresh token, no-store', async () => {
    const c = await codeFor();
    const r = await exchange(c, { resource: `${srv.base}/mcp` });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(typeof r.json.refresh_token).toBe('string');
    const claims = decodeJwt(r.json.access_token);
    expect(claims).toMatchObject({
      iss: srv.base,
      aud: `${srv.base}/mcp`,
      sub: c.clientId,
      client_id: c.clientId,
    });
    expect(claims.exp! - claims.iat!).toBe(86400);
    expect(typeof claims.jti).toBe('string');
    expect((await toolsList(srv.url, r.json.access_token)).status).toBe(200);
  });
});

describe('the attack matrix', () => {
  it('code replay: the second presentation fails and revokes the tokens of the first (RFC 6749 §4.1.2)', async () => {
    const c = await codeFor();
    const first = await exchange(c);
    expect(first.status).toBe(200);
    expect((await toolsList(srv.url, first.json.access_token)).status).toBe(200);
    expectError(await exchange(c), 400, 'invalid_grant');
    expect((await toolsList(srv.url, first.json.access_token)).status).toBe(401);
    expectError(
      await token(srv.base, {
        grant_type: 'refresh_token',
        refresh_token: first.json.refresh_token,
        client_id: c.clientId,
      }),
      400,
      'invalid_grant',
    );
  });

  it('a code is spent by a failing exchange too (docs/oauth.md#codes)', async () => {
    const c = await codeFor();
    expectError(await exchange(c, { code_verifier: 'x'.repeat(43) }), 400, 'invalid_grant');
    expectError(await exchange(c), 400, 'invalid_grant');
  });

  it('a code is spent even when client authentication fails', async () => {
    const c = await codeFor();
    expectError(await exchange(c, { client_id: 'unknown' }), 401, 'invalid_client');
    expectError(await exchange(c), 400, 'invalid_grant');
  });

  it('a code from another client → invalid_grant', async () => {
    const c = await codeFor();
    const other = await registerPublic(srv.base);
    expectError(await exchange(c, { client_id: other }), 400, 'invalid_grant');
  });

  it('a swapped redirect URI → invalid_grant', async () => {
    const clientId = (await register(srv.base, { redirect_uris: [CALLBACK, 'http://localhost:9/other'] }))
      .json.client_id;
    const p = pkce();
    const cb = await authorize(srv.base, { clientId, redirectUri: CALLBACK, challenge: p.challenge });
    expectError(
      await exchange({
        clientId,
        redirectUri: 'http://localhost:9/other',
        verifier: p.verifier,
        code: cb.get('code') as string,
      }),
      400,
      'invalid_grant',
    );
  });

  it('a missing redirect URI → invalid_request', async () => {
    const c = await codeFor();
    expectError(await exchange(c, { redirect_uri: undefined }), 400, 'invalid_request');
  });

  it('PKCE: missing verifier → invalid_request; wrong or malformed verifier → invalid_grant', async () => {
    expectError(await exchange(await codeFor(), { code_verifier: undefined }), 400, 'invalid_request');
    expectError(await exchange(await codeFor(), { code_verifier: pkce().verifier }), 400, 'invalid_grant');
    expectError(await exchange(await codeFor(), { code_verifier: 'short' }), 400, 'invalid_grant');
  });

  it('PKCE plain: the challenge itself as verifier does not pass', async () => {
    const clientId = await registerPublic(srv.base);
    const p = pkce();
    const cb = await authorize(srv.base, { clientId, challenge: p.challenge });
    expectError(
      await exchange({
        clientId,
        redirectUri: CALLBACK,
        verifier: p.challenge,
        code: cb.get('code') as string,
      }),
      400,
      'invalid_grant',
    );
  });

  it('resource of another server at the token endpoint → invalid_target', async () => {
    expectError(
      await exchange(await codeFor(), { resource: 'https://other.example/mcp' }),
      400,
      'invalid_target',
    );
  });

  it('a code older than five minutes → invalid_grant (injected clock; docs/oauth.md#codes)', async () => {
    const c = await codeFor();
    clock.advance(5 * 60_000);
    expectError(await exchange(c), 400, 'invalid_grant');
  });

  it('a code of 4:59 still works', async () => {
    const c = await codeFor();
    clock.advance(5 * 60_000 - 1000);
    expect((await exchange(c)).status).toBe(200);
  });

  it('an unknown code → invalid_grant', async () => {
    const c = await codeFor();
    expectError(await exchange(c, { code: 'A'.repeat(43) }), 400, 'invalid_grant');
  });
});

describe('client authentication with the registered method (docs/oauth.md#registration; RFC 6749 §2.3.1)', () => {
  async function confidential(method: 'client_secret_post' | 'client_secret_basic') {
    const reg = await register(srv.base, { redirect_uris: [CALLBACK], token_endpoint_auth_method: method });
    const p = pkce();
    const cb = await authorize(srv.base, { clientId: reg.json.client_id, challenge: p.challenge });
    return {
      id: reg.json.client_id as string,
      secret: reg.json.client_secret as string,
      verifier: p.verifier,
      code: cb.get('code') as string,
    };
  }
  const basic = (id: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
  });
  const base = (c: { verifier: string; code: string }) => ({
    grant_type: 'authorization_code',
    code: c.code,
    redirect_uri: CALLBACK,
    code_verifier: c.verifier,
  });

  it('client_secret_post works with the secret in the body', async () => {
    const c = await confidential('client_secret_post');
    expect((await token(srv.base, { ...base(c), client_id: c.id, client_secret: c.secret })).status).toBe(
      200,
    );
  });
  it('client_secret_basic works with Basic', async () => {
    const c = await confidential('client_secret_basic');
    expect((await token(srv.base, base(c), basic(c.id, c.secret))).status).toBe(200);
  });
  it('a client registered for post may not use basic, nor none', async () => {
    const c = await confidential('client_secret_post');
    const r = await token(srv.base, base(c), basic(c.id, c.secret));
    expectError(r, 401, 'invalid_client');
    expect(r.headers.get('www-authenticate')).toMatch(/^Basic /);
    const c2 = await confidential('client_secret_post');
    expectError(await token(srv.base, { ...base(c2), client_id: c2.id }), 401, 'invalid_client');
  });
  it('a client registered for basic may not use post', async () => {
    const c = await confidential('client_secret_basic');
    expectError(
      await token(srv.base, { ...base(c), client_id: c.id, client_secret: c.secret }),
      401,
      'invalid_client',
    );
  });
  it('a public client may not send a secret', async () => {
    const c = await codeFor();
    expectError(await exchange(c, { client_secret: 'whatever' }), 401, 'invalid_client');
  });
  it('a wrong secret → 401 invalid_client', async () => {
    const c = await confidential('client_secret_basic');
    expectError(await token(srv.base, base(c), basic(c.id, 'wrong')), 401, 'invalid_client');
  });
  it('two methods at once → invalid_request (RFC 6749 §2.3)', async () => {
    const c = await confidential('client_secret_basic');
    expectError(
      await token(srv.base, { ...base(c), client_secret: c.secret }, basic(c.id, c.secret)),
      400,
      'invalid_request',
    );
  });
});

describe('request shape (RFC 6749 §3.2, §5.2)', () => {
  it('unsupported grant types, missing grant type, repeated parameters, wrong media type', async () => {
    const clientId = await registerPublic(srv.base);
    expectError(
      await token(srv.base, { grant_type: 'client_credentials', client_id: clientId }),
      400,
      'unsupported_grant_type',
    );
    expectError(
      await token(srv.base, { grant_type: 'password', client_id: clientId }),
      400,
      'unsupported_grant_type',
    );
    expectError(await token(srv.base, { client_id: clientId }), 400, 'invalid_request');
    const dup = await fetch(`${srv.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=a&code=b&client_id=${clientId}`,
    });
    expect(dup.status).toBe(400);
    expect(((await dup.json()) as { error: string }).error).toBe('invalid_request');
    const json = await fetch(`${srv.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toBe('invalid_request');
    const get = await fetch(`${srv.base}/oauth/token`);
    expect(get.status).toBe(405);
  });
  it('a client that registered only authorization_code gets no refresh token and may not refresh', async () => {
    const clientId = (
      await register(srv.base, { redirect_uris: [CALLBACK], grant_types: ['authorization_code'] })
    ).json.client_id;
    const p = pkce();
    const cb = await authorize(srv.base, { clientId, challenge: p.challenge });
    const r = await exchange({
      clientId,
      redirectUri: CALLBACK,
      verifier: p.verifier,
      code: cb.get('code') as string,
    });
    expect(r.status).toBe(200);
    expect(r.json.refresh_token).toBeUndefined();
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId }),
      400,
      'unauthorized_client',
    );
  });
});

describe('refresh tokens: rotated on every use, reuse revokes the family (docs/oauth.md#refresh-tokens; RFC 9700 §4.14.2)', () => {
  it('rotation: each refresh returns a new refresh token and a working access token', async () => {
    const f = await fullFlow(srv.base);
    const r1 = await token(srv.base, {
      grant_type: 'refresh_token',
      refresh_token: f.refresh,
      client_id: f.clientId,
      resource: `${srv.base}/mcp`,
    });
    expect(r1.status).toBe(200);
    expect(r1.json.refresh_token).not.toBe(f.refresh);
    expect((await toolsList(srv.url, r1.json.access_token)).status).toBe(200);
    const r2 = await token(srv.base, {
      grant_type: 'refresh_token',
      refresh_token: r1.json.refresh_token,
      client_id: f.clientId,
    });
    expect(r2.status).toBe(200);
  });

  it('reuse of a rotated token revokes the whole family, access tokens included', async () => {
    const f = await fullFlow(srv.base);
    const r1 = await token(srv.base, {
      grant_type: 'refresh_token',
      refresh_token: f.refresh,
      client_id: f.clientId,
    });
    expect(r1.status).toBe(200);
    // The attacker (or a confused client) presents the old one.
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', refresh_token: f.refresh, client_id: f.clientId }),
      400,
      'invalid_grant',
    );
    // The legitimate newest token is dead too, and so are the access tokens of the family.
    expectError(
      await token(srv.base, {
        grant_type: 'refresh_token',
        refresh_token: r1.json.refresh_token,
        client_id: f.clientId,
      }),
      400,
      'invalid_grant',
    );
    expect((await toolsList(srv.url, r1.json.access_token)).status).toBe(401);
    expect((await toolsList(srv.url, f.access)).status).toBe(401);
  });

  it('a refresh token presented by another client fails and revokes the family', async () => {
    const f = await fullFlow(srv.base);
    const thief = await registerPublic(srv.base);
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', refresh_token: f.refresh, client_id: thief }),
      400,
      'invalid_grant',
    );
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', refresh_token: f.refresh, client_id: f.clientId }),
      400,
      'invalid_grant',
    );
  });

  it('a refresh with the resource of another server → invalid_target', async () => {
    const f = await fullFlow(srv.base);
    expectError(
      await token(srv.base, {
        grant_type: 'refresh_token',
        refresh_token: f.refresh,
        client_id: f.clientId,
        resource: 'https://other.example/mcp',
      }),
      400,
      'invalid_target',
    );
  });

  it('refresh tokens expire after 30 days (docs/design-notes.md#limits)', async () => {
    const f = await fullFlow(srv.base);
    clock.advance(30 * 24 * 3600_000);
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', refresh_token: f.refresh, client_id: f.clientId }),
      400,
      'invalid_grant',
    );
  });

  it('a missing or unknown refresh token', async () => {
    const clientId = await registerPublic(srv.base);
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', client_id: clientId }),
      400,
      'invalid_request',
    );
    expectError(
      await token(srv.base, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: clientId }),
      400,
      'invalid_grant',
    );
  });
});
