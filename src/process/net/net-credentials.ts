// Who is asking the proxy (net-proxy.ts), and what each asker holds: one credential per command (sent as
// Proxy-Authorization: Basic wb:<token>), the host names the user granted that command, the connections it has
// open through the proxy (cut when it ends), the sandbox its credential is tied to (net-origins.ts), and the
// allowances — at most MAX_UPSTREAM connections out at once over every command, and MAX_PER_COMMAND for one
// command (connections without a credential share one such allowance).
import type { Duplex } from 'node:stream';
import { normalizeHost } from './net-allow.js';
import { MAX_PER_COMMAND, type Refusal } from './net-decision.js';
import { OriginTies, type Tied } from './net-origins.js';

/** Connections out at once, over every command. */
export const MAX_UPSTREAM = 256;

/** Something the proxy can cut: a socket it holds, or a connection the relay holds. */
export interface Closable {
  destroy(): void;
}

/** Connections out at once, of one command (or of those without a credential, together). */
export interface Bucket {
  open: number;
}

export interface Client extends Bucket, Tied {
  commandId: string;
  /** Host names the user granted this command ('*': any). */
  granted: Set<string>;
  /** Its connections open through the proxy: cut when the command ends (revoke). */
  live: Set<Closable>;
  ended: boolean;
}

export class ProxyCredentials {
  private readonly clients = new Map<string, Client>();
  private upstream = 0;
  /** The allowance shared by connections without a (live) credential. */
  private readonly anonymous: Bucket = { open: 0 };
  /** Which sandbox each credential may be used from (net-origins.ts). */
  readonly ties = new OriginTies<Client>();

  /** A new credential for one command; its grants live and die with it. */
  register(token: string, commandId: string): void {
    this.clients.set(token, { commandId, granted: new Set(), live: new Set(), ended: false, open: 0 });
  }

  /** The user's grant for one command: these host names ('*': any) pass the allow-list for it. */
  grant(token: string, hosts: Iterable<string>): void {
    const c = this.clients.get(token);
    if (!c) return;
    // Kept as the proxy compares them (an address as its canonical text); a grant never passes the address rules.
    for (const h of hosts) {
      const n = h === '*' ? h : normalizeHost(h);
      if (n) c.granted.add(n);
    }
  }

  /**
   * The command ended: its credential and grants are gone, and so is every connection it opened through the
   * proxy, so a socket it handed to another process (SCM_RIGHTS) carries nothing more.
   */
  revoke(token: string): void {
    const c = this.clients.get(token);
    this.clients.delete(token);
    if (!c) return;
    c.ended = true;
    this.ties.forget(c);
    for (const s of c.live) s.destroy();
    c.live.clear();
  }

  /** The command whose credential a Proxy-Authorization value carries. */
  fromHeader(h: string | undefined): Client | undefined {
    const m = typeof h === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h) : null;
    if (!m) return undefined;
    const [user, token] = Buffer.from(m[1] as string, 'base64')
      .toString('latin1')
      .split(':');
    return user === 'wb' && token ? this.clients.get(token) : undefined;
  }

  /**
   * Ties a connection to the command whose credential came with it; false when that command has ended. A socket
   * leaves the set when it closes; a relayed connection when the relay says so (untrack).
   */
  track(client: Client | undefined, conn: Duplex | Closable): boolean {
    if (!client) return true;
    if (client.ended) return false;
    client.live.add(conn);
    if ('once' in conn) conn.once('close', () => client.live.delete(conn));
    return true;
  }

  untrack(client: Client | undefined, conn: Closable): void {
    client?.live.delete(conn);
  }

  /** One connection out for `client`, counted against both allowances; the refusal when either is spent. */
  take(client: Client | undefined): { owner: Bucket } | { refused: Refusal } {
    const owner = client ?? this.anonymous;
    if (owner.open >= MAX_PER_COMMAND) return { refused: 'command_busy' };
    if (this.upstream >= MAX_UPSTREAM) return { refused: 'busy' };
    this.upstream++;
    owner.open++;
    return { owner };
  }

  /** A connection `take` counted has closed. */
  release(owner: Bucket): void {
    if (this.upstream > 0) this.upstream--;
    if (owner.open > 0) owner.open--;
  }

  /** The relay ended, and with it the numbers of its origins: every tie is undone. */
  untieAll(): void {
    this.ties.reset(this.clients.values());
  }

  clear(): void {
    this.clients.clear();
  }
}
