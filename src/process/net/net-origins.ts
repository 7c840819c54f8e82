// Which sandbox a proxy credential may be used from (docs/security-model.md#network-per-mode). The relay
// (native/wb-netrelay.c) tells the proxy (net-proxy.ts) which sandbox's listener each CONNECT came in on — its
// origin, a number the relay gives each bridge's listener as it is handed over; 0 for a connection made on the
// proxy's unix socket itself. A command's credential is tied to the first origin it is used from, and an origin
// to the first credential used on it: the same credential from another sandbox (passed on, or read from a file a
// command left), or from the unix socket itself once it is tied, is refused, and so is another command's
// credential on a tied sandbox's connections. A connection without a credential counts as the tied command's.
// When the relay ends, its numbers go with it: every tie is undone (a new relay numbers from 1 again).

export interface Tied {
  /** The origin this command's credential is tied to. */
  origin?: number;
}

export class OriginTies<C extends Tied> {
  private readonly byOrigin = new Map<number, C>();

  /** The command a CONNECT from `origin` acts for, given the credential it came with; 'foreign' when refused. */
  resolve(client: C | undefined, origin: number): C | undefined | 'foreign' {
    if (origin === 0) return client?.origin !== undefined ? 'foreign' : client;
    const tied = this.byOrigin.get(origin);
    if (!client) return tied;
    if ((tied && tied !== client) || (client.origin !== undefined && client.origin !== origin))
      return 'foreign';
    client.origin = origin;
    this.byOrigin.set(origin, client);
    return client;
  }

  /** The command whose credential is tied to `origin`, if any. */
  owner(origin: number): C | undefined {
    return this.byOrigin.get(origin);
  }

  /** The command ended: its origin is free (the relay never reuses the number while it runs). */
  forget(client: C): void {
    if (client.origin !== undefined && this.byOrigin.get(client.origin) === client)
      this.byOrigin.delete(client.origin);
  }

  /** The relay ended: no number of its means anything now. */
  reset(clients: Iterable<C>): void {
    this.byOrigin.clear();
    for (const c of clients) delete c.origin;
  }
}
