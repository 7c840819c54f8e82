// The code was issued to the client that presents it (RFC 6749 §4.1.3: "ensure that the authorization code
// was issued to the authenticated confidential client, or … to the public client"; docs/oauth.md#codes).
import { oauthError, type OAuthError } from '../errors.js';
import type { CodeCtx } from './code-context.js';

export function checkCodeClient(ctx: CodeCtx): OAuthError | undefined {
  if (ctx.redemption.status !== 'fresh') return undefined;
  if (ctx.redemption.record.grant.clientId === ctx.client.clientId) return undefined;
  return oauthError('invalid_grant', 'The authorization code was issued to another client');
}
