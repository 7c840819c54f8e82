// The resource the code is bound to (docs/oauth.md#codes) is this server as the token request sees it, and a
// `resource` parameter, when present, names it (RFC 8707 §2.2 → invalid_target). A code issued through
// another public origin of this server is refused (invalid_grant): its tokens would carry another audience.
import { oauthError, type OAuthError } from '../errors.js';
import type { CodeCtx } from './code-context.js';
import { checkResourceIndicator, resourceOf } from './resource-indicator.js';

export function checkCodeResource(ctx: CodeCtx): OAuthError | undefined {
  if (ctx.redemption.status !== 'fresh') return undefined;
  const named = checkResourceIndicator(ctx);
  if (named) return named;
  if (ctx.redemption.record.grant.resource !== resourceOf(ctx.base)) {
    return oauthError(
      'invalid_grant',
      `The code was issued for ${ctx.redemption.record.grant.resource}, not for ${resourceOf(ctx.base)}`,
    );
  }
  return undefined;
}
