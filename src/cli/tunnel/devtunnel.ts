// Microsoft dev tunnels (docs/remote-access.md#providers): `devtunnel host` prints `Connect via browser:
// https://<id>-<port>.<region>.devtunnels.ms` (older CLIs: `Hosting port N at https://…`), then `Ready to
// accept connections for tunnel: <id>`. Without --name it hosts a temporary tunnel, deleted when it stops,
// with anonymous access; with --name it hosts a tunnel made by `devtunnel create` (a stable address). The
// relay rewrites Host to localhost:<port>, so the origin it prints is always pinned as SERVICE_SERVER_URL,
// which needs devtunnel to start first, on a fixed port (the port is part of the address).
import { httpsOrigin, type Provider, type ProviderOptions } from './provider.js';

const TUNNEL_URL = /https:\/\/[a-z0-9]+-(\d+)\.[a-z0-9]+\.devtunnels\.ms\b/gi;

export function devtunnel(o: ProviderOptions): Provider {
  const seenPorts = new Set<string>();
  return {
    id: 'devtunnel',
    cli: 'devtunnel',
    install:
      'install it with curl -sL https://aka.ms/DevTunnelCliInstall | bash (macOS: brew install --cask devtunnel; Windows: winget install Microsoft.devtunnel), then run devtunnel user login',
    order: 'provider-first',
    stable: o.name !== undefined,
    describe: o.name
      ? `the dev tunnel ${o.name} (the same address on every run)`
      : 'a temporary dev tunnel (deleted when this stops; see --name for a lasting one)',
    exitHint: o.name
      ? `devtunnel needs a login (devtunnel user login), and the tunnel ${o.name} needs port ${o.port} (devtunnel port create ${o.name} -p ${o.port}) and anonymous access (devtunnel access create ${o.name} --anonymous)`
      : 'devtunnel needs a login first: devtunnel user login',
    invalid: () =>
      o.port === 0
        ? 'devtunnel needs a fixed port (it is part of the tunnel address): use --port N, or leave the default 8765'
        : o.name !== undefined && !/^[a-z0-9][a-z0-9.-]*$/i.test(o.name)
          ? `--name ${o.name} is not a dev tunnel id (letters, digits, dots and dashes)`
          : undefined,
    // A named tunnel carries its own ports and access rules; a temporary one is opened to anonymous clients,
    // because MCP clients cannot sign in to Microsoft or GitHub (the server's own auth still applies).
    argv: (port) => (o.name ? ['host', o.name] : ['host', '-p', String(port), '--allow-anonymous']),
    fromLine(line) {
      if (/Connect via browser:|Hosting port/i.test(line)) {
        for (const m of line.matchAll(TUNNEL_URL)) {
          seenPorts.add(m[1] as string);
          const origin = m[1] === String(o.port) ? httpsOrigin(m[0]) : undefined;
          if (origin) return { origin };
        }
      }
      if (/Ready to accept connections/i.test(line) && seenPorts.size > 0) {
        return {
          error: `the dev tunnel forwards port ${[...seenPorts].join(', ')}, not ${o.port}: add it (devtunnel port create ${o.name ?? '<id>'} -p ${o.port}) or pass --port ${[...seenPorts][0]}`,
        };
      }
      return undefined;
    },
  };
}
