// The password page under attack ("the OAuth password page stays usable for the operator while an attacker
// guesses"; docs/oauth.md#the-authorization-page: no brute force; docs/design-notes.md#password-attempts).
// Behind a tunnel everyone is 127.0.0.1, so a global lock of wrong passwords let anyone lock the operator
// out; now a generated password has only a per-attempt delay, and a configured one is limited per page, per
// client and by a global budget whose reserve only clients that have not been failing may spend
// (src/oauth/grants/attempts.ts). Real HTTP on 127.0.0.1; attackers are bounded loops; nothing waits on or asserts
// elapsed time (the global budget runs on an injected clock).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  GLOBAL_BURST,
  GLOBAL_REFILL_MS,
  GLOBAL_RESERVE,
  PAGE_MAX_FAILURES,
} from '../../src/oauth/grants/attempts.js';
import { MAX_PENDING } from '../../src/oauth/grants/pending.js';
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
  token,
  toolsList,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
});
afterAll(() => ws?.cleanup());

/** Opens an authorization page for `clientId`; returns its handle. */
async function openPage(base: string, clientId: string, challenge = pkce().challenge): Promise<string> {
  const p = await getPage(
    authorizeUrl(base, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st',
    }),
  );
  if (p.status !== 200 || !p.handle) throw new Error(`no page: ${p.status} ${p.html.slice(0, 300)}`);
  return p.handle;
}

const guess = (base: string, handle: string, password: string) =>
  submitForm(base, { request: handle, password, action: 'approve' });

/**
 * `loops` attackers sending wrong passwords one after another from their own client, each on a page it opens
 * again whenever the last one is withdrawn, until `stop()` or `max` guesses each. `failures(n)` resolves once
 * n guesses were answered.
 */
function attack(base: string, clientId: string, loops: number, max: number) {
  const statuses: number[] = [];
  const codes: string[] = [];
  let stopped = false;
  let exhausted = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const run = async () => {
    let handle = await openPage(base, clientId);
    for (let i = 0; i < max && !stopped; i++) {
      const r = await guess(base, handle, `wrong-${i}`);
      statuses.push(r.status);
      if (r.location?.includes('code=')) codes.push(r.location);
      for (const w of waiters.filter((x) => statuses.length >= x.n)) w.resolve();
      // The page was withdrawn (or answered): the attacker opens another.
      if (!r.html.includes('name="request"')) handle = await openPage(base, clientId);
    }
    if (!stopped) exhausted++;
  };
  const all = Promise.all(Array.from({ length: loops }, run));
  return {
    statuses,
    codes,
    failures: (n: number) =>
      new Promise<void>((resolve) => (statuses.length >= n ? resolve() : waiters.push({ n, resolve }))),
    /** Loops that ran out of guesses before being stopped (0: the attack was still going). */
    exhausted: () => exhausted,
    stop: async () => {
      stopped = true;
      await all;
    },
  };
}

/** The operator's own sign-in: a page of their client, the right password, the code exchanged, tools/list. */
async function operatorSignsIn(srv: OAuthTestServer, password: string): Promise<number> {
  const clientId = await registerPublic(srv.base, CALLBACK);
  const p = pkce();
  const handle = await openPage(srv.base, clientId, p.challenge);
  const r = await guess(srv.base, handle, password);
  expect(r.status, r.html.slice(0, 300)).toBe(302);
  const code = new URL(r.location as string).searchParams.get('code') ?? '';
  const t = await token(srv.base, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CALLBACK,
    client_id: clientId,
    code_verifier: p.verifier,
    resource: `${srv.base}/mcp`,
  });
  expect(t.status).toBe(200);
  return (await toolsList(srv.url, t.json.access_token as string)).status;
}

describe('the operator signs in while an attacker sends wrong passwords continuously', () => {
  it('generated password: 4 attackers guessing without pause never see a lock (only the per-attempt delay); the operator, on their own page, gets a code, a token and tools/list', async () => {
    const srv = await startOAuthServer({ workspace: ws.dir, env: { SERVICE_OAUTH_PASSWORD: '' } });
    try {
      expect(srv.oauth.context.attempts.generated).toBe(true);
      const attacker = attack(srv.base, await registerPublic(srv.base, CALLBACK), 4, 200);
      await attacker.failures(12);
      expect(await operatorSignsIn(srv, srv.oauth.context.password)).toBe(200);
      expect(attacker.exhausted()).toBe(0); // the attack was still going when the operator got in
      await attacker.stop();
      expect(attacker.codes).toEqual([]);
      expect(new Set(attacker.statuses)).toEqual(new Set([401]));
    } finally {
      await srv.close();
    }
  });

  it('configured password: an attacker on its own client is stopped (pages withdrawn, then 429 for that client) while the operator, on another client, gets a code, a token and tools/list', async () => {
    const srv = await startOAuthServer({ workspace: ws.dir });
    try {
      expect(srv.oauth.context.attempts.generated).toBe(false);
      const attacker = attack(srv.base, await registerPublic(srv.base, CALLBACK), 4, 200);
      await attacker.failures(20);
      expect(await operatorSignsIn(srv, PASSWORD)).toBe(200);
      expect(attacker.exhausted()).toBe(0);
      await attacker.stop();
      expect(attacker.codes).toEqual([]);
      expect(attacker.statuses).toContain(429);
      expect(attacker.statuses.every((s) => s === 401 || s === 429)).toBe(true);
    } finally {
      await srv.close();
    }
  });
});

describe("the operator's page is not pushed out of the pending store (at most 256 wait)", () => {
  it(`an attacker opening ${MAX_PENDING + 50} pages for its own client, and failing on some, evicts its own pages; the operator's page still gives a code`, async () => {
    const srv = await startOAuthServer({ workspace: ws.dir, passwordDelayMs: 0 });
    try {
      const op = await registerPublic(srv.base, CALLBACK);
      const mine = await openPage(srv.base, op);
      const attacker = await registerPublic(srv.base, CALLBACK);
      const theirs: string[] = [];
      for (let i = 0; i < MAX_PENDING + 50; i++) {
        theirs.push(await openPage(srv.base, attacker));
        if (i % 10 === 0) await guess(srv.base, theirs[i] as string, 'wrong');
      }
      // The oldest of the attacker's pages are gone; the operator's, older than all of them, is not.
      expect((await guess(srv.base, theirs[1] as string, PASSWORD)).status).toBe(400);
      expect((await guess(srv.base, mine, PASSWORD)).status).toBe(302);
    } finally {
      await srv.close();
    }
  });
});

describe("a flood of registrations does not push out the operator's waiting page (docs/design-notes.md#limits, here 4 clients)", () => {
  it('guessers registering a new client per guess, and page-less registrations, evict each other; the operator, still typing, gets a code', async () => {
    const srv = await startOAuthServer({ workspace: ws.dir, passwordDelayMs: 0, maxDynamicClients: 4 });
    try {
      const op = await registerPublic(srv.base, CALLBACK);
      const mine = await openPage(srv.base, op);
      const guessers: string[] = [];
      for (let i = 0; i < 12; i++) {
        const c = await registerPublic(srv.base, CALLBACK);
        guessers.push(c);
        expect((await guess(srv.base, await openPage(srv.base, c), `wrong-${i}`)).status).toBe(401);
        await registerPublic(srv.base, CALLBACK);
      }
      // The registry holds 4: the flood went through it three times over, yet the operator's client stayed.
      expect(srv.oauth.context.clients.get(guessers[0])).toBeUndefined();
      expect(srv.oauth.context.clients.get(op)).toBeDefined();
      expect((await guess(srv.base, mine, PASSWORD)).status).toBe(302);
    } finally {
      await srv.close();
    }
  });

  it("the pre-registered client's page outlasts a flood of pages opened (without a guess) for new clients", async () => {
    const srv = await startOAuthServer({
      workspace: ws.dir,
      passwordDelayMs: 0,
      env: { SERVICE_OAUTH_CLIENT_ID: 'operator-app', SERVICE_OAUTH_REDIRECT_URIS: CALLBACK },
    });
    try {
      const mine = await openPage(srv.base, 'operator-app');
      let first = '';
      for (let i = 0; i < MAX_PENDING + 20; i++) {
        const h = await openPage(srv.base, await registerPublic(srv.base, CALLBACK));
        first ||= h;
      }
      expect((await guess(srv.base, first, PASSWORD)).status).toBe(400);
      expect((await guess(srv.base, mine, PASSWORD)).status).toBe(302);
    } finally {
      await srv.close();
    }
  });
});

describe('the configured-password limits still stop an attacker', () => {
  let clock: ManualClock;
  let srv: OAuthTestServer;
  beforeAll(async () => {
    clock = new ManualClock();
    srv = await startOAuthServer({ workspace: ws.dir, clock, passwordDelayMs: 0 });
  });
  afterAll(async () => srv?.close());

  it(`one pending request takes ${PAGE_MAX_FAILURES} wrong passwords, then it is withdrawn: the right password on it gives no code`, async () => {
    const client = await registerPublic(srv.base, CALLBACK);
    const handle = await openPage(srv.base, client);
    for (let i = 1; i < PAGE_MAX_FAILURES; i++)
      expect((await guess(srv.base, handle, `w${i}`)).status).toBe(401);
    const last = await guess(srv.base, handle, 'w-last');
    expect(last.status).toBe(429);
    expect(last.html).toContain('Start the connection again');
    const after = await guess(srv.base, handle, PASSWORD);
    expect(after.location).toBeUndefined();
    expect(after.status).toBe(400);
  });

  it(`global budget (${GLOBAL_BURST}, one back every ${GLOBAL_REFILL_MS / 1000} s): attackers reusing clients stop at the reserve of ${GLOBAL_RESERVE}, which the operator's fresh client may still spend; an attacker with a new client per guess is held to the refill rate`, async () => {
    clock.advance(60 * 60_000); // a fresh budget and quiet clients after the test above
    const failAll = async (client: string, n: number) => {
      const out: number[] = [];
      let handle = await openPage(srv.base, client);
      for (let i = 0; i < n; i++) {
        const r = await guess(srv.base, handle, `x${i}`);
        out.push(r.status);
        if (!r.html.includes('name="request"')) handle = await openPage(srv.base, client);
      }
      return out;
    };
    // Four clients × 5 failures (the 4th and 5th of each no longer "clean"): 30 → 10 = the reserve.
    for (let c = 0; c < 4; c++) {
      const s = await failAll(await registerPublic(srv.base, CALLBACK), 5);
      expect(s.slice(0, 4)).toEqual([401, 401, 401, 401]);
    }
    // A fifth client: its first three are clean (they may spend the reserve), the fourth is not.
    const fifth = await registerPublic(srv.base, CALLBACK);
    const s5 = await failAll(fifth, 4);
    expect(s5.slice(0, 3)).toEqual([401, 401, 401]);
    expect(s5[3]).toBe(429);
    const refused = await guess(srv.base, await openPage(srv.base, fifth), PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('on this server');
    // The operator's own client has no failures: the reserve is theirs.
    const op = await registerPublic(srv.base, CALLBACK);
    expect((await guess(srv.base, await openPage(srv.base, op), PASSWORD)).status).toBe(302);
    // An attacker with a new client for every guess spends the reserve too, and is then held to the refill.
    const statuses: number[] = [];
    for (let i = 0; i < GLOBAL_RESERVE; i++) {
      const c = await registerPublic(srv.base, CALLBACK);
      statuses.push((await guess(srv.base, await openPage(srv.base, c), 'rotating')).status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    const late = await registerPublic(srv.base, CALLBACK);
    const lateHandle = await openPage(srv.base, late);
    const wait = await guess(srv.base, lateHandle, PASSWORD);
    expect(wait.status).toBe(429);
    expect(Number(wait.headers.get('retry-after'))).toBeLessThanOrEqual(GLOBAL_REFILL_MS / 1000);
    clock.advance(GLOBAL_REFILL_MS);
    expect((await guess(srv.base, lateHandle, PASSWORD)).status).toBe(302);
  });
});
