// private_key_jwt client authentication (RFC 7523 §2.2 and §3; RFC 7521 §4.2) for clients identified by a
// Client ID Metadata Document that publishes its public keys — ChatGPT's document declares this method. The
// assertion is a JWT signed with one of those keys, with iss = sub = the client_id URL, aud naming this token
// endpoint or this issuer, and an exp; a jti is accepted once. Keys come from the document's inline `jwks` or
// its https `jwks_uri`, fetched under the same rules as the document (safe-fetch.ts) and cached; an unknown
// `kid` refetches them once. Failures are invalid_client, 401.
import { createLocalJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Clock } from '../../core/clock.js';
import { isCimdClientId, type CimdResolver } from './cimd.js';
import type { Client } from '../clients.js';
import type { ClientAuthResult } from '../checks/client-auth.js';
import { oauthError } from '../errors.js';
import type { Form } from '../http-io.js';
import { safeFetchJson } from './safe-fetch.js';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
export const ASSERTION_SIGNING_ALGS: readonly string[] = ALGORITHMS;
const JWKS_MAX_BYTES = 64 * 1024;
const JWKS_TTL_MS = 10 * 60_000;
const MAX_JTIS = 4096;
const MAX_CACHED_JWKS = 64;

const fail = (description: string): ClientAuthResult => ({
  ok: false,
  error: oauthError('invalid_client', description, 401),
});

/** True when the token request authenticates with a client assertion (RFC 7521 §4.2). */
export function usesAssertion(form: Form): boolean {
  return form.get('client_assertion') !== undefined || form.get('client_assertion_type') !== undefined;
}

export class ClientAssertions {
  private readonly jwks = new Map<string, { set: JSONWebKeySet; expiresAt: number }>();
  /** jti → when its assertion expires (then it may be forgotten). */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly cimd: CimdResolver,
    private readonly clock: Clock,
  ) {}

  /** Authenticates the client of a token request that carries client_assertion. */
  async authenticate(form: Form, audiences: string[]): Promise<ClientAuthResult> {
    if (form.get('client_assertion_type') !== ASSERTION_TYPE)
      return fail(`client_assertion_type must be ${ASSERTION_TYPE}`);
    const assertion = form.get('client_assertion');
    if (!assertion) return fail('client_assertion is missing');
    if (form.get('client_secret') !== undefined)
      return fail(
        'Use one client authentication method per request: a client assertion or a secret, not both',
      );
    let iss: unknown;
    try {
      iss = decodeJwt(assertion).iss;
    } catch {
      return fail('client_assertion is not a JWT');
    }
    const bodyId = form.get('client_id');
    if (typeof iss !== 'string' || (bodyId !== undefined && bodyId !== iss))
      return fail('The client assertion must have iss equal to the client_id');
    if (!isCimdClientId(iss))
      return fail(
        'private_key_jwt is accepted only from clients identified by a Client ID Metadata Document',
      );
    const found = await this.cimd.resolve(iss);
    if (!found.ok) return fail(found.error.description);
    if (!found.client.authMethods.includes('private_key_jwt'))
      return fail(
        `This client's metadata document declares token_endpoint_auth_method ${found.client.authMethods.join(', ')}, not private_key_jwt`,
      );
    return this.verify(assertion, found.client, audiences);
  }

  private async verify(assertion: string, client: Client, audiences: string[]): Promise<ClientAuthResult> {
    const now = this.clock.now();
    for (const refresh of [false, true]) {
      const keys = await this.keysOf(client, refresh);
      if (!keys.ok) return fail(keys.reason);
      try {
        const { payload } = await jwtVerify(assertion, createLocalJWKSet(keys.set), {
          issuer: client.clientId,
          subject: client.clientId,
          audience: audiences,
          algorithms: ALGORITHMS,
          requiredClaims: ['exp'],
          clockTolerance: 30,
          currentDate: new Date(now),
        });
        if (typeof payload.jti === 'string' && !this.firstUse(payload.jti, (payload.exp as number) * 1000))
          return fail('This client assertion was already used (jti); sign a new one for each request');
        return { ok: true, client };
      } catch (e) {
        if (!refresh && e instanceof joseErrors.JWKSNoMatchingKey && client.jwks?.uri) continue;
        return fail(`The client assertion is not valid: ${(e as Error).message}`);
      }
    }
    return fail('The client assertion is not signed by a key the client publishes');
  }

  private firstUse(jti: string, expiresAt: number): boolean {
    const now = this.clock.now();
    for (const [k, exp] of this.seen) if (exp < now) this.seen.delete(k);
    if (this.seen.has(jti)) return false;
    this.seen.set(jti, expiresAt);
    while (this.seen.size > MAX_JTIS) this.seen.delete(this.seen.keys().next().value as string);
    return true;
  }

  private async keysOf(
    client: Client,
    refresh: boolean,
  ): Promise<{ ok: true; set: JSONWebKeySet } | { ok: false; reason: string }> {
    if (client.jwks?.keys) return { ok: true, set: { keys: client.jwks.keys } as JSONWebKeySet };
    const uri = client.jwks?.uri;
    if (!uri) return { ok: false, reason: 'The client publishes no keys' };
    const hit = this.jwks.get(uri);
    if (hit && !refresh && hit.expiresAt > this.clock.now()) return { ok: true, set: hit.set };
    const r = await safeFetchJson(new URL(uri), this.cimd.fetchOptions(JWKS_MAX_BYTES));
    if (!r.ok) return { ok: false, reason: `The client's jwks_uri ${uri} cannot be used: ${r.reason}` };
    let set: unknown;
    try {
      set = JSON.parse(r.text);
    } catch {
      return { ok: false, reason: `The client's jwks_uri ${uri} is not JSON` };
    }
    if (!set || typeof set !== 'object' || !Array.isArray((set as { keys?: unknown }).keys))
      return { ok: false, reason: `The client's jwks_uri ${uri} is not a JWK Set` };
    this.jwks.delete(uri);
    this.jwks.set(uri, { set: set as JSONWebKeySet, expiresAt: this.clock.now() + JWKS_TTL_MS });
    while (this.jwks.size > MAX_CACHED_JWKS) this.jwks.delete(this.jwks.keys().next().value as string);
    return { ok: true, set: set as JSONWebKeySet };
  }
}
