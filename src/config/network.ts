// The network settings of `safe` mode (docs/tools.md#network-in-safe-mode): the syntax of the host patterns in
// SERVICE_NETWORK_ALLOW / SERVICE_NETWORK_DENY and of the entries of SERVICE_NETWORK_ALLOW_PRIVATE, checked at
// start so a typo stops the server with the variable's name; and the test-only resolver WB_TEST_RESOLVE
// (`name=address[|address…],…`), which maps host names to addresses for the proxy so tests can serve a stand-in
// registry on loopback under a real registry's name. Unset, it does nothing; it is never a SERVICE_* setting.
import { isIP } from 'node:net';

/** A host name or IP literal as compared: lower case, no brackets, no trailing dot; undefined when malformed. */
export function normalizeHost(raw: string): string | undefined {
  let h = raw.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (isIP(h)) return h;
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

/** A host name, an IP, or an IP/prefix. */
export function isPrivateEntry(e: string): boolean {
  const [net, bits, extra] = e.split('/');
  if (extra !== undefined || net === undefined) return false;
  const family = isIP(net);
  if (bits === undefined) return family !== 0 || normalizeHost(net) !== undefined;
  if (!/^\d{1,3}$/.test(bits) || family === 0) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
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
