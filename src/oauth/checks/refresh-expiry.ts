// Refresh tokens live 30 days from their issue (decisions.md 7; RFC 6749 §6 invalid_grant when expired).
import { oauthError, type OAuthError } from '../errors.js';
import type { RefreshCtx } from './refresh-context.js';

export function checkRefreshExpiry(ctx: RefreshCtx): OAuthError | undefined {
  if (ctx.lookup.status !== 'current') return undefined;
  if (ctx.now < ctx.lookup.expiresAt) return undefined;
  return oauthError('invalid_grant', 'The refresh token has expired; authorize again');
}
