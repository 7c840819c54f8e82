// The refresh token is the current one of a live family (RFC 6749 §6; RFC 9700 §4.14.2: rotated tokens are
// single use, and presenting a retired one is treated as theft — the endpoint revokes the family).
import { oauthError, type OAuthError } from '../errors.js';
import type { RefreshCtx } from './refresh-context.js';

export function checkRefreshRedeemable(ctx: RefreshCtx): OAuthError | undefined {
  if (ctx.form.get('refresh_token') === undefined)
    return oauthError('invalid_request', 'refresh_token is required for the refresh_token grant');
  if (ctx.lookup.status === 'unknown')
    return oauthError(
      'invalid_grant',
      'The refresh token is not valid (revoked, expired or from before a restart); authorize again',
    );
  if (ctx.lookup.status === 'retired') {
    return oauthError(
      'invalid_grant',
      'The refresh token was already used; refresh tokens are single-use, so every token of this authorization has been revoked',
    );
  }
  return undefined;
}
