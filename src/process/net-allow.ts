// What a `safe` command may reach through the filtering proxy (docs/tools.md#network-in-safe-mode): host names
// against an allow-list and a deny-list (deny wins), then every address the name resolves to against the
// private ranges. Pure functions over values, so the proxy (net-proxy.ts) only asks and tests need no network.
// Patterns: `example.com` is that host exactly, `*.example.com` any name below it (not the name itself), `*`
// any host; an IP literal is matched as written. SERVICE_NETWORK_ALLOW_PRIVATE names hosts (exactly), IPs or
// CIDRs whose loopback/private/link-local answers are accepted; nothing else ever reaches those addresses.
import { BlockList, isIP } from 'node:net';
import { normalizeHost } from '../config/network.js';

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
  return p === host;
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
  | 'reserved';

const RANGES: Array<[AddressKind, string, number, 'ipv4' | 'ipv6']> = [
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['shared', '100.64.0.0', 10, 'ipv4'], // carrier-grade NAT (and some clouds' metadata)
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'], // and 255.255.255.255
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['reserved', '::', 96, 'ipv6'], // IPv4-compatible (deprecated)
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', 'fec0::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];

const lists = RANGES.map(([kind, net, prefix, type]) => {
  const b = new BlockList();
  b.addSubnet(net, prefix, type);
  return { kind, b, type };
});

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address carries. */
function embeddedV4(ip: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2] as string, 16);
  const lo = parseInt(m[3] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** What kind of address an IP literal is (the first matching range wins; metadata before link-local). */
export function addressKind(ip: string): AddressKind {
  const v4 = isIP(ip) === 6 ? embeddedV4(ip.toLowerCase()) : undefined;
  const a = v4 ?? ip;
  const type = isIP(a) === 4 ? 'ipv4' : isIP(a) === 6 ? 'ipv6' : undefined;
  if (!type) return 'reserved';
  for (const l of lists) if (l.type === type && l.b.check(a, type)) return l.kind;
  return 'public';
}

/** Whether an SERVICE_NETWORK_ALLOW_PRIVATE entry (host, IP or CIDR) lets `host` connect to `ip`. */
export function privateAllowed(entries: readonly string[], host: string, ip: string): boolean {
  for (const e of entries) {
    const [net, bits] = e.split('/') as [string, string | undefined];
    const family = isIP(net);
    if (family === 0) {
      if (normalizeHost(net) === host) return true;
      continue;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const target = isIP(ip) === 6 && family === 4 ? embeddedV4(ip.toLowerCase()) : ip;
    if (!target || isIP(target) !== family) continue;
    const b = new BlockList();
    if (bits === undefined) b.addAddress(net, type);
    else b.addSubnet(net, Number(bits), type);
    if (b.check(target, type)) return true;
  }
  return false;
}
