// Client authentication at the token endpoint (a client uses the method it registered,
// docs/oauth.md#registration; RFC 6749 §2.3.1): Basic (form-urlencoded id:secret), client_secret in the body,
// or none with client_id in the body. One method per request (RFC 6749 §2.3); secrets compared by digest
// through the one constant-time door. Failures are invalid_client, 401, with a Basic challenge when Basic was
// tried (§5.2).
import { safeEqual } from '../../core/constant-time.js';
import type { AuthMethod, Client } from '../clients.js';
import { oauthError, type OAuthError } from '../errors.js';
import type { Form } from '../http-io.js';
import { digest } from '../secrets.js';

export type ClientAuthResult = { ok: true; client: Client } | { ok: false; error: OAuthError };

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="workbench-mcp"' };

function parseBasic(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  if (!header || !/^Basic\s/i.test(header)) return undefined;
  let decoded: string;
  try {
    decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  } catch {
    return 'malformed';
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    // RFC 6749 §2.3.1: both parts are application/x-www-form-urlencoded before being joined.
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: dec(decoded.slice(0, colon)), secret: dec(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/** Where authenticateClient finds clients: the registry, or a view that also holds a resolved metadata document. */
export interface ClientSource {
  get(clientId: string | undefined): Client | undefined;
}

export function authenticateClient(
  authorization: string | undefined,
  form: Form,
  registry: ClientSource,
): ClientAuthResult {
  const fail = (description: string, basic = false): ClientAuthResult => ({
    ok: false,
    error: oauthError('invalid_client', description, 401, basic ? BASIC_CHALLENGE : {}),
  });
  const basic = parseBasic(authorization);
  if (basic === 'malformed')
    return fail('The Basic Authorization header is malformed; send base64(client_id:client_secret)', true);
  const bodySecret = form.get('client_secret');
  const bodyId = form.get('client_id');
  if (basic && bodySecret !== undefined) {
    return {
      ok: false,
      error: oauthError(
        'invalid_request',
        'Use one client authentication method per request: Basic or client_secret in the body, not both',
      ),
    };
  }
  if (basic && bodyId !== undefined && bodyId !== basic.id)
    return fail('client_id in the body differs from the one in the Basic header', true);
  const used: AuthMethod = basic
    ? 'client_secret_basic'
    : bodySecret !== undefined
      ? 'client_secret_post'
      : 'none';
  const clientId = basic ? basic.id : bodyId;
  if (clientId === undefined)
    return fail('client_id is required (in the body, or in a Basic header for confidential clients)');
  const client = registry.get(clientId);
  if (!client)
    return fail(
      'Unknown client_id (registrations are lost when the server restarts); register again',
      !!basic,
    );
  if (!client.authMethods.includes(used)) {
    return fail(
      `This client registered token_endpoint_auth_method ${client.authMethods.join(' or ')} and must authenticate that way, not with ${used}`,
      !!basic,
    );
  }
  if (used !== 'none') {
    const secret = basic ? basic.secret : (bodySecret as string);
    if (!client.secretDigest || !safeEqual(digest(secret), client.secretDigest))
      return fail('The client secret is wrong', !!basic);
  }
  return { ok: true, client };
}
