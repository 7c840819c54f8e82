// redirect_uri is present and equals one of the client's registered URIs exactly, character for character
// (docs/oauth.md#registration, docs/oauth.md#redirect-uris, RFC 9700 §2.1, RFC 6749 §3.1.2.2). One exception,
// RFC 8252 §7.3 ("the authorization server MUST allow any port to be specified at the time of the request for
// loopback IP redirect URIs"): a dynamic or metadata-document client's `http` loopback URI registered WITHOUT
// a port matches the same URI with any port — Claude Code's document lists `http://localhost/callback` and
// listens on a random port, VS Code registers `http://127.0.0.1/`. A URI registered with a port, and a
// pre-registered client's URIs (docs/oauth.md#redirect-uris), match exactly. A mismatch is a page, never a
// redirect (RFC 6749 §4.1.2.1): no open redirector.
import type { Client } from '../clients.js';
import { oauthError, type OAuthError } from '../errors.js';
import type { AuthorizeCtx } from './authorize-context.js';

const LOOPBACK_PORTLESS = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(?=[/?]|$)/;
const LOOPBACK_WITH_PORT = /^(http:\/\/(?:localhost|127\.0\.0\.1|\[::1\])):\d{1,5}(?=[/?]|$)/;

/** True when `uri` may receive this client's authorization response. */
export function redirectUriAllowed(client: Client, uri: string): boolean {
  if (client.redirectUris.includes(uri)) return true;
  if (client.preRegistered) return false;
  const m = LOOPBACK_WITH_PORT.exec(uri);
  if (!m) return false;
  const portless = uri.replace(LOOPBACK_WITH_PORT, '$1');
  return client.redirectUris.some((r) => LOOPBACK_PORTLESS.test(r) && r === portless);
}

export function checkRedirectUriMatch(ctx: AuthorizeCtx): OAuthError | undefined {
  if (ctx.form.repeated.includes('redirect_uri'))
    return oauthError('invalid_request', 'redirect_uri was sent more than once');
  const uri = ctx.form.get('redirect_uri');
  if (uri === undefined)
    return oauthError(
      'invalid_request',
      'The request has no redirect_uri; the application must send the redirect URI it registered',
    );
  if (!ctx.client || !redirectUriAllowed(ctx.client, uri)) {
    return oauthError(
      'invalid_request',
      `The redirect URI ${uri} is not registered for this application; redirect URIs must match a registered one exactly`,
    );
  }
  return undefined;
}
