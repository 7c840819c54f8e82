// The one OAuthError family (architecture "closed error families") and the only place it is serialised:
// as JSON for the token and registration endpoints (RFC 6749 §5.2, RFC 7591 §3.2.2), as a redirect back to
// the client (RFC 6749 §4.1.2.1, with `iss` per RFC 9207 §2) once the operator has answered, or as an HTML
// page for every authorization error before that (no open redirector, RFC 9700 §4.11.2). Every response is
// no-store.
import type { ServerResponse } from 'node:http';
import { errorPage, sendHtml } from './html.js';

/** Every error code this server emits, with the RFC that defines it. */
export type OAuthErrorCode =
  // RFC 6749 §4.1.2.1 (authorization endpoint) and §5.2 (token endpoint)
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 8707 §2
  | 'invalid_target'
  // RFC 7591 §3.2.2
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  // RFC 6750 §3.1
  | 'invalid_token';

const DEFAULT_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_token: 401,
};

export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly code: OAuthErrorCode,
    /** Human-readable, tells the caller what to do next; never contains a secret. */
    readonly description: string,
    status?: number,
    /** Extra response headers (e.g. `WWW-Authenticate: Basic` for invalid_client, RFC 6749 §5.2). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
    this.status = status ?? DEFAULT_STATUS[code];
  }
}

/** Shorthand constructor used by the checks: `oauthError('invalid_grant', '…')`. */
export function oauthError(
  code: OAuthErrorCode,
  description: string,
  status?: number,
  headers?: Record<string, string>,
): OAuthError {
  return new OAuthError(code, description, status, headers);
}

/** RFC 6749 §5.2 / RFC 7591 §3.2.2: `{error, error_description}` as JSON, never cached (§5.1). */
export function sendOAuthJson(
  res: ServerResponse,
  err: OAuthError,
  extraHeaders: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ error: err.code, error_description: err.description });
  res.writeHead(err.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
    ...extraHeaders,
    ...err.headers,
  });
  res.end(body);
}

/**
 * The redirect URI with `error`, `error_description`, `state` and `iss` added to its query, keeping the query
 * it already had (RFC 6749 §3.1.2, §4.1.2.1; RFC 9207 §2).
 */
export function errorRedirectUrl(
  redirectUri: string,
  err: OAuthError,
  state: string | undefined,
  issuer: string,
): string {
  return withQuery(redirectUri, { error: err.code, error_description: err.description, state, iss: issuer });
}

/** `uri` with parameters appended to its query component (the fragment is never present: checked at registration). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.href;
}

/** 302 to a client's redirect URI (success or a redirectable error). */
export function sendRedirect(res: ServerResponse, location: string): void {
  if (res.headersSent) return;
  res.writeHead(302, {
    Location: location,
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
    'Referrer-Policy': 'no-referrer',
    'Content-Length': 0,
  });
  res.end();
}

/** An error that must not redirect (unknown client, unregistered redirect URI, expired page): an HTML page. */
export function sendErrorPage(res: ServerResponse, err: OAuthError): void {
  sendHtml(res, err.status, errorPage(err.code, err.description));
}
