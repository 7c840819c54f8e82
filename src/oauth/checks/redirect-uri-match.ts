// redirect_uri is present and equals one of the client's registered URIs exactly, character for character
// (spec §2.1 and §5.2.4, RFC 9700 §2.1, RFC 6749 §3.1.2.2). Otherwise: a page, never a redirect
// (RFC 6749 §4.1.2.1), so a bad URI cannot turn this server into an open redirector.
import { oauthError, type OAuthError } from '../errors.js';
import type { AuthorizeCtx } from './authorize-context.js';

export function checkRedirectUriMatch(ctx: AuthorizeCtx): OAuthError | undefined {
  if (ctx.form.repeated.includes('redirect_uri'))
    return oauthError('invalid_request', 'redirect_uri was sent more than once');
  const uri = ctx.form.get('redirect_uri');
  if (uri === undefined)
    return oauthError(
      'invalid_request',
      'The request has no redirect_uri; the application must send the redirect URI it registered',
    );
  if (!ctx.client?.redirectUris.includes(uri)) {
    return oauthError(
      'invalid_request',
      `The redirect URI ${uri} is not registered for this application; redirect URIs must match a registered one exactly`,
    );
  }
  return undefined;
}
