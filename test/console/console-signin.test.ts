// "Approve from the console" on the OAuth authorization page (docs/console.md#sign-in), against the built server
// in OAuth mode: the page offers it, shows a pairing code and waits; the console lists the sign-in with the
// client's name and redirect host and approves it only with that code; the wait URL then redirects with a code
// that the token endpoint exchanges. Three wrong codes withdraw the request (the page redirects with
// access_denied); wrong passwords for the same client do not slow this path.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorizeUrl,
  CALLBACK,
  getPage,
  pkce,
  registerPublic,
  startOAuthBin,
  submitForm,
  token,
  toolsList,
} from '../e2e/oauth-helpers.js';
import { consoleLink } from './support.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Session {
  port: number;
  cookie: string;
  csrf: string;
}

function consoleCall(
  s: Session,
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent: false, // a connection per request: a kept-alive one the console closed (5 s) would be a reset
        host: '127.0.0.1',
        port: s.port,
        method,
        path: p,
        headers: {
          host: `127.0.0.1:${s.port}`,
          origin: `http://127.0.0.1:${s.port}`,
          cookie: s.cookie,
          'x-csrf-token': s.csrf,
          'content-type': 'application/json',
        },
      },
      (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (t += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: t ? JSON.parse(t) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function openConsole(stderr: string): Promise<Session> {
  const link = new URL(consoleLink(stderr));
  const port = Number(link.port);
  const opened = await fetch(link, { redirect: 'manual' });
  const cookie = String(opened.headers.get('set-cookie')).split(';')[0] as string;
  const page = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).text();
  return { port, cookie, csrf: /name="csrf" content="([^"]+)"/.exec(page)?.[1] as string };
}

describe('sign-in approved from the console', () => {
  let ws: TempWorkspace;
  let srv: SpawnedServer;
  let con: Session;

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    srv = await startOAuthBin(ws.dir);
    con = await openConsole(srv.stderr());
  }, 120_000);

  afterAll(async () => {
    await srv?.stop();
    ws?.cleanup();
  });

  /** Opens the authorization page and asks the console; returns the pairing code, wait URL and PKCE verifier. */
  async function askConsole(clientId: string) {
    const p = pkce();
    const page = await getPage(
      authorizeUrl(srv.base, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: CALLBACK,
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
        state: 'st',
        resource: `${srv.base}/mcp`,
      }),
    );
    expect(page.status).toBe(200);
    expect(page.html).toContain('Approve from the console');
    const waiting = await submitForm(srv.base, { request: page.handle as string, action: 'console' });
    expect(waiting.status).toBe(200);
    const code = /class="code"[^>]*>([A-Z0-9-]+)</.exec(waiting.html)?.[1] as string;
    expect(code).toMatch(/^[A-Z0-9]{3}-[A-Z0-9]{3}$/);
    const wait = /http-equiv="refresh" content="\d+;url=([^"]+)"/.exec(waiting.html)?.[1] as string;
    expect(wait).toMatch(/^\/oauth\/authorize\/wait\?t=/);
    const state = await consoleCall(con, 'GET', '/api/state');
    const req = state.json.approvals.find(
      (a: { kind: string; state: string }) => a.kind === 'signin' && a.state === 'pending',
    );
    expect(req).toMatchObject({
      client: 'Test Client',
      subject: '127.0.0.1:9',
      needsCode: true,
    });
    return {
      code,
      wait: `${srv.base}${wait.replace(/&amp;/g, '&')}`,
      verifier: p.verifier,
      id: req.id as string,
    };
  }

  it('the right code approves; the page redirects with a code the token endpoint exchanges', async () => {
    const clientId = await registerPublic(srv.base);
    // Wrong passwords for this client first: the console path does not count them.
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) {
      const page = await getPage(
        authorizeUrl(srv.base, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: CALLBACK,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }),
      );
      const wrong = await submitForm(srv.base, {
        request: page.handle as string,
        password: 'nope',
        action: 'approve',
      });
      statuses.push(wrong.status);
    }
    // Counted for this client (oauth/grants/attempts.ts); the console path is taken before that count is consulted.
    expect(statuses).toEqual([401, 401]);
    // Both are listed in the console's activity, beside refused tokens.
    const listed = (await consoleCall(con, 'GET', '/api/state')).json.activity.filter(
      (e: { kind: string; what?: string }) =>
        e.kind === 'refused' && e.what === 'wrong password on the authorization page',
    );
    expect(listed).toHaveLength(2);
    const a = await askConsole(clientId);
    // Nothing decided yet: the wait answers the same page again after its hold (CONSOLE_WAIT_MS), not a redirect.
    const pending = await fetch(a.wait, { redirect: 'manual' });
    expect(pending.status).toBe(200);
    expect(await pending.text()).toContain(a.code);
    const wrong = await consoleCall(con, 'POST', `/api/approvals/${a.id}/decide`, {
      action: 'approve',
      code: 'AAA-AAA',
    });
    expect(wrong.status).toBe(403);
    expect(wrong.json.error).toBe('wrong_code');
    const ok = await consoleCall(con, 'POST', `/api/approvals/${a.id}/decide`, {
      action: 'approve',
      code: a.code.toLowerCase().replace('-', ' '),
    });
    expect(ok.status).toBe(200);
    const back = await fetch(a.wait, { redirect: 'manual' });
    expect(back.status).toBe(302);
    const cb = new URL(back.headers.get('location') as string).searchParams;
    expect(cb.get('state')).toBe('st');
    const t = await token(srv.base, {
      grant_type: 'authorization_code',
      code: cb.get('code') ?? '',
      redirect_uri: CALLBACK,
      client_id: clientId,
      code_verifier: a.verifier,
      resource: `${srv.base}/mcp`,
    });
    expect(t.status).toBe(200);
    expect((await toolsList(srv.url, t.json.access_token)).status).toBe(200);
  }, 120_000);

  it('three wrong codes withdraw the request; the page then redirects with access_denied', async () => {
    const clientId = await registerPublic(srv.base);
    const a = await askConsole(clientId);
    const tries = [];
    for (let i = 0; i < 3; i++)
      tries.push(
        await consoleCall(con, 'POST', `/api/approvals/${a.id}/decide`, {
          action: 'approve',
          code: 'ZZZ-ZZZ',
        }),
      );
    expect(tries.map((t) => t.json.error)).toEqual(['wrong_code', 'wrong_code', 'withdrawn']);
    const late = await consoleCall(con, 'POST', `/api/approvals/${a.id}/decide`, {
      action: 'approve',
      code: a.code,
    });
    expect(late.status).toBe(409);
    const back = await fetch(a.wait, { redirect: 'manual' });
    expect(back.status).toBe(302);
    expect(new URL(back.headers.get('location') as string).searchParams.get('error')).toBe('access_denied');
  }, 120_000);
});
