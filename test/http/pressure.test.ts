// Fair under exhaustion (docs/design-notes.md#statuses, docs/design-notes.md#limits keep the caps): when the
// connection cap is full, a newcomer takes the slot of a connection that never sent a request, then of an
// idle keep-alive one, then of one whose request in flight was never authenticated — never of one carrying an
// authenticated request. A connection that sends nothing is closed by the first-request timeout. Real HTTP on
// 127.0.0.1; every wait is on an event (a response, a close), never on elapsed time; only connections this
// file opened are counted.
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionTableOf, FIRST_REQUEST_TIMEOUT_MS, MAX_CONNECTIONS } from '../../src/http/server.js';
import { inFlight, idleAfter, unused, type Held } from '../helpers/held-connections.js';
import { bearer, request, send, until, type RawReply } from '../helpers/raw-http.js';
import { startInProcess, TEST_TOKEN } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { startOAuthServer } from '../e2e/oauth-helpers.js';

/** Long enough that no timeout acts while a test runs: the tests see evictions only. */
const NEVER = 600_000;

let ws: TempWorkspace;
beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
});
afterAll(() => ws?.cleanup());

const toolsList = (url: string) =>
  send(url, request('handshake', 'tools/list'), bearer()).catch(
    (e: Error) => ({ status: 0, text: e.message }) as RawReply,
  );

/** Resolves with the held connections that closed, once at least one more than `before` has. */
async function nextClosed(held: Held[], before: number): Promise<Held[]> {
  const open = held.filter((h) => !h.isClosed());
  if (held.length - open.length <= before) await Promise.race(open.map((h) => h.closed));
  return held.filter((h) => h.isClosed());
}

describe('a full connection cap gives way to an authenticated client', () => {
  it('cap full of unused and idle connections → each authenticated tools/list is 200 (not 503); evicted: unused (oldest first), idle unauthenticated, idle authenticated (longest idle first); the request in flight survives', async () => {
    const s = await startInProcess({
      workspace: ws.dir,
      limits: {
        maxConnections: 8,
        firstRequestTimeoutMs: NEVER,
        headersTimeoutMs: NEVER,
        requestTimeoutMs: NEVER,
      },
    });
    try {
      // Opened one after another, so the server accepts them in this order (its accept queue is FIFO).
      const fresh = [await unused(s.url), await unused(s.url), await unused(s.url)];
      const idleAnon = [await idleAfter(s.url), await idleAfter(s.url)];
      const idleAuthed = [await idleAfter(s.url, TEST_TOKEN), await idleAfter(s.url, TEST_TOKEN)];
      for (const h of [...idleAnon, ...idleAuthed]) expect(h.status).toBe(200);
      const busy = await inFlight(s.url);
      const expected: Held[] = [...fresh, ...idleAnon, ...idleAuthed];
      const order: Held[] = [];
      const newcomers: Held[] = [];
      for (let i = 0; i < expected.length; i++) {
        // The newcomer keeps its connection (keep-alive), so the cap stays full for the next one.
        const r = await idleAfter(s.url, TEST_TOKEN);
        newcomers.push(r);
        expect(r.status).toBe(200);
        const closed = await nextClosed(expected, i);
        expect(closed.length, 'one eviction per newcomer').toBe(i + 1);
        order.push(...closed.filter((h) => !order.includes(h)));
      }
      expect(order.map((h) => expected.indexOf(h))).toEqual([0, 1, 2, 3, 4, 5, 6]);
      // Now the cap holds the request in flight and 7 idle newcomers: the next one takes the longest idle.
      const last = await idleAfter(s.url, TEST_TOKEN);
      expect(last.status).toBe(200);
      await newcomers[0]?.closed;
      expect(busy.isClosed()).toBe(false);
      expect(await busy.finish()).toBe(200);
      for (const h of [busy, last, ...newcomers]) h.socket.destroy();
    } finally {
      await s.close();
    }
  });

  it('a connection that sends nothing is closed by the first-request timeout (5 s by default; no response), while one that has sent a request stays', async () => {
    expect(FIRST_REQUEST_TIMEOUT_MS).toBe(5_000);
    const s = await startInProcess({
      workspace: ws.dir,
      limits: { firstRequestTimeoutMs: 300, headersTimeoutMs: NEVER, requestTimeoutMs: NEVER },
    });
    try {
      const idle = await idleAfter(s.url, TEST_TOKEN);
      const silent = await unused(s.url);
      let bytes = 0;
      silent.socket.on('data', (c: Buffer) => (bytes += c.length));
      await silent.closed;
      expect(bytes).toBe(0);
      // The idle connection is older than the silent one: had the timeout applied to it, it would be closed.
      expect(idle.isClosed()).toBe(false);
      idle.socket.destroy();
    } finally {
      await s.close();
    }
  });
});

describe('slow unauthenticated requests cannot hold the slots', () => {
  /** A POST to the token endpoint (no credentials needed) whose body never comes: in flight, unauthenticated. */
  async function trickling(base: string): Promise<Held> {
    const u = new URL(base);
    const h = await unused(base);
    h.socket.write(
      `POST /oauth/token HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        'Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n',
    );
    await new Promise<void>((resolve) => h.socket.once('data', () => resolve())); // 100 Continue: admitted
    h.socket.write('grant_type=');
    return h;
  }

  it.each([
    ['the connection cap', { maxConnections: 3 }],
    ['the in-flight cap (docs/design-notes.md#limits: 64)', { maxConcurrent: 3 }],
  ])(
    '%s full of trickling bodies and an authenticated request → tools/list 200; the oldest trickler went, the authenticated request survives',
    async (_n, caps) => {
      const srv = await startOAuthServer({
        workspace: ws.dir,
        env: { SERVICE_AUTH_TOKEN: TEST_TOKEN },
        limits: { ...caps, firstRequestTimeoutMs: NEVER, headersTimeoutMs: NEVER, requestTimeoutMs: NEVER },
      });
      try {
        const busy = await inFlight(srv.url);
        const slow = [await trickling(srv.base), await trickling(srv.base)];
        const r = await toolsList(srv.url);
        expect(r.status, r.text).toBe(200);
        await slow[0]?.closed;
        expect(slow[1]?.isClosed()).toBe(false);
        expect(busy.isClosed()).toBe(false);
        expect(await busy.finish()).toBe(200);
        for (const h of [busy, ...slow]) h.socket.destroy();
      } finally {
        await srv.close();
      }
    },
  );
});

/** The soft limit on open descriptors of this process (what its children inherit). */
function fdLimit(): number {
  const out = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim();
  return out === 'unlimited' ? 1 << 20 : Number(out) || 1024;
}

// Client and server share this process, so the flood needs one descriptor per connection plus the server's
// (at most the cap) and a margin for everything else the test runner holds.
const FLOOD = Math.min(10_000, fdLimit() - 2 * MAX_CONNECTIONS - 1024);

describe(`a flood of ${FLOOD} connections`, () => {
  it.skipIf(FLOOD < 2 * MAX_CONNECTIONS)(
    `${FLOOD} connections that never send a request (min(10,000, the descriptor limit minus a margin)): every authenticated tools/list during the flood is 200, the server evicts flood connections to make room and keeps serving afterwards`,
    async () => {
      const s = await startInProcess({ workspace: ws.dir });
      const u = new URL(s.url);
      let settled = 0;
      let failed = 0;
      let halfway!: () => void;
      const reachedHalf = new Promise<void>((r) => (halfway = r));
      let allSettled!: () => void;
      const done = new Promise<void>((r) => (allSettled = r));
      const settle = () => {
        if (++settled === FLOOD >> 1) halfway();
        if (settled === FLOOD) allSettled();
      };
      const sockets: net.Socket[] = [];
      try {
        for (let i = 0; i < FLOOD; i++) {
          const sock = net.connect({ host: u.hostname, port: Number(u.port) });
          sockets.push(sock);
          sock.resume();
          sock.once('connect', settle);
          sock.once('error', () => {
            failed++;
            settle();
          });
          if (i % 100 === 99) await new Promise((r) => setImmediate(r)); // the server accepts meanwhile
        }
        await reachedHalf;
        const table = connectionTableOf(s.server);
        // Wait (a bounded loop on a condition, no timing) until the flood holds every slot.
        const full = await until(
          async () => table?.connections ?? 0,
          (n) => n >= MAX_CONNECTIONS,
        );
        expect(full).toBe(MAX_CONNECTIONS);
        const during: number[] = [];
        for (let i = 0; i < 5; i++) during.push((await toolsList(s.url)).status);
        expect(during).toEqual([200, 200, 200, 200, 200]);
        await done;
        expect(failed).toBe(0);
        // The cap was full the whole time: the server made room by evicting flood connections, and never held
        // more than the cap. (Connections the kernel could not queue for accepting exist only on the client
        // side, so the number closed is not FLOOD minus the cap.)
        expect(table?.evicted).toBeGreaterThan(MAX_CONNECTIONS);
        expect(table?.connections).toBeLessThanOrEqual(MAX_CONNECTIONS);
        for (const sock of sockets) sock.destroy();
        expect((await toolsList(s.url)).status).toBe(200);
      } finally {
        for (const sock of sockets) sock.destroy();
        await s.close();
      }
    },
  );
});
