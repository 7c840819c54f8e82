// The network settings of `safe` mode (docs/tools.md#network-in-safe-mode): the syntax of the host patterns in
// SERVICE_NETWORK_ALLOW / SERVICE_NETWORK_DENY and of the entries of SERVICE_NETWORK_ALLOW_PRIVATE, checked at
// start so a typo stops the server with the variable's name; and the test-only resolver WB_TEST_RESOLVE
// (`name=address[|address…],…`), which maps host names to addresses for the proxy so tests can serve a stand-in
// registry on loopback under a real registry's name. Unset, it does nothing; it is never a SERVICE_* setting.
import { isIP } from 'node:net';
import { formatIp, hostKind, parseCidr } from './ip-address.js';

/**
 * A host as compared: an IP literal in any spelling becomes its canonical address (src/config/ip-address.ts:
 * `[0:0::ffff:7f00:0001]` and `2130706433` are `::ffff:127.0.0.1` and `127.0.0.1`); a name is lower case
 * without a trailing dot. Undefined when it is neither (then nothing may pass it on).
 */
export function normalizeHost(raw: string): string | undefined {
  const k = hostKind(raw);
  if ('bad' in k) return undefined;
  if ('ip' in k) return formatIp(k.ip);
  let h = k.name;
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.length === 0 || h.length > 253) return undefined;
  return /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(h)
    ? h
    : undefined;
}

/** `*`, `host`, `*.domain` or an IP literal. */
export function isHostPattern(p: string): boolean {
  if (p === '*') return true;
  return normalizeHost(p.startsWith('*.') ? p.slice(2) : p) !== undefined;
}

/** A host name, an IP (any spelling), or an IP/prefix. */
export function isPrivateEntry(e: string): boolean {
  if (e.includes('/')) return parseCidr(e) !== undefined;
  return normalizeHost(e) !== undefined;
}

/** The first entry of `list` that `ok` refuses, or undefined. */
export function badEntry(list: readonly string[], ok: (s: string) => boolean): string | undefined {
  return list.find((s) => !ok(s));
}

/** WB_TEST_RESOLVE=name=address[|address],…: host → addresses, or a message naming what is malformed. */
export function testResolve(raw: string | undefined): Record<string, string[]> | string | undefined {
  if (!raw) return undefined;
  const out: Record<string, string[]> = {};
  for (const item of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = item.split('=') as [string, string | undefined];
    const host = normalizeHost(name);
    const addresses = (value ?? '').split('|').filter(Boolean);
    if (!host || addresses.length === 0 || addresses.some((a) => isIP(a) === 0))
      return `WB_TEST_RESOLVE: ${JSON.stringify(item)} is not name=address[|address]`;
    out[host] = addresses;
  }
  return out;
}
