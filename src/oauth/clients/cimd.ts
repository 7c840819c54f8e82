// Client ID Metadata Documents (MCP 2025-11-25 authorization "Client ID Metadata Documents";
// draft-ietf-oauth-client-id-metadata-document; docs/design-notes.md#nothing-is-downloaded): a client_id that
// is an https URL names a JSON document of the client's metadata. The document is fetched by safe-fetch.ts
// (public addresses only, no redirects, 5 s, 5 KiB), must carry client_id equal to the URL character for
// character, redirect URIs valid like a registration's, and no shared secret; it becomes a public client
// (none) or a private_key_jwt client. Valid documents are cached per URL honouring Cache-Control (bounded in
// time and count); failures are not.
import type { Clock } from '../../core/clock.js';
import { checkMetadataTypes, normaliseMetadata } from '../checks/metadata-types.js';
import { checkRedirectUris } from '../checks/redirect-uris-list.js';
import { narrowGrantTypes, type Client } from '../clients.js';
import { oauthError, type OAuthError } from '../errors.js';
import { safeFetchJson, type SafeFetchOptions } from './safe-fetch.js';

export const CIMD_TIMEOUT_MS = 5_000;
/** The CIMD draft's recommended ceiling (§8.7, "5 kilobytes"). */
export const CIMD_MAX_BYTES = 5 * 1024;
export const CIMD_MAX_ENTRIES = 256;
export const CIMD_DEFAULT_TTL_MS = 10 * 60_000;
export const CIMD_MAX_TTL_MS = 24 * 60 * 60_000;
/** Documents fetched at once; past this, callers are told to retry (no unbounded outbound work). */
export const CIMD_MAX_IN_FLIGHT = 8;

export interface CimdOptions {
  clock: Clock;
  /** false: no document is fetched or advertised (SERVICE_OAUTH_CLIENT_METADATA_DOCUMENTS=0). */
  enabled?: boolean;
  allowLoopback: boolean;
  ca?: string | Buffer;
  timeoutMs?: number;
}

export type ClientLookup = { ok: true; client: Client } | { ok: false; error: OAuthError };

/** True when `clientId` is meant as a metadata document URL (the draft's §3 trigger: an https URL). */
export function isCimdClientId(clientId: string | undefined): clientId is string {
  return typeof clientId === 'string' && clientId.startsWith('https://');
}

/** Why `id` cannot be a client_id URL (draft §3): https, a path, no fragment, no userinfo, no dot segments. */
export function cimdUrlProblem(id: string): string | undefined {
  if (id.length > 2000) return 'the client_id URL is longer than 2000 characters';
  let u: URL;
  try {
    u = new URL(id);
  } catch {
    return 'the client_id is not a valid URL';
  }
  if (u.protocol !== 'https:') return 'a client_id URL must use https';
  if (u.username || u.password) return 'a client_id URL must not carry user information';
  if (id.includes('#')) return 'a client_id URL must not have a fragment';
  const rawPath = id.replace(/^https:\/\/[^/?#]*/i, '').split(/[?#]/)[0] ?? '';
  if (rawPath === '' || rawPath === '/') return 'a client_id URL must have a path (e.g. /client.json)';
  if (rawPath.split('/').some((seg) => seg === '.' || seg === '..'))
    return 'a client_id URL must not contain . or .. path segments';
  return undefined;
}

function invalid(url: string, why: string): OAuthError {
  return oauthError(
    'invalid_client',
    `The application's client metadata document ${url} cannot be used: ${why}`,
    400,
  );
}

function keysOf(m: Record<string, unknown>, url: string): { jwks?: Client['jwks']; error?: OAuthError } {
  if (typeof m.jwks_uri === 'string') {
    if (!m.jwks_uri.startsWith('https://')) return { error: invalid(url, 'jwks_uri must be an https URL') };
    return { jwks: { uri: m.jwks_uri } };
  }
  const jwks = m.jwks as { keys?: unknown } | undefined;
  if (jwks && typeof jwks === 'object' && Array.isArray(jwks.keys)) return { jwks: { keys: jwks.keys } };
  return { error: invalid(url, 'private_key_jwt needs jwks_uri or jwks with the public keys') };
}

/** The client a fetched document describes, or why it cannot be one. Pure: exported for tests. */
export function clientFromDocument(url: string, text: string, issuedAt: number): ClientLookup {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, error: invalid(url, 'it is not valid JSON') };
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return { ok: false, error: invalid(url, 'it is not a JSON object') };
  const m = normaliseMetadata(doc as Record<string, unknown>);
  // A loopback URI written with a wildcard port (`http://localhost:*/callback`, as some document generators
  // write it) means what a portless one means under RFC 8252 §7.3: any port.
  if (Array.isArray(m.redirect_uris))
    m.redirect_uris = m.redirect_uris.map((u: unknown) =>
      typeof u === 'string'
        ? u.replace(/^(http:\/\/(?:localhost|127\.0\.0\.1|\[::1\])):\*(?=[/?]|$)/, '$1')
        : u,
    );
  if (m.client_id !== url)
    return { ok: false, error: invalid(url, 'its client_id is not exactly the URL it was fetched from') };
  if (m.client_secret !== undefined || m.client_secret_expires_at !== undefined)
    return { ok: false, error: invalid(url, 'a metadata document must not carry a client secret') };
  const structural = checkRedirectUris(m) ?? checkMetadataTypes(m);
  if (structural) return { ok: false, error: invalid(url, structural.description) };
  const method = m.token_endpoint_auth_method ?? 'none';
  let jwks: Client['jwks'];
  if (method === 'private_key_jwt') {
    const k = keysOf(m, url);
    if (k.error) return { ok: false, error: k.error };
    jwks = k.jwks;
  } else if (method !== 'none') {
    return {
      ok: false,
      error: invalid(
        url,
        `token_endpoint_auth_method ${JSON.stringify(method)} is not allowed; a metadata document client uses none or private_key_jwt`,
      ),
    };
  }
  const host = new URL(url).host;
  const name = typeof m.client_name === 'string' && m.client_name.trim() ? m.client_name.trim() : undefined;
  const client: Client = {
    clientId: url,
    authMethods: [method],
    redirectUris: [...(m.redirect_uris as string[])],
    grantTypes: narrowGrantTypes(m.grant_types),
    clientName: name ?? host,
    issuedAt,
    preRegistered: false,
    extra: {},
    documentHost: host,
    ...(jwks ? { jwks } : {}),
  };
  return { ok: true, client };
}

/** How long a valid document may be reused: its max-age (no-store/no-cache: not at all), else the default. */
export function cacheLifetimeMs(cacheControl: string | undefined): number {
  const cc = (cacheControl ?? '').toLowerCase();
  if (/\b(no-store|no-cache)\b/.test(cc)) return 0;
  const maxAge = /\bmax-age=(\d+)/.exec(cc)?.[1];
  if (maxAge !== undefined) return Math.min(Number(maxAge) * 1000, CIMD_MAX_TTL_MS);
  return CIMD_DEFAULT_TTL_MS;
}

interface Entry {
  client: Client;
  expiresAt: number;
}

export class CimdResolver {
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<ClientLookup>>();

  constructor(private readonly o: CimdOptions) {}

  /** The fetch rules, shared with the JWKS fetch of private_key_jwt clients. */
  fetchOptions(maxBytes = CIMD_MAX_BYTES): SafeFetchOptions {
    return {
      allowLoopback: this.o.allowLoopback,
      timeoutMs: this.o.timeoutMs ?? CIMD_TIMEOUT_MS,
      maxBytes,
      ca: this.o.ca,
    };
  }

  /** The client a client_id URL names: from the cache, else fetched (one fetch per URL at a time). */
  /** Whether documents are accepted (and advertised in the authorization-server metadata). */
  get enabled(): boolean {
    return this.o.enabled !== false;
  }

  resolve(url: string): Promise<ClientLookup> {
    if (!this.enabled) {
      const why =
        'this server does not accept client metadata documents (SERVICE_OAUTH_CLIENT_METADATA_DOCUMENTS=0); ' +
        'the application has to register (dynamic client registration) instead';
      return Promise.resolve({ ok: false, error: invalid(url, why) });
    }
    const problem = cimdUrlProblem(url);
    if (problem) return Promise.resolve({ ok: false, error: invalid(url, problem) });
    const hit = this.cache.get(url);
    if (hit && hit.expiresAt > this.o.clock.now()) return Promise.resolve({ ok: true, client: hit.client });
    if (hit) this.cache.delete(url);
    const pending = this.inFlight.get(url);
    if (pending) return pending;
    if (this.inFlight.size >= CIMD_MAX_IN_FLIGHT) {
      return Promise.resolve({
        ok: false,
        error: oauthError(
          'temporarily_unavailable',
          'Too many client metadata documents are being fetched; try again in a few seconds',
        ),
      });
    }
    const p = this.fetchAndValidate(url).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, p);
    return p;
  }

  private async fetchAndValidate(url: string): Promise<ClientLookup> {
    const r = await safeFetchJson(new URL(url), this.fetchOptions());
    if (!r.ok) return { ok: false, error: invalid(url, r.reason) };
    const now = this.o.clock.now();
    const lookup = clientFromDocument(url, r.text, Math.floor(now / 1000));
    const ttl = cacheLifetimeMs(r.cacheControl);
    if (lookup.ok && ttl > 0) {
      this.cache.delete(url);
      this.cache.set(url, { client: lookup.client, expiresAt: now + ttl });
      while (this.cache.size > CIMD_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    }
    return lookup;
  }

  get size(): number {
    return this.cache.size;
  }
}
