// GET/POST /oauth/authorize over real HTTP (the page, the redirect with a code; password, PKCE
// S256, exact redirect URIs): docs/oauth.md#the-authorization-page (check order,
// page vs redirect errors, resource spellings, the page's name/host/CSRF/headers), the POST
// (constant-time password, 401 form again, backoff and lock, 302 with code/state/iss);
// password limits per page and per client (docs/design-notes.md#password-attempts: no global lock;
// test/oauth/oauth-pressure.test.ts has the attacker scenarios).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorizeUrl,
  CALLBACK,
  getPage,
  pkce,
  PASSWORD,
  registerPublic,
  startOAuthServer,
  submitForm,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
let srv: OAuthTestServer;
let clock: ManualClock;
let clientId: string;
const { challenge } = pkce();

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  clock = new ManualClock();
  srv = await startOAuthServer({ workspace: ws.dir, clock });
  clientId = await registerPublic(srv.base, CALLBACK, { client_name: '<b>Claude</b> & "friends"' });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

function params(over: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    ...over,
  };
}
const open = (over: Record<string, string | undefined> = {}) => getPage(authorizeUrl(srv.base, params(over)));

describe('the password page (docs/oauth.md#the-authorization-page)', () => {
  it('shows the client name (escaped) and the redirect host, with a CSRF handle and accessible labels', async () => {
    const p = await open();
    expect(p.status).toBe(200);
    expect(p.headers.get('content-type')).toMatch(/^text\/html/);
    expect(p.html).toContain('&lt;b&gt;Claude&lt;/b&gt; &amp; &quot;friends&quot;');
    expect(p.html).not.toContain('<b>Claude</b>');
    expect(p.html).toContain('127.0.0.1:9');
    expect(p.handle).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.html).toMatch(/<label for="password">/);
    expect(p.html).toMatch(/<input id="password" name="password" type="password"/);
    expect(p.html).toContain('name="viewport" content="width=device-width, initial-scale=1"');
    expect(p.html).toContain('<html lang="en">');
    expect(p.html).not.toMatch(/<script/i);
  });

  it('is sent with frame-ancestors none, X-Frame-Options DENY and no-store (RFC 9700 §4.16)', async () => {
    const p = await open();
    const csp = p.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:9");
    expect(p.headers.get('x-frame-options')).toBe('DENY');
    expect(p.headers.get('cache-control')).toBe('no-store');
    // same-origin, not no-referrer: the form's POST must carry a real Origin for the same-origin check.
    expect(p.headers.get('referrer-policy')).toBe('same-origin');
  });

  it.each([
    ['http://127.0.0.1:9/callback', true],
    ['http://127.0.0.1:9/callback/', false],
    ['http://localhost:9/callback', false],
    ['http://127.0.0.1:9/callback?extra=1', false],
    ['http://127.0.0.1:10/callback', false],
  ])('redirect_uri %s matches exactly: %s (docs/oauth.md#redirect-uris)', async (uri, ok) => {
    const p = await open({ redirect_uri: uri });
    expect(p.status).toBe(ok ? 200 : 400);
    if (!ok) {
      expect(p.location).toBeUndefined();
      expect(p.html).toContain('is not registered for this application');
    }
  });

  it.each([
    ['unknown client_id', { client_id: 'nope' }, 'not registered'],
    ['missing client_id', { client_id: undefined }, 'no client_id'],
    ['missing redirect_uri', { redirect_uri: undefined }, 'no redirect_uri'],
    [
      'http://evil.example/cb as redirect_uri',
      { redirect_uri: 'http://evil.example/cb' },
      'is not registered',
    ],
  ])('%s → an HTML error page, never a redirect (RFC 6749 §4.1.2.1)', async (_n, over, text) => {
    const p = await open(over);
    expect(p.status).toBe(400);
    expect(p.location).toBeUndefined();
    expect(p.headers.get('content-type')).toMatch(/^text\/html/);
    expect(p.headers.get('x-frame-options')).toBe('DENY');
    expect(p.html).toContain(text);
  });

  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['PKCE missing', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['PKCE plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['PKCE method missing', { code_challenge_method: undefined }, 'invalid_request'],
    ['a short challenge', { code_challenge: 'abc' }, 'invalid_request'],
    ['resource of another server', { resource: 'https://other.example/mcp' }, 'invalid_target'],
    ['resource with a fragment', { resource: 'http://127.0.0.1:PORT/mcp#x' }, 'invalid_target'],
    ['a malformed scope', { scope: 'a\\b' }, 'invalid_scope'],
  ])(
    '%s → an HTML page with error=%s, never a redirect (no open redirector before the operator acts; RFC 9700 §4.11.2)',
    async (_n, over, code) => {
      const port = new URL(srv.base).port;
      const fixed = Object.fromEntries(Object.entries(over).map(([k, v]) => [k, v?.replace('PORT', port)]));
      const p = await open(fixed);
      expect(p.status).toBe(400);
      expect(p.location).toBeUndefined();
      expect(p.headers.get('content-type')).toMatch(/^text\/html/);
      expect(p.html).toContain(code);
      expect(p.handle).toBeUndefined();
    },
  );

  it('a repeated parameter is invalid_request, on a page (RFC 6749 §3.1)', async () => {
    const url = authorizeUrl(srv.base, params()) + '&state=again';
    const p = await getPage(url);
    expect(p.location).toBeUndefined();
    expect(p.html).toContain('invalid_request');
  });

  it.each(['/mcp', '/mcp/', '', '/'])('resource <base>%s names this server', async (suffix) => {
    const p = await open({ resource: srv.base + suffix });
    expect(p.status).toBe(200);
  });
});

describe('submitting the form (docs/oauth.md#the-authorization-page)', () => {
  it('a private-use scheme redirect (RFC 8252 §7.1, Cursor-style) gets its code on that scheme, form-action allows it', async () => {
    const cursor = 'cursor://anysphere.cursor-retrieval/oauth/user-workbench/callback';
    const id = await registerPublic(srv.base, cursor, { client_name: 'Cursor' });
    const p = await open({ client_id: id, redirect_uri: cursor });
    expect(p.status).toBe(200);
    expect(p.html).toContain('cursor://anysphere.cursor-retrieval');
    expect(p.headers.get('content-security-policy')).toContain("form-action 'self' cursor:");
    const r = await submitForm(srv.base, { request: p.handle as string, password: PASSWORD });
    expect(r.status).toBe(302);
    expect(r.location).toMatch(
      /^cursor:\/\/anysphere\.cursor-retrieval\/oauth\/user-workbench\/callback\?code=[\w-]{43}&state=xyz&iss=/,
    );
  });

  it('a redirect URI with its own query keeps it, and the parameters are appended (RFC 6749 §3.1.2)', async () => {
    const withQuery = 'http://localhost:9/cb?tenant=a%20b';
    const id = await registerPublic(srv.base, withQuery);
    const p = await open({ client_id: id, redirect_uri: withQuery });
    const r = await submitForm(srv.base, { request: p.handle as string, password: PASSWORD });
    const loc = new URL(r.location as string);
    expect(loc.searchParams.get('tenant')).toBe('a b');
    expect(loc.searchParams.get('code')).toBeTruthy();
  });

  it('the right password → 302 to the redirect URI with code, state and iss', async () => {
    const p = await open();
    const r = await submitForm(srv.base, {
      request: p.handle as string,
      password: PASSWORD,
      action: 'approve',
    });
    expect(r.status).toBe(302);
    const loc = new URL(r.location as string);
    expect(loc.origin + loc.pathname).toBe(CALLBACK);
    expect(loc.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(loc.searchParams.get('state')).toBe('xyz');
    expect(loc.searchParams.get('iss')).toBe(srv.base);
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('a handle works once (CSRF token is single use) and a forged one is refused with a page', async () => {
    const p = await open();
    await submitForm(srv.base, { request: p.handle as string, password: PASSWORD });
    const again = await submitForm(srv.base, { request: p.handle as string, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(again.location).toBeUndefined();
    expect(again.html).toContain('expired or was already used');
    const forged = await submitForm(srv.base, { request: 'A'.repeat(43), password: PASSWORD });
    expect(forged.status).toBe(400);
    const missing = await submitForm(srv.base, { password: PASSWORD });
    expect(missing.status).toBe(400);
  });

  it('a handle expires after 10 minutes (injected clock)', async () => {
    const p = await open();
    clock.advance(10 * 60_000);
    const r = await submitForm(srv.base, { request: p.handle as string, password: PASSWORD });
    expect(r.status).toBe(400);
  });

  it('Deny → 302 with error=access_denied and state', async () => {
    const p = await open();
    const r = await submitForm(srv.base, { request: p.handle as string, action: 'deny' });
    expect(r.status).toBe(302);
    const loc = new URL(r.location as string);
    expect(loc.searchParams.get('error')).toBe('access_denied');
    expect(loc.searchParams.get('state')).toBe('xyz');
  });

  it('a wrong password shows the form again with 401 and an announced message', async () => {
    const p = await open();
    const r = await submitForm(srv.base, { request: p.handle as string, password: 'wrong' });
    expect(r.status).toBe(401);
    expect(r.location).toBeUndefined();
    expect(r.html).toContain('role="alert"');
    expect(r.html).toContain('Wrong password');
    expect(r.html).toContain('aria-describedby="form-message"');
    expect(r.handle).toBe(p.handle);
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    // The same page still accepts the right password afterwards (and this resets the count).
    const ok = await submitForm(srv.base, { request: p.handle as string, password: PASSWORD });
    expect(ok.status).toBe(302);
  });

  it('the form must be form-encoded', async () => {
    const r = await fetch(`${srv.base}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(400);
  });
});

describe('password limits per page and per client (no brute force, no global lock: docs/design-notes.md#password-attempts)', () => {
  it('configured password: a page is withdrawn after 5 failures; its client then waits 1, 2, 4, 8, 16 s and 60 s after 10; another client is unaffected; a success resets', async () => {
    const attempt = (p: { handle?: string }, password: string) =>
      submitForm(srv.base, { request: p.handle as string, password });
    const p1 = await open();
    for (let i = 1; i <= 4; i++) expect((await attempt(p1, `bad${i}`)).status).toBe(401);
    const fifth = await attempt(p1, 'bad5');
    expect(fifth.status).toBe(429);
    expect(fifth.html).toContain('no longer accepts any');
    // The withdrawn page gives no code, even for the right password.
    const gone = await attempt(p1, PASSWORD);
    expect(gone.location).toBeUndefined();
    expect(gone.html).toContain('expired or was already used');
    // The client has 5 failures: its next attempt, on any page, waits 1 s; the right password is not checked.
    const p2 = await open();
    const blocked = await attempt(p2, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toBe('1');
    expect(blocked.html).toContain('for this application');
    // Someone else's failures never block another client (behind a tunnel everyone is 127.0.0.1).
    const other = await registerPublic(srv.base, CALLBACK);
    const otherPage = await open({ client_id: other });
    expect((await attempt(otherPage, PASSWORD)).status).toBe(302);
    for (const [wait, next] of [
      [1, 2],
      [2, 4],
      [4, 8],
      [8, 16],
    ]) {
      clock.advance((wait as number) * 1000);
      const r = await attempt(p2, 'bad');
      expect(r.status).toBe(401);
      expect(r.html).toContain(`Wait ${next} seconds`);
    }
    clock.advance(16_000 - 1);
    expect((await attempt(p2, 'bad')).status).toBe(429);
    clock.advance(1);
    expect((await attempt(p2, 'bad10')).html).toContain('no longer accepts any'); // p2's fifth
    const p3 = await open();
    const locked = await attempt(p3, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('60');
    clock.advance(60_000);
    // Never permanent: after the wait the right password works, and resets the client's count.
    expect((await attempt(p3, PASSWORD)).status).toBe(302);
    expect(srv.oauth.context.attempts.failureCount(clientId)).toBe(0);
  });
});
