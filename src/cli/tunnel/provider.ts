// What a tunnel provider module tells `workbench-mcp tunnel` (docs/remote-access.md): its CLI name and
// install hint, the argv that publishes a loopback port, how its output or local API names the public URL,
// whether that name is stable, and whether it must start before the server (so its URL can be pinned as
// SERVICE_SERVER_URL). Shared helpers: finding a CLI on PATH (never downloading one) and normalising an
// origin.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export const PROVIDER_IDS = ['cloudflared', 'ngrok', 'devtunnel'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export interface ProviderOptions {
  /** The loopback port the server listens on (0 only for providers that start after the server). */
  port: number;
  /** A stable name: an ngrok reserved domain, or the id of a devtunnel made with `devtunnel create`. */
  name?: string;
}

/** One output line read: the public origin it names, an error that ends the wait, or nothing. */
export type LineResult = { origin: string } | { error: string } | undefined;

export interface Provider {
  readonly id: ProviderId;
  /** Executable looked up on PATH. */
  readonly cli: string;
  /** One line: how to install the CLI (nothing is downloaded for the user). */
  readonly install: string;
  /**
   * `server-first`: the provider is pointed at the running server's port (which may be `--port 0`).
   * `provider-first`: the provider starts first on a fixed port and the origin it prints is pinned as
   * SERVICE_SERVER_URL when the server starts.
   */
  readonly order: 'server-first' | 'provider-first';
  /** Whether the public host name survives a restart. */
  readonly stable: boolean;
  /** Short description for the printed block. */
  readonly describe: string;
  /** A public origin known before anything starts (a reserved name): pinned as SERVICE_SERVER_URL. */
  readonly knownOrigin?: string;
  /** Said after the provider's last output lines when it exits on its own. */
  readonly exitHint?: string;
  /** A message when the options cannot work with this provider (exit 2). */
  invalid(): string | undefined;
  argv(port: number): string[];
  fromLine(line: string): LineResult;
  /** The base URL of a local API that an output line announces (cloudflared metrics, ngrok agent API). */
  apiFromLine?(line: string): string | undefined;
  /** Asks that local API for the public origin; undefined while it has none yet. */
  fromApi?(apiBase: string): Promise<string | undefined>;
}

/** `https://host[:port]` of a URL, or undefined unless it is an https URL with a plausible host name. */
export function httpsOrigin(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' || !/^[a-z0-9.-]+$/i.test(u.hostname) || !u.hostname.includes('.'))
    return undefined;
  return u.origin;
}

/** A reserved name as given (`foo.ngrok.app` or `https://foo.ngrok.app/`) → its origin. */
export function originOfName(name: string): string | undefined {
  return httpsOrigin(/^https?:\/\//i.test(name) ? name.replace(/^http:/i, 'https:') : `https://${name}`);
}

/** The executable `cli` on the PATH given (the server's environment), or undefined. */
export function findOnPath(cli: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, cli);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** GET a small JSON document from a provider's local API (loopback only); undefined on any failure. */
export async function getLocalJson(url: string): Promise<unknown> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) return undefined;
    return (await res.json()) as unknown;
  } catch {
    return undefined;
  }
}
