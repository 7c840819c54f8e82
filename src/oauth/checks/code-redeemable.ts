// The code exists and this is its first presentation (docs/oauth.md#codes: single use; RFC 6749 §4.1.2 and
// §5.2 invalid_grant). A code presented again is refused, and the endpoint revokes what it issued.
import { oauthError, type OAuthError } from '../errors.js';
import type { CodeCtx } from './code-context.js';

export function checkCodeRedeemable(ctx: CodeCtx): OAuthError | undefined {
  if (ctx.form.get('code') === undefined)
    return oauthError('invalid_request', 'code is required for the authorization_code grant');
  if (ctx.redemption.status === 'unknown')
    return oauthError('invalid_grant', 'The authorization code is not valid; authorize again');
  if (ctx.redemption.status === 'spent') {
    return oauthError(
      'invalid_grant',
      'The authorization code was already used; it is single-use, and tokens issued from it have been revoked',
    );
  }
  return undefined;
}
