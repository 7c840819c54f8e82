// PKCE verification (RFC 7636 §4.1 verifier syntax, §4.6 BASE64URL(SHA256(verifier)) == challenge; spec
// §5.2.3). A missing verifier is invalid_request; a malformed or wrong one is invalid_grant. The comparison
// goes through the constant-time door.
import { createHash } from 'node:crypto';
import { safeEqual } from '../../core/constant-time.js';
import { oauthError, type OAuthError } from '../errors.js';
import type { CodeCtx } from './code-context.js';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function checkPkceVerifier(ctx: CodeCtx): OAuthError | undefined {
  if (ctx.redemption.status !== 'fresh') return undefined;
  const verifier = ctx.form.get('code_verifier');
  if (verifier === undefined)
    return oauthError('invalid_request', 'code_verifier is required: this server requires PKCE');
  if (!VERIFIER.test(verifier))
    return oauthError('invalid_grant', 'code_verifier must be 43–128 characters of A-Z a-z 0-9 - . _ ~');
  if (!safeEqual(s256(verifier), ctx.redemption.record.grant.codeChallenge)) {
    return oauthError(
      'invalid_grant',
      'code_verifier does not match the code_challenge of the authorization request',
    );
  }
  return undefined;
}
