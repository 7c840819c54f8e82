// IP addresses as numbers (docs/security-model.md#network-per-mode): every spelling an authority may carry —
// IPv4 in short, decimal, octal or hex form (`127.1`, `2130706433`, `0177.0.0.1`, `0x7f.0.0.1`), a trailing dot,
// IPv6 in any case, zero padding or compression, with an IPv4 tail, in brackets, with a zone id (`%eth0`, or
// `%25eth0` as a URL encodes it) — becomes one number, and one canonical text. Parsing is Node's WHATWG URL
// host parser (what browsers and Node's own clients use); the number is read back from its serialisation, so
// the range checks (src/process/net/net-allow.ts) compare numbers, never spellings.

export interface Ip {
  family: 4 | 6;
  /** The address as an unsigned number (32 or 128 bits). */
  value: bigint;
}

/** The characters an IPv4 spelling (or a host name) may hold; anything else never reaches the URL parser. */
const NAME_CHARS = /^[a-z0-9_.-]+$/;
const V6_CHARS = /^[0-9a-f:.]+$/;
/** A zone id after `%` (or `%25`): an interface name or number. */
const ZONE = /^(?:25)?[a-z0-9_.-]{1,32}$/;

/** The WHATWG URL parser's host for `http://<host>/`; undefined when it refuses it. */
function urlHost(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}

/** An IPv6 literal without brackets, with or without a zone id; undefined when malformed. */
function parseV6(text: string): Ip | undefined {
  const pct = text.indexOf('%');
  const addr = pct < 0 ? text : text.slice(0, pct);
  if (pct >= 0 && !ZONE.test(text.slice(pct + 1))) return undefined;
  if (!V6_CHARS.test(addr)) return undefined;
  const h = urlHost(`[${addr}]`);
  if (!h) return undefined;
  // The serialisation is hex groups with at most one `::` and never an IPv4 tail.
  const [head, tail] = h.slice(1, -1).split('::') as [string, string | undefined];
  const a = head ? head.split(':') : [];
  const b = tail ? tail.split(':') : [];
  const groups = tail === undefined ? a : [...a, ...Array<string>(8 - a.length - b.length).fill('0'), ...b];
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(parseInt(g, 16));
  return groups.length === 8 ? { family: 6, value } : undefined;
}

/**
 * An IPv4 literal in any form the URL parser knows; undefined when `text` is not one. `invalid` is set when it
 * is not one but looks like one (ends in a number), which no host name may do.
 */
function parseV4(text: string): { ip?: Ip; invalid?: true } {
  if (!NAME_CHARS.test(text)) return {};
  // The URL parser reads a host as IPv4 only when its last label (a trailing dot aside) is a number; any other
  // host is a name to it, and needs no parse here.
  const labels = text.split('.');
  if (labels.length > 1 && labels.at(-1) === '') labels.pop();
  if (!/^(?:\d+|0x[0-9a-f]*)$/.test(labels.at(-1) as string)) return {};
  const h = urlHost(text);
  if (h === undefined) return { invalid: true };
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(h);
  if (!m) return {};
  const value = m.slice(1).reduce((n, o) => (n << 8n) | BigInt(o), 0n);
  return { ip: { family: 4, value } };
}

/** An IP literal in any spelling (brackets, zone id and a trailing dot allowed); undefined when it is not one. */
export function parseIp(raw: string): Ip | undefined {
  const h = raw.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) return parseV6(h.slice(1, -1));
  if (h.includes(':')) return parseV6(h);
  return parseV4(h).ip;
}

/**
 * What a host text is: an IP literal, a name, or neither (`bad`: it cannot be a host, e.g. `1.2.3.09`,
 * `[::1` or `fe80::1%x y`).
 */
export function hostKind(raw: string): { ip: Ip } | { name: string } | { bad: true } {
  const h = raw.trim().toLowerCase();
  if (h.startsWith('[') || h.includes(':')) {
    const ip = parseIp(h);
    return ip ? { ip } : { bad: true };
  }
  const v4 = parseV4(h);
  if (v4.ip) return { ip: v4.ip };
  return v4.invalid ? { bad: true } : { name: h };
}

/** The IPv4 address of the low 32 bits of `v`. */
export function v4(v: bigint): Ip {
  return { family: 4, value: v & 0xffffffffn };
}

function dotted(v: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.');
}

/**
 * The canonical text of an address: IPv4 dotted decimal; IPv6 in lower case with the longest run of zero
 * groups compressed (RFC 5952), an IPv4-mapped address with its IPv4 dotted (`::ffff:127.0.0.1`).
 */
export function formatIp(ip: Ip): string {
  if (ip.family === 4) return dotted(ip.value);
  if (ip.value >> 32n === 0xffffn) return `::ffff:${dotted(ip.value)}`;
  const g = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((s) => Number((ip.value >> s) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = g.map((n) => n.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** The canonical text of an IP literal in any spelling; undefined when it is not one. */
export function canonicalIp(raw: string): string | undefined {
  const ip = parseIp(raw);
  return ip ? formatIp(ip) : undefined;
}

/** `address/bits` or a lone address (all its bits); undefined when malformed. */
export function parseCidr(entry: string): { ip: Ip; bits: number } | undefined {
  const [net, bits, extra] = entry.trim().split('/');
  if (extra !== undefined || net === undefined) return undefined;
  const ip = parseIp(net);
  if (!ip) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  if (bits === undefined) return { ip, bits: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return { ip, bits: Number(bits) };
}

/** Whether `ip` lies in `net`/`bits` (same family only). */
export function inPrefix(ip: Ip, net: Ip, bits: number): boolean {
  if (ip.family !== net.family) return false;
  const shift = BigInt((ip.family === 4 ? 32 : 128) - bits);
  return ip.value >> shift === net.value >> shift;
}
