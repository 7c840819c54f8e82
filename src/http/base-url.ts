// The public origin of this server (docs/oauth.md#metadata): SERVICE_SERVER_URL when set; else, only with
// SERVICE_TRUST_PROXY_HEADERS=1, Forwarded / X-Forwarded-Proto + X-Forwarded-Host; else the Host header
// (https for non-loopback hosts, since those arrive through a TLS tunnel).
import type { IncomingMessage } from 'node:http';
import { hostnameOf, isLoopbackHostname } from '../core/hosts.js';

export interface BaseUrlConfig {
  serverUrl?: string;
  trustProxyHeaders: boolean;
}

function first(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s?.split(',')[0]?.trim() || undefined;
}

function fromForwarded(header: string | undefined): { proto?: string; host?: string } {
  if (!header) return {};
  const firstHop = header.split(',')[0] as string;
  const out: { proto?: string; host?: string } = {};
  for (const part of firstHop.split(';')) {
    const [k, v] = part.split('=').map((s) => s.trim());
    if (!k || !v) continue;
    const val = v.replace(/^"|"$/g, '');
    if (k.toLowerCase() === 'proto') out.proto = val;
    if (k.toLowerCase() === 'host') out.host = val;
  }
  return out;
}

export function baseUrl(req: IncomingMessage, cfg: BaseUrlConfig): string {
  if (cfg.serverUrl) return cfg.serverUrl;
  if (cfg.trustProxyHeaders) {
    const fwd = fromForwarded(first(req.headers.forwarded));
    const proto = fwd.proto ?? first(req.headers['x-forwarded-proto']);
    const host = fwd.host ?? first(req.headers['x-forwarded-host']);
    if (host && hostnameOf(host)) return `${proto === 'http' ? 'http' : 'https'}://${host}`;
  }
  const host = req.headers.host ?? '127.0.0.1';
  let url = byHost.get(host);
  if (url === undefined) {
    const name = hostnameOf(host);
    url = `${name && isLoopbackHostname(name) ? 'http' : 'https'}://${host}`;
    // Every request asks (authentication needs it for a challenge); a client sends the same Host each time.
    if (byHost.size >= 64) byHost.clear();
    byHost.set(host, url);
  }
  return url;
}

/** The base URL of each Host header lately seen (bounded: a client choosing Host values only clears it). */
const byHost = new Map<string, string>();
