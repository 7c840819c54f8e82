// Who keeps a slot when the server is full
// (docs/security-model.md#under-attack-connections-and-the-password-page, "fair under exhaustion"). The
// numbers stay those of docs/design-notes.md#limits (256 connections, 64 requests in flight, then 503 with
// Retry-After: 1); this module decides who goes. A newcomer is refused only when every slot is doing
// authenticated work. Otherwise it takes the slot of, in this order: a connection that has not sent a whole
// request yet (oldest first), an idle keep-alive connection (never-authenticated ones first, then the longest
// idle), or a connection whose request in flight was never authenticated (oldest first) — so a request whose
// credentials were accepted, however long it runs, is never cut off for someone else. It also closes a
// connection that has not sent its first request within the first-request timeout. node:http owns the header
// and request timeouts (server.ts); nothing here reads a request or writes a response.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

interface Conn {
  socket: Socket;
  /** Order of its last change: opened, a request started, a request ended. Lower = older. */
  seq: number;
  /** Requests whose head arrived on this connection. */
  requests: number;
  /** Requests of this connection still in flight (admitted, response not closed). */
  active: number;
  /** …of which authenticated. */
  authedActive: number;
  /** Some request on this connection was authenticated. */
  everAuthed: boolean;
}

interface InFlight {
  conn: Conn;
  authed: boolean;
}

/** Eviction order; -1: never evicted (an authenticated request is in flight). */
function rank(c: Conn): number {
  if (c.requests === 0) return 0;
  if (c.active === 0) return c.everAuthed ? 2 : 1;
  return c.authedActive === 0 ? 3 : -1;
}

export interface ConnectionLimits {
  maxConnections: number;
  maxRequests: number;
  firstRequestTimeoutMs: number;
}

export class ConnectionTable {
  private readonly conns = new Map<Socket, Conn>();
  /** In start order, so the first unauthenticated one is the oldest. */
  private readonly inFlight = new Map<IncomingMessage, InFlight>();
  private seq = 0;
  /** Connections this table closed to make room (for tests and diagnostics). */
  evicted = 0;

  constructor(private readonly limits: ConnectionLimits) {}

  get connections(): number {
    return this.conns.size;
  }

  get requestsInFlight(): number {
    return this.inFlight.size;
  }

  /** A new connection: true when it has a slot (free, or freed by evicting one), false when it must be refused. */
  admit(socket: Socket): boolean {
    if (this.conns.size >= this.limits.maxConnections && !this.evictConnection()) return false;
    const conn: Conn = {
      socket,
      seq: ++this.seq,
      requests: 0,
      active: 0,
      authedActive: 0,
      everAuthed: false,
    };
    this.conns.set(socket, conn);
    socket.once('close', () => this.drop(conn));
    // node:http's own timeout handler destroys the socket when nothing else claims the event; the listener
    // makes that explicit for a connection still waiting for its first request (a later keep-alive timeout
    // is node's and is left to it).
    socket.setTimeout(this.limits.firstRequestTimeoutMs);
    socket.on('timeout', () => {
      if (conn.requests === 0) socket.destroy();
    });
    return true;
  }

  /** A request head arrived: true when it may run (a request slot was free or freed), false for a 503. */
  startRequest(req: IncomingMessage): boolean {
    const conn = this.conns.get(req.socket);
    if (!conn) return false; // its connection was evicted while node:http was still parsing
    if (conn.requests++ === 0) req.socket.setTimeout(0);
    conn.seq = ++this.seq;
    if (this.inFlight.size >= this.limits.maxRequests && !this.evictRequest(conn)) return false;
    this.inFlight.set(req, { conn, authed: false });
    conn.active++;
    return true;
  }

  /** The request's credentials were accepted: its connection is no longer anyone's to take. */
  authenticated(req: IncomingMessage): void {
    const r = this.inFlight.get(req);
    if (!r || r.authed) return;
    r.authed = true;
    r.conn.authedActive++;
    r.conn.everAuthed = true;
  }

  /** The request's response closed (sent, or its connection went away). */
  endRequest(req: IncomingMessage): void {
    const r = this.inFlight.get(req);
    if (!r) return;
    this.inFlight.delete(req);
    r.conn.active--;
    if (r.authed) r.conn.authedActive--;
    r.conn.seq = ++this.seq;
  }

  /** Closes the most expendable connection; false when every connection has authenticated work in flight. */
  private evictConnection(): boolean {
    let victim: Conn | undefined;
    let best = Infinity;
    for (const c of this.conns.values()) {
      const r = rank(c);
      if (r < 0) continue;
      // Insertion order is opening order, and a never-used connection's seq is its opening: the first one
      // found is the oldest, so a flood of them costs one step per newcomer.
      if (r === 0) {
        victim = c;
        break;
      }
      if (r < best || (r === best && c.seq < (victim as Conn).seq)) {
        victim = c;
        best = r;
      }
    }
    if (!victim) return false;
    this.evict(victim);
    return true;
  }

  /** Frees a request slot by closing the connection of the oldest unauthenticated request in flight. */
  private evictRequest(newcomer: Conn): boolean {
    for (const r of this.inFlight.values()) {
      if (!r.authed && r.conn !== newcomer) {
        this.evict(r.conn);
        return true;
      }
    }
    return false;
  }

  private evict(c: Conn): void {
    this.drop(c);
    this.evicted++;
    c.socket.destroy();
  }

  /** Forgets a connection at once (its 'close' event comes later) and its requests with it. */
  private drop(c: Conn): void {
    if (this.conns.get(c.socket) !== c) return;
    this.conns.delete(c.socket);
    if (c.active > 0) for (const [req, r] of this.inFlight) if (r.conn === c) this.inFlight.delete(req);
  }
}
