// ngrok v3 (docs/remote-access.md#providers): with `--log stdout --log-format json` it prints a line with
// `"msg":"started tunnel"` and `"url"`, and its agent API (`"msg":"starting web service"`, `addr`, usually
// 127.0.0.1:4040) lists `public_url` under `GET /api/tunnels`. ngrok forwards the public Host header. With
// `--name <reserved domain>` (`ngrok http … --url https://<domain>`) the name is stable and known before
// anything starts, so it is pinned as SERVICE_SERVER_URL.
import { isLoopbackHostname } from '../../core/hosts.js';
import { getLocalJson, httpsOrigin, originOfName, type Provider, type ProviderOptions } from './provider.js';

function parseJson(line: string): Record<string, unknown> | undefined {
  const start = line.indexOf('{');
  if (start < 0) return undefined;
  try {
    const v = JSON.parse(line.slice(start)) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function ngrok(o: ProviderOptions): Provider {
  const reserved = o.name ? originOfName(o.name) : undefined;
  let port = o.port;
  return {
    id: 'ngrok',
    cli: 'ngrok',
    install:
      'install it from https://ngrok.com/download (macOS: brew install ngrok; Linux: snap install ngrok), then run ngrok config add-authtoken <your token>',
    order: 'server-first',
    stable: reserved !== undefined,
    describe: reserved
      ? 'ngrok on your reserved domain (the same address on every run)'
      : 'ngrok (the address may change between runs unless you pass --name <your ngrok domain>)',
    knownOrigin: reserved,
    exitHint:
      'ngrok needs your account token once (ngrok config add-authtoken <token>); a reserved --name must belong to that account',
    invalid: () =>
      o.name && !reserved
        ? `--name ${o.name} is not a domain name; give your reserved ngrok domain, e.g. --name my-name.ngrok-free.app`
        : undefined,
    argv(p) {
      port = p;
      const args = ['http', `http://127.0.0.1:${p}`, '--log', 'stdout', '--log-format', 'json'];
      return reserved ? [...args, '--url', reserved] : args;
    },
    fromLine(line) {
      const j = parseJson(line);
      if (!j) return undefined;
      if (j.msg === 'started tunnel' && typeof j.url === 'string') {
        const origin = httpsOrigin(j.url);
        return origin ? { origin } : undefined;
      }
      if (j.lvl === 'crit' && typeof j.err === 'string') return { error: `ngrok: ${j.err}` };
      return undefined;
    },
    apiFromLine(line) {
      const j = parseJson(line);
      if (j?.msg !== 'starting web service' || typeof j.addr !== 'string') return undefined;
      const host = j.addr.replace(/:\d+$/, '');
      return isLoopbackHostname(host) ? `http://${j.addr}` : undefined;
    },
    async fromApi(base) {
      const doc = (await getLocalJson(`${base}/api/tunnels`)) as { tunnels?: unknown } | undefined;
      const tunnels = Array.isArray(doc?.tunnels) ? (doc.tunnels as Array<Record<string, unknown>>) : [];
      const ours = tunnels.filter((t) => {
        const addr = (t.config as { addr?: unknown } | undefined)?.addr;
        return typeof addr === 'string' && new RegExp(`:${port}/?$`).test(addr);
      });
      for (const t of ours.length > 0 ? ours : tunnels) {
        const origin = typeof t.public_url === 'string' ? httpsOrigin(t.public_url) : undefined;
        if (origin) return origin;
      }
      return undefined;
    },
  };
}
