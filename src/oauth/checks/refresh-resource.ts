// A refreshed token keeps the audience of its grant (docs/oauth.md#access-tokens); a `resource` parameter
// must name this server (RFC 8707 §2.2 → invalid_target), and the grant must belong to the origin the request
// arrived on.
import { oauthError, type OAuthError } from '../errors.js';
import type { RefreshCtx } from './refresh-context.js';
import { checkResourceIndicator, resourceOf } from './resource-indicator.js';

export function checkRefreshResource(ctx: RefreshCtx): OAuthError | undefined {
  if (ctx.lookup.status !== 'current') return undefined;
  const named = checkResourceIndicator(ctx);
  if (named) return named;
  if (ctx.lookup.family.resource !== resourceOf(ctx.base)) {
    return oauthError(
      'invalid_grant',
      `The refresh token was issued for ${ctx.lookup.family.resource}, not for ${resourceOf(ctx.base)}`,
    );
  }
  return undefined;
}
