// The two waits of `workbench-mcp tunnel`: for the provider to name its public origin (an output line, or its
// local API once a line announces it), and for https://<host>/.well-known/mcp.json to answer through the tunnel
// with this server's card (new names can take a while to resolve). Each is ended by the caller's ceiling.
import type { Config } from '../../config/load.js';
import type { Child } from '../../process/supervised.js';
import type { Provider } from './provider.js';

export type OriginResult = { origin: string } | { error: string };

/** Watches the provider's output (and API) until it names its public origin or reports an error. */
export function watchOrigin(p: Provider, child: Child): { result: Promise<OriginResult>; cancel(): void } {
  let cancelled = false;
  let polling = false;
  let settle!: (r: OriginResult) => void;
  const result = new Promise<OriginResult>((r) => (settle = r));
  const poll = async (base: string) => {
    while (!cancelled) {
      const origin = await p.fromApi?.(base);
      if (origin) return settle({ origin });
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  child.onLine((line) => {
    if (cancelled) return;
    const r = p.fromLine(line);
    if (r) return settle(r);
    const api = p.apiFromLine?.(line);
    if (api && !polling) {
      polling = true;
      void poll(api);
    }
  });
  return { result, cancel: () => void (cancelled = true) };
}

/** A short description of why a fetch failed: the system error code when there is one. */
export function fetchFailure(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'no answer (timeout)';
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

export type Reach = { ok: true; warnings: string[] } | { ok: false; last: string };

/** Polls the server card through the tunnel until it is this server's, or the ceiling passes. */
export async function waitReachable(
  origin: string,
  config: Config,
  ceilingMs: number,
  cancelled: () => boolean,
): Promise<Reach> {
  const end = Date.now() + ceilingMs;
  let last = 'no attempt yet';
  let pause = 500;
  while (Date.now() < end && !cancelled()) {
    try {
      const res = await fetch(`${origin}/.well-known/mcp.json`, {
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      let name: unknown;
      try {
        name = (JSON.parse(text) as { server?: { name?: unknown } }).server?.name;
      } catch {
        name = undefined;
      }
      if (res.status === 200 && name === 'workbench-mcp')
        return { ok: true, warnings: await warnings(origin, config) };
      last = `HTTP ${res.status}${res.headers.get('location') ? ` to ${res.headers.get('location')}` : ''}`;
    } catch (e) {
      last = fetchFailure(e);
    }
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, 3_000);
  }
  return { ok: false, last };
}

/** In OAuth mode the metadata must name the public origin, or clients are sent to 127.0.0.1. */
async function warnings(origin: string, config: Config): Promise<string[]> {
  if (config.authMode !== 'oauth') return [];
  try {
    const res = await fetch(`${origin}/.well-known/oauth-authorization-server`, {
      signal: AbortSignal.timeout(15_000),
    });
    const issuer = ((await res.json()) as { issuer?: unknown }).issuer;
    if (issuer === origin) return [];
    return [
      `the OAuth metadata names ${String(issuer)}, not ${origin}: clients would be sent there; set SERVICE_SERVER_URL=${origin}`,
    ];
  } catch (e) {
    return [
      `could not read the OAuth metadata through the tunnel (${fetchFailure(e)}); run workbench-mcp doctor`,
    ];
  }
}
