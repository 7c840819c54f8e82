// Who is calling the token endpoint (a client uses the method it registered: docs/oauth.md#registration): a
// request with a client assertion is a private_key_jwt client of a metadata document (client-assertion.ts);
// otherwise the client_id names a registered client or a metadata-document client (client-lookup.ts), which
// then authenticates with its secret or, as a public client, with nothing (checks/client-auth.ts).
import { authenticateClient, type ClientAuthResult } from '../checks/client-auth.js';
import { lookupClient } from '../clients/client-lookup.js';
import type { OAuthContext } from '../context.js';
import { oauthError } from '../errors.js';
import type { Form } from '../http-io.js';
import { TOKEN_PATH } from './metadata.js';
import { usesAssertion } from '../clients/client-assertion.js';

export async function authenticateTokenClient(
  authorization: string | undefined,
  form: Form,
  ctx: OAuthContext,
  base: string,
): Promise<ClientAuthResult> {
  if (usesAssertion(form)) {
    if (authorization && /^Basic\s/i.test(authorization))
      return {
        ok: false,
        error: oauthError(
          'invalid_request',
          'Use one client authentication method per request: a client assertion or Basic, not both',
        ),
      };
    return ctx.assertions.authenticate(form, [base + TOKEN_PATH, base]);
  }
  const id = form.get('client_id');
  const found = await lookupClient(ctx, id);
  if (found && !found.ok)
    return { ok: false, error: oauthError('invalid_client', found.error.description, 401) };
  const resolved = found?.client;
  return authenticateClient(authorization, form, {
    get: (cid) => (resolved && cid === resolved.clientId ? resolved : ctx.clients.get(cid)),
  });
}
