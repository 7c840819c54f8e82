// PKCE is mandatory with S256 (docs/oauth.md#the-authorization-page, RFC 9700 §2.1.1, RFC 7636 §4.3):
// code_challenge required, code_challenge_method must be S256 — `plain` and a missing method are refused (RFC
// 7636 §4.4.1 answers invalid_request) — and the challenge is exactly 43 base64url characters (a SHA-256
// digest, RFC 7636 §4.2).
import { oauthError, type OAuthError } from '../errors.js';
import type { AuthorizeCtx } from './authorize-context.js';

export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function checkPkceChallenge(ctx: AuthorizeCtx): OAuthError | undefined {
  const challenge = ctx.form.get('code_challenge');
  const method = ctx.form.get('code_challenge_method');
  if (challenge === undefined)
    return oauthError('invalid_request', 'code_challenge is required: this server requires PKCE with S256');
  if (method === undefined)
    return oauthError(
      'invalid_request',
      'code_challenge_method is required and must be S256 (the RFC 7636 default, plain, is not accepted)',
    );
  if (method !== 'S256')
    return oauthError(
      'invalid_request',
      `code_challenge_method ${JSON.stringify(method)} is not supported; use S256`,
    );
  if (!S256_CHALLENGE.test(challenge))
    return oauthError(
      'invalid_request',
      'code_challenge must be the 43-character base64url SHA-256 of the code verifier',
    );
  return undefined;
}
