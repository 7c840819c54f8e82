// Origin and Host judgements (docs/http.md#order-of-checks, noauth rules). An Origin is allowed
// when it is exactly a loopback origin (any port) or an exact entry of SERVICE_ALLOWED_ORIGINS; lookalikes
// (`http://localhost.evil.example`, userinfo, paths, `null`) are not.
import { isIP } from 'node:net';

export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}

/** `Host` header value → hostname, or undefined when malformed. */
export function hostnameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/@]+)(?::(\d{1,5}))?$/.exec(hostHeader.trim());
  return m ? (m[1] as string) : undefined;
}

export function isLoopbackHostHeader(hostHeader: string | undefined): boolean {
  const h = hostnameOf(hostHeader);
  return h !== undefined && isLoopbackHostname(h);
}

export function isAllowedOrigin(origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes(origin)) return true;
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  // The header must be a bare origin: no userinfo, path, query or fragment, spelled as URL would spell it.
  if (u.origin !== origin.toLowerCase().replace(/\/$/, '') || origin.endsWith('/')) return false;
  return isLoopbackHostname(u.hostname);
}

/** Headers a proxy, tunnel or CDN adds on the way in; any of them means the caller is not local (noauth). */
export const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-server',
  'x-original-forwarded-for',
  'x-real-ip',
  'via',
  'cf-connecting-ip',
  'true-client-ip',
];

/** The first sign that a request came through a proxy: a forwarding header, or a Host header sent twice (a
 *  proxy that appends instead of replacing). undefined for a plain local request. */
export function proxySign(
  headers: NodeJS.Dict<string | string[]>,
  distinctHost?: string[],
): string | undefined {
  const forwarded = FORWARDING_HEADERS.find((h) => headers[h] !== undefined);
  if (forwarded) return forwarded;
  if (distinctHost && distinctHost.length > 1) return 'a repeated Host header';
  return undefined;
}
