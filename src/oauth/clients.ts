// The client registry: dynamic registrations (RFC 7591) beside at most one pre-registered client
// (docs/oauth.md#pre-registered-client). Process-local (docs/oauth.md#registration) and bounded: past
// MAX_DYNAMIC_CLIENTS the oldest dynamic registration is evicted (docs/design-notes.md#limits), in the order
// of register.ts's keep rank; the pre-registered client is never evicted. Secrets are held only as digests.
import { digest } from './secrets.js';

export type AuthMethod = 'none' | 'client_secret_post' | 'client_secret_basic' | 'private_key_jwt';
export type GrantType = 'authorization_code' | 'refresh_token';

/** Methods a dynamic registration may ask for (docs/oauth.md#registration). */
export const REGISTRABLE_AUTH_METHODS: readonly AuthMethod[] = [
  'none',
  'client_secret_post',
  'client_secret_basic',
];
/** Every method the token endpoint accepts: private_key_jwt (RFC 7523) only for clients identified by a Client
 *  ID Metadata Document that publishes its keys (ChatGPT's does), never for a registration. */
export const SUPPORTED_AUTH_METHODS: readonly AuthMethod[] = [...REGISTRABLE_AUTH_METHODS, 'private_key_jwt'];
export const SUPPORTED_GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token'];

/** authorization_code is always granted (it is the only way in); refresh_token when asked for or when the
 *  client did not say — narrowing rather than refusing (docs/oauth.md). */
export function narrowGrantTypes(requested: unknown): GrantType[] {
  if (!Array.isArray(requested)) return ['authorization_code', 'refresh_token'];
  return requested.includes('refresh_token')
    ? ['authorization_code', 'refresh_token']
    : ['authorization_code'];
}
export const SUPPORTED_RESPONSE_TYPES: readonly string[] = ['code'];

/** docs/design-notes.md#limits: 1024 dynamic clients, oldest evicted. */
export const MAX_DYNAMIC_CLIENTS = 1024;

export interface Client {
  clientId: string;
  /** SHA-256 of the secret; absent for public clients. */
  secretDigest?: string;
  /** The methods this client may use at the token endpoint: the one it registered (docs/oauth.md#registration), or post and
   *  basic for a confidential pre-registered client (docs/oauth.md#pre-registered-client). */
  authMethods: readonly AuthMethod[];
  redirectUris: readonly string[];
  grantTypes: readonly GrantType[];
  /** Shown on the password page; chosen by the client, so never trusted, always escaped. */
  clientName?: string;
  /** Seconds since the epoch (RFC 7591 §3.2.1 client_id_issued_at). */
  issuedAt: number;
  preRegistered: boolean;
  /** Other registered metadata echoed in the registration response (RFC 7591 §3.2.1). */
  extra: Readonly<Record<string, unknown>>;
  /** Set for a client identified by a Client ID Metadata Document: its client_id is this https URL, and the
   *  page names the URL's host as the verified identity (cimd.ts). */
  documentHost?: string;
  /** Where a CIMD client's public keys are (private_key_jwt): an https jwks_uri or the inline JWK Set. */
  jwks?: { uri?: string; keys?: readonly unknown[] };
}

export class ClientRegistry {
  private readonly dynamic = new Map<string, Client>();
  private readonly pre: Client | undefined;

  constructor(
    pre?: Client,
    private readonly maxDynamic = MAX_DYNAMIC_CLIENTS,
  ) {
    this.pre = pre;
  }

  /**
   * Adds a dynamic client; returns the id evicted to stay within the bound, if any: the oldest registration
   * of the lowest `keep` rank (docs/security-model.md#under-attack-connections-and-the-password-page: a flood
   * of registrations cannot sign out a client in use, nor push out a page where someone has not yet typed a
   * wrong password), never the one just added.
   */
  add(client: Client, keep: (clientId: string) => number = () => 0): string | undefined {
    this.dynamic.set(client.clientId, client);
    if (this.dynamic.size <= this.maxDynamic) return undefined;
    let victim: string | undefined;
    let lowest = Infinity;
    for (const id of this.dynamic.keys()) {
      if (id === client.clientId) break;
      const r = keep(id);
      if (r < lowest) [victim, lowest] = [id, r];
      if (r === 0) break;
    }
    this.dynamic.delete(victim as string);
    return victim;
  }

  get(clientId: string | undefined): Client | undefined {
    if (clientId === undefined) return undefined;
    if (this.pre && this.pre.clientId === clientId) return this.pre;
    return this.dynamic.get(clientId);
  }

  get size(): number {
    return this.dynamic.size + (this.pre ? 1 : 0);
  }
}

export interface PreRegisteredSettings {
  clientId: string;
  redirectUris: readonly string[];
  secret?: string;
}

/** The pre-registered client of SERVICE_OAUTH_CLIENT_ID / _REDIRECT_URIS / _CLIENT_SECRET (docs/oauth.md#pre-registered-client). */
export function preRegisteredClient(s: PreRegisteredSettings, issuedAt: number): Client {
  const confidential = s.secret !== undefined && s.secret !== '';
  return {
    clientId: s.clientId,
    secretDigest: confidential ? digest(s.secret as string) : undefined,
    authMethods: confidential ? ['client_secret_basic', 'client_secret_post'] : ['none'],
    redirectUris: [...s.redirectUris],
    grantTypes: [...SUPPORTED_GRANT_TYPES],
    clientName: `Pre-registered client ${s.clientId}`,
    issuedAt,
    preRegistered: true,
    extra: {},
  };
}
