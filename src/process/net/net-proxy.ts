// The filtering proxy of `safe` and `trusted` (docs/tools.md#network-in-safe-mode,
// docs/security-model.md#network-per-mode): an HTTP proxy whose decisions are made in the server process, on a
// unix socket in the runtime directory (mode 0600) that each sandbox sees read-only. Its data plane is
// native/wb-netrelay.c (net-relay-link.ts), which accepts the sandboxes' connections on 127.0.0.1:3128 (each
// bridge, native/wb-netbridge.c, hands it its listener), sends each CONNECT head here and moves the bytes of
// what is allowed; without it, the bridges relay to the socket and this process moves the bytes (net-relay.ts).
// No host socket enters a sandbox: this is the
// only way out, and it speaks two things — `CONNECT host:port` (bytes tunnelled, TLS never intercepted) and
// absolute-URI requests (`GET http://host/…`). Each is allowed by host name (net-allow.ts; deny wins; a grant
// for that one command adds names; an address in any spelling is first made its canonical text), then the name
// is resolved here and every address it has, judged as a number, must be public unless
// SERVICE_NETWORK_ALLOW_PRIVATE lets it through; the connection goes to exactly the address that was
// checked, so a second DNS answer cannot rebind it (answers are shared and kept a while: net-resolve.ts). A
// refusal is a 403 with a short plain-text body, sent at once. Which command asked is known from the per-command
// credential in its proxy URL (Proxy-Authorization: Basic wb:<token>); every decision is reported (audit log, the
// command's `blocked` note), and the connections a command opened end with it (revoke). Bounded by the
// allowances of net-credentials.ts, so one command cannot starve the others; idle ones closed after IDLE_MS.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { checkHost, judgeAddresses, normalizeHost, ownAddresses, type NetRules } from './net-allow.js';
import { refusalBody, type NetDecision, type Refusal } from './net-decision.js';
import {
  MAX_UPSTREAM,
  ProxyCredentials,
  type Bucket,
  type Client,
  type Closable,
} from './net-credentials.js';
import { ProxyEndpoints, type RelayPlan } from './net-proxy-endpoints.js';
import { parseConnectHead } from './net-relay-link.js';
import { HostResolver, type LookupAll } from './net-resolve.js';
import type { Clock } from '../../core/clock.js';
import {
  absoluteHttpUrl,
  forwardHttp,
  openTunnel,
  parseAuthority,
  reply,
  send,
  unreachable,
} from './net-relay.js';

export { parseAuthority, MAX_UPSTREAM };
export { SIDE_SUFFIX } from './net-proxy-endpoints.js';

/** The port the bridge listens on inside each sandbox (its own network namespace: nothing else is there). */
export const BRIDGE_PORT = 3128;
/** A tunnel or request with no bytes either way for this long is closed. */
export const IDLE_MS = 120_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** How long a reading of the host's own addresses is used (one costs about a millisecond). */
const OWN_ADDRESSES_MS = 1_000;

export interface ProxyOptions {
  socketPath: string;
  rules: NetRules;
  /** Test-only resolver override (WB_TEST_RESOLVE): host name → addresses, consulted before DNS. */
  testResolve?: Readonly<Record<string, readonly string[]>>;
  /** How long a DNS answer is kept is measured on it (net-resolve.ts). */
  clock: Clock;
  /** The DNS lookup (node:dns by default). */
  lookup?: LookupAll;
  onDecision: (d: NetDecision) => void;
  /**
   * The data plane (native/wb-netrelay.c, placed where no sandbox sees it), and the socket where it hands the
   * proxy what is not a CONNECT (likewise out of every sandbox's sight). Without it, or when it ends, the
   * server relays the bytes itself.
   */
  relay?: RelayPlan;
  /** What the server should know of the data plane (it failed to start, it ended). */
  onNotice?: (message: string) => void;
}

/** A CONNECT's outcome: the answer to write and close, or the checked address to connect to (counted). */
type ConnectOutcome = { answer: string } | { host: string; port: number; address: string; owner: Bucket };

/** A connection the relay holds, from its head until its X frame. */
interface Relayed {
  client: Client | undefined;
  closer: Closable;
  /** Counted in `upstream` and its owner's allowance (allowed): released when it closes. */
  counted: Bucket | undefined;
}

export class NetProxy {
  private readonly server: http.Server;
  /** Who asks, what each holds, and the allowances (net-credentials.ts). */
  private readonly creds = new ProxyCredentials();
  private closed = false;
  private readonly endpoints: ProxyEndpoints;
  private readonly relayed = new Map<number, Relayed>();
  private readonly resolver: HostResolver;
  private own: { at: number; set: ReadonlySet<string> } | undefined;

  constructor(private readonly opts: ProxyOptions) {
    this.resolver = new HostResolver({
      clock: opts.clock,
      fixed: opts.testResolve,
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    });
    this.server = http.createServer({ requestTimeout: 0, headersTimeout: 10_000 });
    this.server.keepAliveTimeout = 5_000;
    this.server.on('request', (req, res) => void this.onRequest(req, res));
    this.server.on(
      'connect',
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.onConnect(req, socket, head),
    );
    this.server.on('upgrade', (_req: IncomingMessage, socket: Duplex) =>
      socket.end('HTTP/1.1 501 Not Implemented\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
    );
    this.server.on('clientError', (_e, socket: Duplex) => {
      if (socket.writable)
        socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      else socket.destroy();
    });
    this.endpoints = new ProxyEndpoints(
      this.server,
      { ...opts, maxConnections: 4 * MAX_UPSTREAM },
      {
        head: (id, head, origin) => void this.onRelayHead(id, head, origin),
        closed: (id) => this.relayClosed(id),
        // The relay ended: so did every connection it held, and the numbers of its origins.
        exit: () => {
          for (const id of [...this.relayed.keys()]) this.relayClosed(id);
          this.creds.untieAll();
        },
      },
    );
  }

  /** Binds the socket (it exists when this returns, mode 0600); the relay, if any, takes it over once it runs. */
  listen(): void {
    this.endpoints.listen();
  }

  /** Settles once the relay serves the socket's path, or the server does without it. */
  ready(): Promise<void> {
    return this.endpoints.ready();
  }

  /** Who moves the bytes of an allowed tunnel. */
  get dataPlane(): 'relay' | 'server' {
    return this.endpoints.relay ? 'relay' : 'server';
  }

  /** The relay's process id, while it runs (tests). */
  get relayPid(): number | undefined {
    return this.endpoints.relay?.pid;
  }

  get socketPath(): string {
    return this.opts.socketPath;
  }

  /** A new credential for one command; its grants live and die with it. */
  register(token: string, commandId: string): void {
    this.creds.register(token, commandId);
  }

  /** The user's grant for one command: these host names ('*': any) pass the allow-list for it. */
  grant(token: string, hosts: Iterable<string>): void {
    this.creds.grant(token, hosts);
  }

  /** The command ended: its credential, its grants and every connection it opened through the proxy are gone. */
  revoke(token: string): void {
    this.creds.revoke(token);
  }

  close(): Promise<void> {
    this.closed = true;
    this.creds.clear();
    this.endpoints.close();
    this.relayed.clear();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private client(req: IncomingMessage): Client | undefined {
    return this.creds.fromHeader(req.headers['proxy-authorization']);
  }

  private async onConnect(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    const client = this.client(req);
    const o = await this.connectOutcome(req.url ?? '', client);
    if ('answer' in o) return void socket.end(o.answer);
    if (socket.destroyed || !this.creds.track(client, socket)) {
      socket.destroy();
      return this.creds.release(o.owner);
    }
    openTunnel({
      socket,
      ...o,
      head,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      idleMs: IDLE_MS,
      onClose: () => this.creds.release(o.owner),
    });
  }

  /** A CONNECT the relay holds: decided here, its bytes moved there. */
  private async onRelayHead(id: number, head: Buffer, origin: number): Promise<void> {
    const link = this.endpoints.relay;
    if (!link) return;
    const parsed = parseConnectHead(head);
    const client = this.creds.ties.resolve(this.creds.fromHeader(parsed?.auth), origin);
    if (client === 'foreign') return link.reply(id, this.foreign(parsed?.target ?? '', origin));
    const entry: Relayed = { client, closer: { destroy: () => link.kill(id) }, counted: undefined };
    this.relayed.set(id, entry);
    // Not a CONNECT line: its first line is what parseAuthority refuses, and what the refusal reports.
    const o = await this.connectOutcome(
      parsed?.target ?? head.toString('latin1').split('\r\n')[0] ?? '',
      client,
    );
    if ('answer' in o) return link.reply(id, o.answer);
    // Closed, or the relay gone, while the name was looked up.
    if (this.relayed.get(id) !== entry) return this.creds.release(o.owner);
    entry.counted = o.owner;
    if (!this.creds.track(client, entry.closer)) return link.kill(id);
    link.connect(id, o.address, o.port, unreachable(o.host, o.port, o.address));
  }

  /** A credential used from a sandbox it is not tied to (net-origins.ts): refused, and said to that sandbox's command. */
  private foreign(authority: string, origin: number): string {
    const target = parseAuthority(authority) ?? { host: authority.slice(0, 100), port: 0 };
    const d: NetDecision = {
      ...target,
      method: 'CONNECT',
      allowed: false,
      reason: 'foreign_credential',
      commandId: this.creds.ties.owner(origin)?.commandId,
    };
    this.decide(d);
    return reply(403, 'Forbidden', refusalBody(d));
  }

  /** The relay closed a connection it had sent the head of. */
  private relayClosed(id: number): void {
    const e = this.relayed.get(id);
    if (!e) return;
    this.relayed.delete(id);
    this.creds.untrack(e.client, e.closer);
    if (e.counted) this.creds.release(e.counted);
  }

  /** The decision for `CONNECT authority`: an answer (refused, malformed), or where to connect (counted). */
  private async connectOutcome(authority: string, client: Client | undefined): Promise<ConnectOutcome> {
    const target = parseAuthority(authority);
    if (!target) {
      this.decide({
        method: 'CONNECT',
        commandId: client?.commandId,
        host: authority.slice(0, 100),
        port: 0,
        allowed: false,
        reason: 'bad_request',
      });
      const why =
        'workbench-mcp proxy: CONNECT needs host:port, with a host name or an IP address (IPv6 in brackets).\n';
      return { answer: reply(400, 'Bad Request', why) };
    }
    const r = await this.check(target.host, target.port, 'CONNECT', client);
    return r.ok
      ? { ...target, address: r.address, owner: r.owner }
      : { answer: reply(r.status, r.statusText, r.body) };
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const client = this.client(req);
    const url = absoluteHttpUrl(req.url);
    const host = url ? normalizeHost(url.hostname) : undefined;
    if (!url || !host) {
      this.decide({
        method: req.method ?? '?',
        host: String(req.url).slice(0, 100),
        port: 0,
        allowed: false,
        reason: 'bad_request',
        commandId: client?.commandId,
      });
      return void send(
        res,
        400,
        'workbench-mcp proxy: send absolute http:// URLs with a host name or an IP address, or CONNECT host:port ' +
          'for https.\n',
      );
    }
    const port = url.port ? Number(url.port) : 80;
    const r = await this.check(host, port, req.method ?? 'GET', client);
    if (!r.ok) return void send(res, r.status, r.body);
    if (!this.creds.track(client, req.socket)) {
      req.socket.destroy();
      return this.creds.release(r.owner);
    }
    forwardHttp({
      req,
      res,
      url,
      port,
      address: r.address,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      idleMs: IDLE_MS,
      onDone: () => this.creds.release(r.owner),
    });
  }

  /** The whole decision for one request: host rules, resolution, address rules, capacity. */
  private async check(
    host: string,
    port: number,
    method: string,
    client: Client | undefined,
  ): Promise<
    | { ok: true; address: string; owner: Bucket }
    | { ok: false; status: number; statusText: string; body: string }
  > {
    const base = { host, port, method, commandId: client?.commandId };
    const refuse = (reason: Refusal, extra: Partial<NetDecision> = {}) => {
      const d: NetDecision = { ...base, allowed: false, reason, ...extra };
      this.decide(d);
      const status =
        reason === 'busy' || reason === 'command_busy'
          ? 503
          : reason === 'unresolved' || reason === 'unreachable'
            ? 502
            : 403;
      const text = status === 503 ? 'Service Unavailable' : status === 502 ? 'Bad Gateway' : 'Forbidden';
      return { ok: false as const, status, statusText: text, body: refusalBody(d) };
    };
    if (this.closed) return refuse('busy');
    const v = checkHost(this.opts.rules, host, client?.granted);
    if (!v.ok) return refuse(v.reason);
    const granted = !checkHost(this.opts.rules, host).ok;
    const addresses = await this.resolver.resolve(host);
    if (addresses.length === 0) return refuse('unresolved');
    const judged = judgeAddresses(this.opts.rules.allowPrivate, host, addresses, this.ownAddresses());
    if ('refused' in judged) return refuse('private_address', judged.refused);
    const taken = this.creds.take(client);
    if ('refused' in taken) return refuse(taken.refused);
    const owner = taken.owner;
    const address = judged.address;
    this.decide({ ...base, allowed: true, address, ...(granted ? { granted } : {}) });
    return { ok: true, address, owner };
  }

  /** This host's own addresses, read again when a decision comes OWN_ADDRESSES_MS after the last reading. */
  private ownAddresses(): ReadonlySet<string> {
    const now = this.opts.clock.monotonic();
    if (!this.own || now - this.own.at >= OWN_ADDRESSES_MS) this.own = { at: now, set: ownAddresses() };
    return this.own.set;
  }

  private decide(d: NetDecision): void {
    try {
      this.opts.onDecision(d);
    } catch {
      /* reporting must never break the proxy */
    }
  }
}
