// Where the filtering proxy (net-proxy.ts) listens, and who moves its bytes. The proxy's socket is bound at once
// and served by the server's own HTTP parser; with a relay (native/wb-netrelay.c, through net-relay-link.ts),
// the relay is started on a staged path and renamed onto the socket's path once it listens, so the path is never
// missing. The relay hands what is not a CONNECT to a second socket of the server's, out of every sandbox's
// sight. When the relay ends, the server serves the socket's path again and starts a new relay after a pause
// (RESTART_FIRST_MS, doubling while relays end before carrying a tunnel; after RESTARTS_MAX such ends in a row
// the server keeps the bytes). Paths of any length: one too long for a unix socket is bound through its
// directory (socket-path.ts). Holds no policy: the proxy decides.
import { chmodSync, renameSync, rmSync } from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import { pausePoint } from '../../core/pause.js';
import { RelayLink, type RelayEvents } from './net-relay-link.js';
import { SocketPaths } from './socket-path.js';

/** The pause before the first new relay after one ended; doubled for each that ends without carrying a tunnel. */
export const RESTART_FIRST_MS = 1_000;
/** Relays in a row that may end before carrying a tunnel; after that the server moves the bytes until it stops. */
export const RESTARTS_MAX = 5;

/** Added to the socket's path for where the server binds its own listener before renaming it there (the longest
 * name the proxy binds: the relay's staged one adds `.relay`). */
export const SIDE_SUFFIX = '.server';

export interface RelayPlan {
  program: string;
  serverPath: string;
  /** The first pause before a new relay (RESTART_FIRST_MS; tests shorten it). */
  firstPauseMs?: number;
}

export interface EndpointOptions {
  /** The proxy's socket, where the sandboxes' bridges connect. */
  socketPath: string;
  /** The relay and the socket it hands other requests to; without it, the server moves the bytes. */
  relay?: RelayPlan;
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
  /** The server's own listener on the socket's path, while no relay serves it. */
  private own: net.Server | undefined;
  /** The one it was until a relay took the path: kept listening until the next replaces it (see dropOwn). */
  private retired: net.Server | undefined;
  /** Relays in a row that ended before they carried a tunnel. */
  private fruitless = 0;
  private carried = false;
  private restart: NodeJS.Timeout | undefined;
  private readonly paths = new SocketPaths();

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
    this.serveSocketPath();
    if (this.opts.relay) this.started = this.startRelay(this.opts.relay, true);
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
    clearTimeout(this.restart);
    this.link?.stop();
    this.link = undefined;
    for (const l of this.listeners) l.close();
    rmSync(this.opts.socketPath, { force: true });
    this.paths.close();
  }

  /** The server's parser on a unix socket at `at` (0600), replacing whatever was there. */
  private listenOn(at: string): net.Server {
    rmSync(at, { force: true });
    // As http.Server makes its own: a client's half-close (upload done) leaves the download running.
    const l = net.createServer({ allowHalfOpen: true }, (s) => this.server.emit('connection', s));
    l.maxConnections = this.opts.maxConnections;
    l.listen(this.paths.at(at));
    chmodSync(at, 0o600);
    this.listeners.push(l);
    return l;
  }

  /**
   * The server's parser on the socket's path: bound on a side path and renamed there, so the path is never
   * missing, and closing this listener once a relay has the path (which unlinks the name it was bound to)
   * leaves the path alone.
   */
  private serveSocketPath(): void {
    this.closeRetired();
    const side = this.opts.socketPath + SIDE_SUFFIX;
    this.own = this.listenOn(side);
    renameSync(side, this.opts.socketPath);
  }

  /**
   * The relay now has the socket's path, so no new connection reaches the server's own listener. One that
   * reached it just before the rename may still wait in its backlog, and closing the listener now would reset
   * it: the listener is kept (it accepts what is queued, then nothing more) until a new one replaces it.
   */
  private dropOwn(): void {
    if (!this.own) return;
    this.retired = this.own;
    this.own = undefined;
  }

  private closeRetired(): void {
    const l = this.retired;
    if (!l) return;
    this.retired = undefined;
    this.listeners.splice(this.listeners.indexOf(l), 1);
    l.close();
  }

  /** `first`: the socket for what is not a CONNECT is bound too (a later relay finds it there). */
  private async startRelay(relay: RelayPlan, first: boolean): Promise<void> {
    const staged = `${this.opts.socketPath}.relay`;
    try {
      if (first) this.listenOn(relay.serverPath);
      const link = await RelayLink.start(relay.program, staged, relay.serverPath, {
        ...this.events,
        head: (id, head, origin) => {
          this.carried = true;
          this.events.head(id, head, origin);
        },
        exit: (why) => this.relayEnded(why, relay),
      });
      if (this.closed) return link.stop();
      // Ended between listening and here: its exit found no relay to replace, so it is this start that failed.
      if (link.ended) throw new Error('wb-netrelay ended as soon as it listened');
      pausePoint('proxy.relay-listening');
      renameSync(staged, this.opts.socketPath);
      this.link = link;
      this.carried = false;
      this.dropOwn();
    } catch (e) {
      rmSync(staged, { force: true });
      const why = `the proxy relays tunnels itself: ${(e as Error).message}`;
      // A relay that cannot start again counts as one that ended without carrying a tunnel.
      if (first || this.closed) this.opts.onNotice?.(why);
      else this.later(relay, why);
    }
  }

  /** The relay ended: its connections are gone, the server serves the socket's path, a new relay comes later. */
  private relayEnded(why: string, relay: RelayPlan): void {
    if (this.link === undefined) return;
    this.link = undefined;
    this.events.exit(why);
    if (this.closed) return;
    try {
      this.serveSocketPath();
    } catch (e) {
      this.opts.onNotice?.(`the proxy could not listen again (${(e as Error).message})`);
    }
    this.later(relay, `${why}; the proxy relays tunnels itself`, this.carried);
  }

  /** A new relay after a pause, unless RESTARTS_MAX in a row ended before carrying a tunnel. */
  private later(relay: RelayPlan, why: string, carried = false): void {
    this.fruitless = carried ? 1 : this.fruitless + 1;
    if (this.fruitless > RESTARTS_MAX) {
      this.opts.onNotice?.(
        `${why} from now on (${RESTARTS_MAX} relays in a row ended before carrying a tunnel)`,
      );
      return;
    }
    const pause = (relay.firstPauseMs ?? RESTART_FIRST_MS) * 2 ** (this.fruitless - 1);
    this.opts.onNotice?.(`${why} until a new relay starts (in ${pause / 1000} s)`);
    this.restart = setTimeout(() => {
      this.restart = undefined;
      if (!this.closed) void this.startRelay(relay, false);
    }, pause);
    this.restart.unref();
  }
}
