// What a `safe` command may reach through the filtering proxy (docs/tools.md#network-in-safe-mode): host names
// against an allow-list and a deny-list (deny wins), then every address the name resolves to against the
// private ranges. Pure functions over values, so the proxy (net-proxy.ts) only asks and tests need no network.
// Patterns: `example.com` is that host exactly, `*.example.com` any name below it (not the name itself), `*`
// any host; an IP literal is matched as its canonical address. Addresses are judged as numbers
// (src/config/ip-address.ts), so no spelling of an address changes its kind, and an IPv6 form that carries an
// IPv4 address (mapped, compatible, SIIT, NAT64, 6to4, Teredo) takes the kind of the IPv4 address inside.
// SERVICE_NETWORK_ALLOW_PRIVATE names hosts (exactly), IPs or CIDRs whose loopback/private/link-local answers
// are accepted; nothing else ever reaches those addresses, a grant included.
import { networkInterfaces } from 'node:os';
import { canonicalIp, formatIp, inPrefix, parseCidr, parseIp, v4, type Ip } from '../../config/ip-address.js';
import { normalizeHost } from '../../config/network.js';

export { normalizeHost };

/**
 * The default allow-list: where the usual package managers fetch by default, and nothing else. They serve
 * public, checksummed packages over HTTPS, which is what a coding agent needs from the network most often;
 * anything else (source hosts, APIs, pastebins) is a deliberate choice of the operator or the user.
 */
export const DEFAULT_ALLOW: readonly string[] = [
  // npm, and yarn classic's mirror of it (pnpm and bun use registry.npmjs.org)
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  // PyPI: the index and the file host (pip, uv, poetry)
  'pypi.org',
  'files.pythonhosted.org',
  // crates.io: the sparse index and the downloads (cargo)
  'crates.io',
  'index.crates.io',
  'static.crates.io',
  // Go's module proxy and checksum database (GOPROXY and GOSUMDB defaults)
  'proxy.golang.org',
  'sum.golang.org',
  // RubyGems (gem, bundler)
  'rubygems.org',
  'index.rubygems.org',
  // Maven Central (mvn, gradle)
  'repo.maven.apache.org',
  'repo1.maven.org',
];

export interface NetRules {
  allow: readonly string[];
  deny: readonly string[];
  /** Hosts, IPs and CIDRs allowed to resolve to loopback/private/link-local addresses. */
  allowPrivate: readonly string[];
}

/** Whether a pattern (`host`, `*.domain`, `*`) covers a normalized host. */
export function matchesPattern(pattern: string, host: string): boolean {
  const p = pattern.trim().toLowerCase().replace(/\.$/, '');
  if (p === '*') return true;
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  // An IP literal is compared as its canonical address, whichever way either side spells it.
  return (normalizeHost(p) ?? p) === host;
}

export type HostVerdict = { ok: true } | { ok: false; reason: 'denied' | 'not_allowed' };

/**
 * Deny wins over everything, then the allow-list (the defaults and SERVICE_NETWORK_ALLOW) or a grant the user
 * gave this one command (`granted`: host names, or '*' for any).
 */
export function checkHost(rules: NetRules, host: string, granted?: ReadonlySet<string>): HostVerdict {
  if (rules.deny.some((p) => matchesPattern(p, host))) return { ok: false, reason: 'denied' };
  if (rules.allow.some((p) => matchesPattern(p, host))) return { ok: true };
  if (granted && (granted.has('*') || granted.has(host))) return { ok: true };
  return { ok: false, reason: 'not_allowed' };
}

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'shared'
  | 'multicast'
  | 'unspecified'
  | 'reserved'
  /** One of this host's own addresses (its interfaces'), whatever its range: its services listen there too. */
  | 'host';

type Range = { kind: AddressKind; net: Ip; bits: number };

function ranges(list: Array<[AddressKind, string]>): Range[] {
  return list.map(([kind, cidr]) => {
    const c = parseCidr(cidr) as { ip: Ip; bits: number };
    return { kind, net: c.ip, bits: c.bits };
  });
}

/** IPv4 by range; the first that holds the address wins (metadata before link-local). */
const V4_RANGES = ranges([
  ['metadata', '169.254.169.254/32'],
  ['unspecified', '0.0.0.0/8'],
  ['loopback', '127.0.0.0/8'],
  ['private', '10.0.0.0/8'],
  ['private', '172.16.0.0/12'],
  ['private', '192.168.0.0/16'],
  ['shared', '100.64.0.0/10'], // carrier-grade NAT (and some clouds' metadata)
  ['link-local', '169.254.0.0/16'],
  ['reserved', '192.0.0.0/24'],
  ['reserved', '192.0.2.0/24'],
  ['reserved', '198.18.0.0/15'],
  ['reserved', '198.51.100.0/24'],
  ['reserved', '203.0.113.0/24'],
  ['multicast', '224.0.0.0/4'],
  ['reserved', '240.0.0.0/4'], // and 255.255.255.255
]);

/** IPv6 by range, after the forms that carry an IPv4 address (embeddedClass). */
const V6_RANGES = ranges([
  ['metadata', 'fd00:ec2::254/128'],
  ['reserved', '100::/64'],
  ['reserved', '2001:db8::/32'],
  ['private', 'fc00::/7'],
  ['link-local', 'fe80::/10'],
  ['private', 'fec0::/10'],
  ['multicast', 'ff00::/8'],
]);

const V6 = (cidr: string) => parseCidr(cidr) as { ip: Ip; bits: number };
/** The IPv4 address where RFC 6052 puts it under a NAT64 prefix of `prefix` bits (/48, /56 skip bits 64–71). */
function nat64At(v: bigint, prefix: number): bigint {
  if (prefix === 96) return v & 0xffffffffn;
  if (prefix === 64) return (v >> 24n) & 0xffffffffn;
  // /48 and /56: the IPv4 address straddles the u octet (bits 64-71 of 128).
  const before = BigInt(64 - prefix);
  const hi = (v >> 64n) & ((1n << before) - 1n);
  const lo = (v >> (56n - (32n - before))) & ((1n << (32n - before)) - 1n);
  return (hi << (32n - before)) | lo;
}

/**
 * The forms of IPv6 that carry an IPv4 address, each with the IPv4 addresses it may stand for (Teredo: its
 * server and its client, the latter inverted; local-use NAT64: RFC 6052's layouts from /96 down to /48, the
 * usual one first).
 */
const EMBEDDING: Array<{ form: string; net: { ip: Ip; bits: number }; inside: (v: bigint) => bigint[] }> = [
  { form: 'IPv4-mapped', net: V6('::ffff:0:0/96'), inside: (v) => [v] },
  { form: 'IPv4-compatible', net: V6('::/96'), inside: (v) => [v] },
  { form: 'IPv4-translated (SIIT)', net: V6('::ffff:0:0:0/96'), inside: (v) => [v] },
  { form: 'NAT64', net: V6('64:ff9b::/96'), inside: (v) => [v] },
  {
    form: 'local NAT64',
    net: V6('64:ff9b:1::/48'),
    inside: (v) => [96, 64, 56, 48].map((p) => nat64At(v, p)),
  },
  { form: '6to4', net: V6('2002::/16'), inside: (v) => [v >> 80n] },
  { form: 'Teredo', net: V6('2001::/32'), inside: (v) => [v >> 64n, ~v] },
];

/** What an address is, and for an IPv6 form that carries an IPv4 address, which form and which IPv4. */
export interface AddressClass {
  kind: AddressKind;
  /** E.g. `IPv4-mapped 127.0.0.1`: the IPv4 address the kind was taken from. */
  via?: string;
  /** The IPv4 addresses inside that are not public (what SERVICE_NETWORK_ALLOW_PRIVATE must cover). */
  inside?: Ip[];
  /** The IPv6 form that carries IPv4 addresses, and every one it may stand for. */
  form?: string;
  carried?: Ip[];
}

function v4Kind(ip: Ip): AddressKind {
  return V4_RANGES.find((r) => inPrefix(ip, r.net, r.bits))?.kind ?? 'public';
}

/**
 * An IPv6 form carrying an IPv4 address takes the kind of the first IPv4 inside that is neither public nor
 * unspecified (a layout's unused zeros read as 0.0.0.x), else of the first that is not public. Local-use NAT64
 * is not globally routed: never public, whatever it carries.
 */
function embeddedClass(ip: Ip): AddressClass | undefined {
  const e = EMBEDDING.find((f) => inPrefix(ip, f.net.ip, f.net.bits));
  if (!e) return undefined;
  const carried = e.inside(ip.value).map(v4);
  const bad = carried.filter((a) => v4Kind(a) !== 'public');
  const local = e.form === 'local NAT64';
  const telling = bad.find((a) => v4Kind(a) !== 'unspecified') ?? (local ? undefined : bad[0]);
  const form = { form: e.form, carried };
  if (telling) return { kind: v4Kind(telling), via: `${e.form} ${formatIp(telling)}`, inside: bad, ...form };
  return local ? { kind: 'private', via: e.form, inside: bad, ...form } : { kind: 'public', ...form };
}

/** What kind of address `ip` is, by number: every spelling of one address is judged alike. */
export function classifyIp(ip: Ip): AddressClass {
  if (ip.family === 4) return { kind: v4Kind(ip) };
  if (ip.value === 0n) return { kind: 'unspecified' };
  if (ip.value === 1n) return { kind: 'loopback' };
  const e = embeddedClass(ip);
  if (e) return e;
  return { kind: V6_RANGES.find((r) => inPrefix(ip, r.net, r.bits))?.kind ?? 'public' };
}

/** What kind of address an IP literal (any spelling) is; `reserved` when it is not one. */
export function addressKind(ip: string): AddressKind {
  const parsed = parseIp(ip);
  return parsed ? classifyIp(parsed).kind : 'reserved';
}

/**
 * Whether an SERVICE_NETWORK_ALLOW_PRIVATE entry (host, IP or CIDR, any spelling) lets `host` connect to `ip`:
 * a name entry names the host; an address entry must hold the address — for a form carrying an IPv4 address,
 * every non-public IPv4 inside it (an IPv4 entry) or the IPv6 address itself (an IPv6 entry).
 */
export function privateAllowed(entries: readonly string[], host: string, ip: string): boolean {
  const addr = parseIp(ip);
  if (!addr) return false;
  const inside = classifyIp(addr).inside ?? [];
  const targets = (e: { ip: Ip }) => (e.ip.family === 4 && addr.family === 6 ? inside : [addr]);
  for (const entry of entries) {
    const cidr = entry.includes('/') || parseIp(entry) ? parseCidr(entry) : undefined;
    if (!cidr) {
      if (normalizeHost(entry) === host) return true;
      continue;
    }
    const t = targets(cidr);
    if (t.length > 0 && t.every((a) => inPrefix(a, cidr.ip, cidr.bits))) return true;
  }
  return false;
}

/**
 * The canonical addresses of this host's own interfaces (os.networkInterfaces, read on each call: interfaces
 * come and go), zone ids dropped.
 */
export function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces()))
    for (const i of list ?? []) {
      const c = canonicalIp(i.address);
      if (c) out.add(c);
    }
  return out;
}

/**
 * Every address a host resolved to, judged (a grant never reaches this far: it passes the host rules only):
 * the canonical address to connect to (the first), or the first that is not public — or is one of `own`, this
 * host's own addresses, or carries one — and not let through by SERVICE_NETWORK_ALLOW_PRIVATE, with its kind.
 * An answer that is no address is refused as `reserved`.
 */
export function judgeAddresses(
  allowPrivate: readonly string[],
  host: string,
  addresses: readonly string[],
  own: ReadonlySet<string> = new Set(),
): { address: string } | { refused: { address: string; kind: AddressKind; via?: string } } {
  let first: string | undefined;
  for (const a of addresses) {
    const ip = parseIp(a);
    if (!ip) return { refused: { address: a, kind: 'reserved' } };
    const address = formatIp(ip);
    first ??= address;
    const c = classifyIp(ip);
    const mine = [ip, ...(c.carried ?? [])].find((x) => own.has(formatIp(x)));
    const kind = c.kind === 'public' && mine ? 'host' : c.kind;
    const via = kind === 'host' && mine !== ip && mine ? `${c.form} ${formatIp(mine)}` : c.via;
    if (kind !== 'public' && !privateAllowed(allowPrivate, host, address))
      return { refused: { address, kind, ...(via ? { via } : {}) } };
  }
  return { address: first as string };
}
