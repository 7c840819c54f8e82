// The code is younger than five minutes (docs/oauth.md#codes; RFC 6749
// §4.1.2 recommends at most ten). Time comes from the injected clock.
import { oauthError, type OAuthError } from '../errors.js';
import type { CodeCtx } from './code-context.js';

export function checkCodeExpiry(ctx: CodeCtx): OAuthError | undefined {
  if (ctx.redemption.status !== 'fresh') return undefined;
  if (ctx.now < ctx.redemption.record.expiresAt) return undefined;
  return oauthError(
    'invalid_grant',
    'The authorization code has expired (codes live five minutes); authorize again',
  );
}
