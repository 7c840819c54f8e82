// The /mcp side of OAuth mode (docs/http.md#order-of-checks): a request is admitted with a valid access token
// of this server — right key, HS256, this issuer, audience exactly `<base>/mcp`, not expired, its client
// still registered (a metadata-document client is never "unregistered") and its grant family not revoked — or
// with a configured static bearer token (docs/design-notes.md#pre-registered-client-and-static-tokens).
// Otherwise 401 with the RFC 9728 §5.1 challenge pointing at the resource metadata; a right token sent
// without `Bearer ` is told how to send it.
import type { IncomingMessage } from 'node:http';
import {
  BEARER_SCHEME_HINT,
  BearerAuthenticator,
  bearerToken,
  nonBearerCredential,
  NOT_BEARER,
  type AuthResult,
  type Authenticator,
} from '../../auth/authenticate.js';
import type { AccessTokens } from '../grants/access-tokens.js';
import { resourceOf } from '../checks/resource-indicator.js';
import { isCimdClientId } from '../clients/cimd.js';
import type { ClientRegistry } from '../clients.js';
import type { GrantStore } from '../grants/grants.js';
import { PRM_PATH } from './metadata.js';

export function oauthChallenge(base: string, sent: boolean, description: string): AuthResult {
  const params = [`resource_metadata="${base}${PRM_PATH}/mcp"`];
  if (sent) params.push('error="invalid_token"');
  return {
    ok: false,
    status: 401,
    headers: { 'WWW-Authenticate': `Bearer ${params.join(', ')}` },
    error: sent ? 'invalid_token' : 'unauthorized',
    description,
  };
}

export class OAuthAuthenticator implements Authenticator {
  readonly mode = 'oauth' as const;
  private readonly staticTokens: BearerAuthenticator | undefined;

  constructor(
    private readonly tokens: AccessTokens,
    private readonly clients: ClientRegistry,
    private readonly grants: GrantStore,
    staticTokens: readonly string[],
  ) {
    this.staticTokens = staticTokens.length > 0 ? new BearerAuthenticator(staticTokens) : undefined;
  }

  async authenticate(req: IncomingMessage, base: string): Promise<AuthResult> {
    const token = bearerToken(req);
    if (token === undefined) {
      return oauthChallenge(
        base,
        false,
        'Authorization required: discover the authorization server through the resource_metadata URL in WWW-Authenticate',
      );
    }
    if (!token) {
      const right = await this.isRightToken(nonBearerCredential(req), base);
      return oauthChallenge(base, true, right ? BEARER_SCHEME_HINT : NOT_BEARER);
    }
    if (this.staticTokens) {
      const i = this.staticTokens.match(token);
      if (i >= 0) return { ok: true, principal: { kind: 'bearer', id: `token#${i + 1}` } };
    }
    const v = await this.tokens.verify(token, { issuer: base, audience: resourceOf(base) });
    if (!v.ok) return oauthChallenge(base, true, v.reason);
    if (!isCimdClientId(v.claims.client_id) && !this.clients.get(v.claims.client_id)) {
      return oauthChallenge(
        base,
        true,
        'the client this token was issued to is no longer registered; authorize again',
      );
    }
    if (!this.grants.isActive(v.claims.sid))
      return oauthChallenge(base, true, 'the authorization behind this token was revoked; authorize again');
    return { ok: true, principal: { kind: 'oauth', id: v.claims.client_id } };
  }

  /** True when a credential sent outside the Bearer scheme would have been accepted. */
  private async isRightToken(candidate: string | undefined, base: string): Promise<boolean> {
    if (!candidate) return false;
    if (this.staticTokens && this.staticTokens.match(candidate) >= 0) return true;
    const v = await this.tokens.verify(candidate, { issuer: base, audience: resourceOf(base) });
    return v.ok;
  }
}
