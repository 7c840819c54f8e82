// The refresh token was issued to the client presenting it (RFC 6749 §6: "the refresh token was issued to
// the authenticated client"); another client holding it is treated as theft and the family is revoked.
import { oauthError, type OAuthError } from '../errors.js';
import type { RefreshCtx } from './refresh-context.js';

export function checkRefreshClient(ctx: RefreshCtx): OAuthError | undefined {
  if (ctx.lookup.status !== 'current') return undefined;
  if (ctx.lookup.family.clientId === ctx.client.clientId) return undefined;
  return oauthError('invalid_grant', 'The refresh token was issued to another client');
}
