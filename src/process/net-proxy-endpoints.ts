// Where the filtering proxy (net-proxy.ts) listens, and who moves its bytes. The proxy's socket is bound at once
// and served by the server's own HTTP parser; with a relay (native/wb-netrelay.c, through net-relay-link.ts),
// the relay is started on a staged path and renamed onto the socket's path once it listens, so the path is never
// missing. The relay hands what is not a CONNECT to a second socket of the server's, out of every sandbox's
// sight. When the relay ends, the server serves the socket's path again. Holds no policy: the proxy decides.
import { chmodSync, renameSync, rmSync } from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import { RelayLink, type RelayEvents } from './net-relay-link.js';

export interface EndpointOptions {
  /** The proxy's socket, where the sandboxes' bridges connect. */
  socketPath: string;
  /** The relay and the socket it hands other requests to; without it, the server moves the bytes. */
  relay?: { program: string; serverPath: string };
  /** Connections each listener of the server's takes at once. */
  maxConnections: number;
  /** What the server should know of the data plane (it failed to start, it ended). */
  onNotice?: (message: string) => void;
}

export class ProxyEndpoints {
  private readonly listeners: net.Server[] = [];
  private link: RelayLink | undefined;
  private started: Promise<void> | undefined;
  private closed = false;

  /**
   * `events`: the relay's frames, for the proxy; its `exit` comes after the relay's connections are gone and
   * before the server listens on the socket's path again.
   */
  constructor(
    private readonly server: http.Server,
    private readonly opts: EndpointOptions,
    private readonly events: RelayEvents,
  ) {}

  /** Binds the socket (0600; it exists when this returns), then starts the relay, if any, to take it over. */
  listen(): void {
    this.listenOn(this.opts.socketPath);
    if (this.opts.relay) this.started = this.startRelay(this.opts.relay);
  }

  /** Settles once the relay serves the socket's path, or the server does without it. */
  ready(): Promise<void> {
    return this.started ?? Promise.resolve();
  }

  /** The relay, while it serves the socket's path. */
  get relay(): RelayLink | undefined {
    return this.link;
  }

  close(): void {
    this.closed = true;
    this.link?.stop();
    this.link = undefined;
    for (const l of this.listeners) l.close();
  }

  /** The server's parser on a unix socket at `at` (0600), replacing whatever was there. */
  private listenOn(at: string): void {
    rmSync(at, { force: true });
    // As http.Server makes its own: a client's half-close (upload done) leaves the download running.
    const l = net.createServer({ allowHalfOpen: true }, (s) => this.server.emit('connection', s));
    l.maxConnections = this.opts.maxConnections;
    l.listen(at);
    chmodSync(at, 0o600);
    this.listeners.push(l);
  }

  private async startRelay(relay: { program: string; serverPath: string }): Promise<void> {
    const staged = `${this.opts.socketPath}.relay`;
    try {
      this.listenOn(relay.serverPath);
      const link = await RelayLink.start(relay.program, staged, relay.serverPath, {
        ...this.events,
        exit: (why) => this.relayEnded(why),
      });
      if (this.closed) return link.stop();
      renameSync(staged, this.opts.socketPath);
      this.link = link;
    } catch (e) {
      rmSync(staged, { force: true });
      this.opts.onNotice?.(`the proxy relays tunnels itself: ${(e as Error).message}`);
    }
  }

  /** The relay ended: its connections are gone, and the server serves the socket's path again. */
  private relayEnded(why: string): void {
    if (this.link === undefined) return;
    this.link = undefined;
    this.events.exit(why);
    if (this.closed) return;
    this.opts.onNotice?.(`${why}; the proxy relays tunnels itself from now on`);
    try {
      this.listenOn(this.opts.socketPath);
    } catch (e) {
      this.opts.onNotice?.(`the proxy could not listen again (${(e as Error).message})`);
    }
  }
}
