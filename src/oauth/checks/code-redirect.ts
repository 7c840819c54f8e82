// redirect_uri in the token request is identical to the one of the authorization request (RFC 6749 §4.1.3;
// RFC 9700 §4.1 — a swapped redirect URI is refused).
import { oauthError, type OAuthError } from '../errors.js';
import type { CodeCtx } from './code-context.js';

export function checkCodeRedirect(ctx: CodeCtx): OAuthError | undefined {
  if (ctx.redemption.status !== 'fresh') return undefined;
  const uri = ctx.form.get('redirect_uri');
  if (uri === undefined)
    return oauthError(
      'invalid_request',
      'redirect_uri is required: send the redirect URI of the authorization request',
    );
  if (uri !== ctx.redemption.record.grant.redirectUri)
    return oauthError('invalid_grant', 'redirect_uri does not match the one the code was issued for');
  return undefined;
}
