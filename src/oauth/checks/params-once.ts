// No request parameter may appear more than once (RFC 6749 §3.1 for the authorization endpoint, §3.2 for the
// token endpoint). `resource` is the exception: RFC 8707 §2 allows several, and resource-indicator checks each.
import { oauthError, type OAuthError } from '../errors.js';
import type { Form } from '../http-io.js';

export function checkParamsOnce(ctx: { form: Form }): OAuthError | undefined {
  const repeated = ctx.form.repeated.filter((p) => p !== 'resource');
  if (repeated.length === 0) return undefined;
  return oauthError(
    'invalid_request',
    `Parameter ${repeated.join(', ')} was sent more than once; send each parameter once`,
  );
}
