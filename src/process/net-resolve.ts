// Host names to addresses for the filtering proxy (net-proxy.ts), the way a proxy people rely on does it: one
// lookup per name at a time (eight tunnels opened at once to one registry wait on the same answer), and an answer
// kept for RESOLVE_TTL_MS, so a package install that opens dozens of connections to one host resolves it once
// instead of queueing a lookup per connection on libuv's four threads. A failed lookup is not kept: the next
// request asks again. The proxy checks every address of the answer on each use, cached or not, and connects to
// the one it checked, so keeping an answer never lets a second DNS answer rebind a connection.
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import type { Clock } from '../core/clock.js';

/** How long an answer is used before the name is looked up again (what browsers keep a host for). */
export const RESOLVE_TTL_MS = 30_000;
/** Names kept at most; the oldest answer goes first. */
export const RESOLVE_MAX_NAMES = 256;
/** A lookup that has not answered by then counts as no answer. */
export const LOOKUP_TIMEOUT_MS = 10_000;

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

  private ask(host: string): Promise<string[]> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
      t.unref?.();
      this.lookup(host, (err, addresses) => {
        clearTimeout(t);
        const got = err ? [] : addresses;
        if (got.length > 0) this.keep(host, got);
        resolve(got);
      });
    });
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
