// Refresh tokens live 30 days from their issue (docs/design-notes.md#limits); an expired one is invalid_grant
// (RFC 6749 §5.2, §6). Each rotation starts a new 30 days for the new token.
import { oauthError, type OAuthError } from '../errors.js';
import type { RefreshCtx } from './refresh-context.js';

export function checkRefreshExpiry(ctx: RefreshCtx): OAuthError | undefined {
  if (ctx.lookup.status !== 'current') return undefined;
  if (ctx.now < ctx.lookup.expiresAt) return undefined;
  return oauthError('invalid_grant', 'The refresh token has expired; authorize again');
}
