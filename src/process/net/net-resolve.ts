// Host names to addresses for the filtering proxy (net-proxy.ts), the way a proxy people rely on does it: one
// lookup per name at a time (eight tunnels opened at once to one registry wait on the same answer), and an answer
// kept for RESOLVE_TTL_MS, so a package install that opens dozens of connections to one host resolves it once
// instead of queueing a lookup per connection on libuv's four threads. A failed lookup is not kept: the next
// request asks again. The proxy checks every address of the answer on each use, cached or not, and connects to
// the one it checked, so keeping an answer never lets a second DNS answer rebind a connection. At most
// MAX_LOOKUPS run at once (each holds one of libuv's four threads until it answers): names that resolve slowly
// hold no more than that, and the server's other work keeps the rest; later lookups wait their turn.
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import type { Clock } from '../../core/clock.js';

/** How long an answer is used before the name is looked up again (what browsers keep a host for). */
export const RESOLVE_TTL_MS = 30_000;
/** Names kept at most; the oldest answer goes first. */
export const RESOLVE_MAX_NAMES = 256;
/** A lookup that has not answered by then (waiting for its turn included) counts as no answer. */
export const LOOKUP_TIMEOUT_MS = 10_000;
/** Lookups running at once; the others wait their turn. */
export const MAX_LOOKUPS = 2;

/** node:dns lookup with `{all: true}`, or a stand-in with the same contract. */
export type LookupAll = (host: string, done: (err: Error | null, addresses: string[]) => void) => void;

const systemLookup: LookupAll = (host, done) =>
  dnsLookup(host, { all: true, verbatim: true }, (err, list) =>
    done(err, err ? [] : list.map((a) => a.address)),
  );

interface Kept {
  addresses: readonly string[];
  until: number;
}

export interface ResolverOptions {
  clock: Clock;
  /** Test-only fixed answers (WB_TEST_RESOLVE), consulted before DNS and never kept. */
  fixed?: Readonly<Record<string, readonly string[]>> | undefined;
  lookup?: LookupAll;
}

export class HostResolver {
  private readonly kept = new Map<string, Kept>();
  private readonly asking = new Map<string, Promise<string[]>>();
  /** Lookups waiting for their turn, oldest first. */
  private readonly queue: Array<() => void> = [];
  private running = 0;
  private readonly lookup: LookupAll;

  constructor(private readonly opts: ResolverOptions) {
    this.lookup = opts.lookup ?? systemLookup;
  }

  /** The addresses of `host` (an IP stands for itself); [] when it does not resolve in time. */
  resolve(host: string): Promise<string[]> {
    if (isIP(host)) return Promise.resolve([host]);
    const fixed = this.opts.fixed?.[host];
    if (fixed) return Promise.resolve([...fixed]);
    const now = this.opts.clock.monotonic();
    const k = this.kept.get(host);
    if (k && k.until > now) return Promise.resolve([...k.addresses]);
    if (k) this.kept.delete(host);
    const pending = this.asking.get(host);
    if (pending) return pending.then((a) => [...a]);
    const asked = this.ask(host).finally(() => this.asking.delete(host));
    this.asking.set(host, asked);
    return asked.then((a) => [...a]);
  }

  /** Lookups running or waiting for their turn (tests). */
  get pending(): number {
    return this.running + this.queue.length;
  }

  private ask(host: string): Promise<string[]> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (got: string[]) => {
        if (settled) return;
        settled = true;
        clearTimeout(t);
        resolve(got);
      };
      const t = setTimeout(() => settle([]), LOOKUP_TIMEOUT_MS);
      t.unref?.();
      const start = () => {
        // Timed out while waiting for its turn: nobody waits for the answer any more.
        if (settled) return this.next();
        this.running++;
        const done = (err: Error | null, addresses: string[]) => {
          this.running--;
          const got = err ? [] : addresses;
          // Kept even when it came too late for this request: the next one uses it.
          if (got.length > 0) this.keep(host, got);
          settle(got);
          this.next();
        };
        try {
          this.lookup(host, done);
        } catch (e) {
          done(e as Error, []);
        }
      };
      if (this.running < MAX_LOOKUPS) start();
      else this.queue.push(start);
    });
  }

  /** The oldest waiting lookup starts, if there is room. */
  private next(): void {
    if (this.running < MAX_LOOKUPS) this.queue.shift()?.();
  }

  private keep(host: string, addresses: readonly string[]): void {
    this.kept.delete(host);
    while (this.kept.size >= RESOLVE_MAX_NAMES) {
      const oldest = this.kept.keys().next().value as string;
      this.kept.delete(oldest);
    }
    this.kept.set(host, { addresses: [...addresses], until: this.opts.clock.monotonic() + RESOLVE_TTL_MS });
  }
}
