// Which IP addresses an outbound fetch of a client's metadata may reach
// (docs/design-notes.md#nothing-is-downloaded; CIMD draft §8.6 SSRF): public unicast only. Private (RFC 1918,
// fc00::/7), loopback, link-local, carrier-grade NAT, documentation, benchmarking, multicast, reserved and
// translation ranges are refused; an IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
// Loopback alone can be let through by the test-only setting.
import { BlockList, isIP } from 'node:net';

const V4_REFUSED: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const V6_REFUSED: Array<[string, number]> = [
  ['::', 96], // unspecified and IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo included
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const refused = new BlockList();
for (const [a, p] of V4_REFUSED) refused.addSubnet(a, p, 'ipv4');
for (const [a, p] of V6_REFUSED) refused.addSubnet(a, p, 'ipv6');
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The 8 groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted), or undefined. */
function groups6(address: string): number[] | undefined {
  let a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (tail) {
    const o = (tail[1] as string).split('.').map(Number);
    a =
      a.slice(0, -(tail[1] as string).length) +
      `${(((o[0] ?? 0) << 8) | (o[1] ?? 0)).toString(16)}:${(((o[2] ?? 0) << 8) | (o[3] ?? 0)).toString(16)}`;
  }
  const [head, rest] = a.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const r = rest ? rest.split(':') : [];
  const fill = rest === undefined ? 0 : 8 - h.length - r.length;
  const all = [...h, ...Array<string>(Math.max(0, fill)).fill('0'), ...r];
  if (all.length !== 8) return undefined;
  return all.map((g) => parseInt(g, 16));
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it carries; other addresses unchanged. */
function unmapped(address: string): { address: string; family: 4 | 6 } {
  if (isIP(address) === 4) return { address, family: 4 };
  const g = groups6(address);
  if (g && g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    const [hi, lo] = [g[6] ?? 0, g[7] ?? 0];
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 4 };
  }
  return { address: address.replace(/^\[|\]$/g, ''), family: 6 };
}

export type AddressVerdict = 'public' | 'loopback' | 'refused';

/** How an IP literal is judged: public, loopback, or refused (private, link-local, reserved…). */
export function classifyAddress(address: string): AddressVerdict {
  const { address: a, family } = unmapped(address);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (isIP(a) === 0) return 'refused';
  if (loopback.check(a, type)) return 'loopback';
  return refused.check(a, type) ? 'refused' : 'public';
}

/** True when a fetch may connect to `address`. */
export function mayConnect(address: string, allowLoopback: boolean): boolean {
  const v = classifyAddress(address);
  return v === 'public' || (v === 'loopback' && allowLoopback);
}
