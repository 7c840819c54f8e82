// The redirect_uris member of a registration (docs/oauth.md#registration, docs/design-notes.md#limits, RFC
// 7591 §2): required, an array of 1–10 strings, entries unique, each one valid on its own
// (redirect-uri-syntax). → invalid_redirect_uri (RFC 7591 §3.2.2).
import { oauthError, type OAuthError } from '../errors.js';
import { redirectUriProblem } from './redirect-uri-syntax.js';

export const MAX_REDIRECT_URIS = 10;

export function checkRedirectUris(meta: Record<string, unknown>): OAuthError | undefined {
  const uris = meta.redirect_uris;
  if (uris === undefined)
    return oauthError(
      'invalid_redirect_uri',
      'redirect_uris is required: list the URIs the authorization response may be sent to',
    );
  if (!Array.isArray(uris))
    return oauthError('invalid_redirect_uri', 'redirect_uris must be an array of URI strings');
  if (uris.length < 1 || uris.length > MAX_REDIRECT_URIS) {
    return oauthError(
      'invalid_redirect_uri',
      `redirect_uris must hold between 1 and ${MAX_REDIRECT_URIS} URIs (got ${uris.length})`,
    );
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return oauthError('invalid_redirect_uri', problem);
  }
  if (new Set(uris).size !== uris.length)
    return oauthError(
      'invalid_redirect_uri',
      'redirect_uris contains the same URI more than once; list each URI once',
    );
  return undefined;
}
