// cloudflared quick tunnel (docs/remote-access.md#providers): `cloudflared tunnel --url
// http://127.0.0.1:PORT` prints a box with `https://<words>.trycloudflare.com` on stderr, and its `--metrics`
// server answers `GET /quicktunnel` with `{"hostname": …}`. The name is new on every run, so nothing is
// pinned: cloudflared forwards the public Host header, from which the server derives its origin. Only a
// quick tunnel's name counts (dash-joined words: never `api.trycloudflare.com`, which its errors name), and a
// line saying the quick tunnel could not be requested ends the wait at once with cloudflared's own words.
import { isLoopbackHostname } from '../../core/hosts.js';
import { getLocalJson, httpsOrigin, type Provider, type ProviderOptions } from './provider.js';

const QUICK_URL = /https:\/\/[a-z0-9]+(?:-[a-z0-9]+)+\.trycloudflare\.com\b/i;
/** cloudflared's words when it cannot get a quick tunnel (offline, api.trycloudflare.com refusing, …). */
const QUICK_FAILED = /(?:failed to|error) (?:request(?:ing)?|unmarshal(?:ing)?) (?:a )?quick ?tunnel/i;
const METRICS = /Starting metrics server on ([^\s/]+)\/metrics/i;

export function cloudflared(o: ProviderOptions): Provider {
  return {
    id: 'cloudflared',
    cli: 'cloudflared',
    install:
      "install it from https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/ (macOS: brew install cloudflared; Debian/Ubuntu: Cloudflare's apt repository)",
    order: 'server-first',
    stable: false,
    describe: 'a cloudflared quick tunnel (a new address on every run)',
    invalid: () =>
      o.name
        ? '--name is for ngrok reserved domains and devtunnel named tunnels; for a named Cloudflare tunnel run cloudflared yourself and start the server with --server-url https://<your-hostname>'
        : undefined,
    // --no-autoupdate: cloudflared must never download anything on our behalf (docs/design-notes.md#nothing-is-downloaded).
    argv: (port) => [
      'tunnel',
      '--no-autoupdate',
      '--url',
      `http://127.0.0.1:${port}`,
      '--metrics',
      '127.0.0.1:0',
    ],
    fromLine(line) {
      if (QUICK_FAILED.test(line))
        return {
          error: `cloudflared could not get a quick tunnel: ${line.replace(/^\S*\d\S*Z\s+(?:ERR|FTL|WRN)\s+/, '').trim()} (is this machine online, and may it reach api.trycloudflare.com?)`,
        };
      const m = QUICK_URL.exec(line);
      const origin = m ? httpsOrigin(m[0]) : undefined;
      return origin ? { origin } : undefined;
    },
    apiFromLine(line) {
      const addr = METRICS.exec(line)?.[1];
      if (!addr) return undefined;
      const host = addr.replace(/:\d+$/, '');
      return isLoopbackHostname(host) ? `http://${addr}` : undefined;
    },
    async fromApi(base) {
      const doc = (await getLocalJson(`${base}/quicktunnel`)) as { hostname?: unknown } | undefined;
      const host = typeof doc?.hostname === 'string' ? doc.hostname : '';
      return host ? httpsOrigin(`https://${host}`) : undefined;
    },
  };
}
