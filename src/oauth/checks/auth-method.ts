// token_endpoint_auth_method of a registration (docs/oauth.md#registration, RFC 7591 §2): absent means `none`
// (docs/design-notes.md#pre-registered-client-and-static-tokens); otherwise one of none, client_secret_post,
// client_secret_basic. Any other method is refused rather than swapped, because the client could not
// authenticate with a method it did not ask for.
import { REGISTRABLE_AUTH_METHODS, type AuthMethod } from '../clients.js';
import { oauthError, type OAuthError } from '../errors.js';

export function checkAuthMethod(meta: Record<string, unknown>): OAuthError | undefined {
  const m = meta.token_endpoint_auth_method;
  if (m === undefined) return undefined;
  if (typeof m !== 'string' || !REGISTRABLE_AUTH_METHODS.includes(m as AuthMethod)) {
    const cimdOnly =
      m === 'private_key_jwt'
        ? ' (private_key_jwt is accepted from clients identified by a Client ID Metadata Document)'
        : '';
    return oauthError(
      'invalid_client_metadata',
      `token_endpoint_auth_method ${JSON.stringify(m)} is not supported for registration${cimdOnly}; use one of ${REGISTRABLE_AUTH_METHODS.join(', ')}`,
    );
  }
  return undefined;
}
