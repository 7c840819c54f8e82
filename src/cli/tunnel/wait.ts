// The two waits of `workbench-mcp tunnel`: for the provider to name its public origin (an output line, or its
// local API once a line announces it), and for https://<host>/.well-known/mcp.json to answer through the tunnel
// with this server's card (new names can take a while to resolve). Each is ended by the caller's ceiling
// (`--wait`); while one lasts, a line every PROGRESS_MS says what it waits for and what the last attempt met,
// in words (docs/remote-access.md "When the URL does not answer").
import type { Config } from '../../config/load.js';
import type { Child } from '../../process/supervised.js';
import { selfCommand } from '../self.js';
import type { Provider } from './provider.js';
import { systemClock } from '../../core/clock.js';

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

/** How often a wait says that it still waits. */
export const PROGRESS_MS = 5_000;

/** Calls `tick(elapsed seconds)` every PROGRESS_MS until the returned function is called. */
export function progress(tick: (elapsedS: number) => void, everyMs = PROGRESS_MS): () => void {
  const start = systemClock.monotonic();
  const timer = setInterval(() => tick(Math.round((systemClock.monotonic() - start) / 1000)), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** What the last attempt to reach `host` met, in words: name-resolution and TLS failures say what to check. */
export function explainFailure(last: string, host: string): string {
  if (last === 'EAI_AGAIN')
    return `the name ${host} cannot be resolved yet (EAI_AGAIN: the DNS resolver gave no answer). A new tunnel's name can take a minute to appear; if this lasts, this machine's DNS may not reach the internet: check /etc/resolv.conf, a VPN or a firewall`;
  if (last === 'ENOTFOUND')
    return `the name ${host} does not exist yet (ENOTFOUND: the DNS resolver knows no such name). A new tunnel's name can take a minute to appear, and a resolver that remembered the miss may take a few minutes more`;
  if (last === 'ECONNREFUSED') return `${host} refused the connection (ECONNREFUSED)`;
  if (last === 'ECONNRESET' || last === 'UND_ERR_SOCKET' || last === 'other side closed')
    return 'the connection was cut (ECONNRESET): the tunnel is not ready yet, or a proxy or firewall interferes';
  if (/timeout|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT/i.test(last))
    return 'no answer (timeout): the tunnel is not ready yet, or this network blocks outgoing HTTPS';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(last))
    return `its TLS certificate is not trusted (${last}): something on the way intercepts HTTPS (a company proxy?); give Node its CA with NODE_EXTRA_CA_CERTS`;
  const http = /^HTTP (\d+)/.exec(last);
  if (http) {
    const status = Number(http[1]);
    if (status >= 500)
      return `the tunnel answered ${last}: it is not connected to the server yet (it may still be registering)`;
    return `${host} answered ${last}, not this server's card: the name may point at something else`;
  }
  if (last === 'no attempt yet') return 'no answer yet';
  return last;
}

export type Reach = { ok: true; warnings: string[] } | { ok: false; last: string };

/**
 * Polls the server card through the tunnel until it is this server's, or the ceiling passes (a timer: an
 * attempt in flight is cut off then). `onProgress` gets a line every PROGRESS_MS.
 */
export async function waitReachable(
  origin: string,
  config: Config,
  ceilingMs: number,
  cancelled: () => boolean,
  onProgress?: (line: string) => void,
): Promise<Reach> {
  const ceiling = new AbortController();
  const timer = setTimeout(() => ceiling.abort(), ceilingMs);
  timer.unref();
  let last = 'no attempt yet';
  const host = new URL(origin).host;
  const stopProgress = progress((s) =>
    onProgress?.(
      `still waiting for ${origin} to answer (${s} s of ${Math.round(ceilingMs / 1000)} s): ${explainFailure(last, host)}`,
    ),
  );
  try {
    return await attempts();
  } finally {
    stopProgress();
    clearTimeout(timer);
  }

  async function attempts(): Promise<Reach> {
    let pause = 500;
    while (!ceiling.signal.aborted && !cancelled()) {
      try {
        const res = await fetch(`${origin}/.well-known/mcp.json`, {
          redirect: 'manual',
          signal: AbortSignal.any([ceiling.signal, AbortSignal.timeout(15_000)]),
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
        if (!ceiling.signal.aborted) last = fetchFailure(e);
      }
      if (ceiling.signal.aborted) break;
      await pauseUnless(pause, ceiling.signal);
      pause = Math.min(pause * 2, 3_000);
    }
    return { ok: false, last };
  }
}

function pauseUnless(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
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
      `could not read the OAuth metadata through the tunnel (${fetchFailure(e)}); run ${selfCommand(config.env.PATH)} doctor ${origin}/mcp`,
    ];
  }
}
