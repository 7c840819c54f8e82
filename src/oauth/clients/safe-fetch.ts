// The one outbound HTTP request the server makes: GET of a client's metadata (a Client ID Metadata Document
// or its JWKS) under the CIMD draft's §8 rules and docs/design-notes.md#nothing-is-downloaded. https only;
// the host name is resolved here, every address it resolves to must be public (public-address.ts), and the
// socket connects to the address that was checked (no second lookup to rebind); redirects are refused, not
// followed; one deadline covers lookup, connect, TLS and body; the body is capped; the media type must be
// JSON.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { mayConnect } from './public-address.js';
import { systemClock } from '../../core/clock.js';

export interface SafeFetchOptions {
  /** Test-only setting (WB_TEST_CIMD_ALLOW_LOOPBACK): loopback addresses may be reached. */
  allowLoopback: boolean;
  timeoutMs: number;
  maxBytes: number;
  /** Extra trusted CA certificates (in-process tests); spawned servers use NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer;
}

export type SafeFetchResult =
  { ok: true; text: string; cacheControl?: string } | { ok: false; reason: string; transient?: boolean };

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    ),
  );
}

/** The address to connect to: every address of `host` checked, the first one used. */
async function checkedAddress(
  host: string,
  allowLoopback: boolean,
): Promise<{ ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string }> {
  const literal = host.replace(/^\[|\]$/g, '');
  const addresses: LookupAddress[] =
    isIP(literal) !== 0
      ? [{ address: literal, family: isIP(literal) }]
      : await resolveAll(host).catch(() => [] as LookupAddress[]);
  if (addresses.length === 0) return { ok: false, reason: `the host ${host} does not resolve` };
  const bad = addresses.find((a) => !mayConnect(a.address, allowLoopback));
  if (bad)
    return {
      ok: false,
      reason: `the host ${host} resolves to ${bad.address}, a private, loopback or reserved address; client metadata is fetched only from public addresses`,
    };
  const first = addresses[0] as LookupAddress;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A lookup that answers with the already-checked address, in both shapes node:net may ask for. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_host, options, cb) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
}

function isJsonMediaType(contentType: string | undefined): boolean {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return media === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(media);
}

/** GET `url` as JSON text under the rules above; never throws. */
export async function safeFetchJson(url: URL, o: SafeFetchOptions): Promise<SafeFetchResult> {
  if (url.protocol !== 'https:') return { ok: false, reason: 'only https URLs are fetched' };
  const deadline = systemClock.monotonic() + o.timeoutMs;
  const target = await Promise.race([
    checkedAddress(url.hostname, o.allowLoopback),
    new Promise<{ ok: false; reason: string }>((r) =>
      setTimeout(() => r({ ok: false, reason: 'resolving the host timed out' }), o.timeoutMs).unref(),
    ),
  ]);
  if (!target.ok) return target;
  return request(url, target.address, target.family, o, Math.max(1, deadline - systemClock.monotonic()));
}

/** Judges and reads a response: 200, JSON media type, at most `maxBytes` (declared or streamed). */
function readResponse(res: IncomingMessage, maxBytes: number, finish: (r: SafeFetchResult) => void): void {
  const status = res.statusCode ?? 0;
  const fail = (reason: string, transient = false) => {
    res.destroy();
    finish({ ok: false, reason, transient });
  };
  if (status >= 300 && status < 400)
    return fail(`it answered ${status} (a redirect); redirects are not followed`);
  if (status !== 200) return fail(`it answered HTTP ${status} instead of 200`, status >= 500);
  if (!isJsonMediaType(res.headers['content-type']))
    return fail(`its Content-Type is ${res.headers['content-type'] ?? 'missing'}, not application/json`);
  if (Number(res.headers['content-length'] ?? 0) > maxBytes)
    return fail(`it is larger than ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    size += c.length;
    if (size > maxBytes) return fail(`it is larger than ${maxBytes} bytes`);
    chunks.push(c);
  });
  res.on('end', () => {
    const cc = res.headers['cache-control'];
    finish({ ok: true, text: Buffer.concat(chunks).toString('utf8'), cacheControl: cc });
  });
  res.on('error', () => finish({ ok: false, reason: 'the connection failed', transient: true }));
}

function request(
  url: URL,
  address: string,
  family: 4 | 6,
  o: SafeFetchOptions,
  remainingMs: number,
): Promise<SafeFetchResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: SafeFetchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = https.request(
      url,
      {
        method: 'GET',
        agent: false,
        lookup: pinnedLookup(address, family),
        ...(o.ca ? { ca: o.ca } : {}),
        headers: { Accept: 'application/json', 'User-Agent': 'workbench-mcp' },
      },
      (res) => readResponse(res, o.maxBytes, finish),
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, reason: `it did not answer within ${o.timeoutMs} ms`, transient: true });
    }, remainingMs);
    req.on('error', (e: NodeJS.ErrnoException) =>
      finish({ ok: false, reason: `the request failed (${e.code ?? e.message})`, transient: true }),
    );
    req.end();
  });
}
