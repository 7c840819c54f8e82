// response_type is `code` (RFC 6749 §4.1.1; OAuth 2.1 has no implicit grant, RFC 9700 §2.1.2)
// → unsupported_response_type, shown on the error page (never redirected: authorize.ts).
import { oauthError, type OAuthError } from '../errors.js';
import type { AuthorizeCtx } from './authorize-context.js';

export function checkResponseType(ctx: AuthorizeCtx): OAuthError | undefined {
  const rt = ctx.form.get('response_type');
  if (rt === undefined) return oauthError('invalid_request', 'response_type is required and must be "code"');
  if (rt !== 'code')
    return oauthError(
      'unsupported_response_type',
      `response_type ${JSON.stringify(rt)} is not supported; use "code" (authorization code with PKCE)`,
    );
  return undefined;
}
