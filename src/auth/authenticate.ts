// Who is calling (docs/http.md#order-of-checks). An Authenticator turns a request into a Principal or a
// challenge. bearer: static tokens compared in constant time. noauth: loopback callers only — a tunnel
// forwards to loopback, so a non-loopback Host or any forwarding header is refused unless the operator
// declared an authenticating proxy (docs/design-notes.md#noauth-behind-a-proxy). OAuth plugs in here as
// another Authenticator. A right token sent without the `Bearer ` scheme is answered with a 401 that says how
// to send it (never echoing it).
import type { IncomingMessage } from 'node:http';
import { SecretSet } from '../core/constant-time.js';
import { isLoopbackHostHeader, proxySign } from '../core/hosts.js';
import type { Principal } from '../core/principal.js';

export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; status: 401 | 403; headers: Record<string, string>; error: string; description: string };

export interface Authenticator {
  readonly mode: 'bearer' | 'oauth' | 'noauth';
  authenticate(req: IncomingMessage, baseUrl: string): AuthResult | Promise<AuthResult>;
}

export const REALM = 'workbench-mcp';

/** The token of an `Authorization: Bearer …` header; '' when the header is absent or another scheme. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(h);
  return m ? (m[1] as string) : '';
}

/** The credential of an Authorization header that is not `Bearer <token>` — a bare token, `Token <t>`,
 *  `Bearer:<t>` — so a right token sent the wrong way can be told from a wrong one. undefined otherwise. */
export function nonBearerCredential(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h || bearerToken(req)) return undefined;
  const parts = h
    .trim()
    .split(/[\s:]+/)
    .filter(Boolean);
  return parts[parts.length - 1];
}

/** What a client is told when its token is right but was not sent with the Bearer scheme. */
export const BEARER_SCHEME_HINT =
  'The token is right, but the Authorization header does not use the Bearer scheme; send it as "Authorization: Bearer <token>".';
export const NOT_BEARER =
  'The Authorization header is not a Bearer token; send "Authorization: Bearer <token>".';

export function bearerChallenge(sent: boolean, description: string, extra = ''): AuthResult {
  const params = [`realm="${REALM}"`, extra, sent ? 'error="invalid_token"' : ''].filter(Boolean).join(', ');
  return {
    ok: false,
    status: 401,
    headers: { 'WWW-Authenticate': `Bearer ${params}` },
    error: sent ? 'invalid_token' : 'unauthorized',
    description,
  };
}

export class BearerAuthenticator implements Authenticator {
  readonly mode = 'bearer' as const;
  private tokens: SecretSet;
  constructor(tokens: readonly string[]) {
    this.tokens = new SecretSet(tokens);
  }

  /** From now on only `tokens` are accepted (a kept token rotated while the server runs). */
  replace(tokens: readonly string[]): void {
    this.tokens = new SecretSet(tokens);
  }

  /** Index of the matching token (for a non-secret principal label), or -1. Every token is compared. */
  match(token: string): number {
    return this.tokens.indexOf(token);
  }

  authenticate(req: IncomingMessage): AuthResult {
    const token = bearerToken(req);
    if (token === undefined) return bearerChallenge(false, 'Send Authorization: Bearer <token>.');
    if (!token) {
      const other = nonBearerCredential(req);
      return bearerChallenge(true, other && this.match(other) >= 0 ? BEARER_SCHEME_HINT : NOT_BEARER);
    }
    const i = this.match(token);
    if (i < 0) return bearerChallenge(true, 'The bearer token is not valid for this server.');
    return { ok: true, principal: { kind: 'bearer', id: `token#${i + 1}` } };
  }
}

export class NoAuthAuthenticator implements Authenticator {
  readonly mode = 'noauth' as const;
  constructor(private readonly externalProxy: boolean) {}

  authenticate(req: IncomingMessage): AuthResult {
    if (!this.externalProxy) {
      const forwarded = proxySign(req.headers, req.headersDistinct.host);
      if (forwarded || !isLoopbackHostHeader(req.headers.host)) {
        return {
          ok: false,
          status: 403,
          headers: {},
          error: 'forbidden',
          description: forwarded
            ? `noauth mode serves local callers only, and this request carries ${forwarded} (it came through a proxy or tunnel); use bearer or oauth to publish the server`
            : 'noauth mode serves local callers only (Host must be localhost, 127.0.0.1 or [::1]); use bearer or oauth to publish the server',
        };
      }
    }
    return { ok: true, principal: { kind: 'noauth', id: 'local' } };
  }
}
