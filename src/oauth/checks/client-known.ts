// client_id names a registered client (RFC 6749 §4.1.1, §4.1.2.1). Unknown or missing: the operator is told
// on a page and the browser is NOT redirected, since there is no registered redirect URI to trust.
import { oauthError, type OAuthError } from '../errors.js';
import type { AuthorizeCtx } from './authorize-context.js';

export function checkClientKnown(ctx: AuthorizeCtx): OAuthError | undefined {
  if (ctx.form.repeated.includes('client_id'))
    return oauthError('invalid_request', 'client_id was sent more than once');
  const id = ctx.form.get('client_id');
  if (id === undefined)
    return oauthError(
      'invalid_request',
      'The request has no client_id; the application must register first (POST /oauth/register)',
    );
  if (!ctx.client) {
    return oauthError(
      'invalid_client',
      'This application is not registered with the server (registrations are lost when the server restarts); reconnect from the application so it registers again',
      400,
    );
  }
  return undefined;
}
