// POST /oauth/register — dynamic client registration (RFC 7591 §3; docs/oauth.md#registration). JSON of at
// most 8 KiB; the checks below run in this order; unsupported grant and response types are narrowed to what
// this server supports and reported back in the 201 record (RFC 7591 §3.2.1 lets the server replace values);
// a confidential client gets a secret that is kept only as a digest. Null members are absent and an empty
// scope is no scope (docs/design-notes.md#registration-leniency); unknown members are ignored.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { lingeringClose } from '../../http/body.js';
import { sendJson } from '../../http/respond.js';
import { checkAuthMethod } from '../checks/auth-method.js';
import { firstFailure, type Check } from '../checks/check.js';
import { checkMetadataTypes, normaliseMetadata } from '../checks/metadata-types.js';
import { checkRedirectUris } from '../checks/redirect-uris-list.js';
import { narrowGrantTypes, type AuthMethod, type Client } from '../clients.js';
import type { OAuthContext } from '../context.js';
import { oauthError, sendOAuthJson } from '../errors.js';
import { readBody } from '../../http/body.js';
import { mediaType, OAUTH_MAX_BODY_BYTES } from '../http-io.js';
import { digest, randomToken } from '../secrets.js';

type Meta = Record<string, unknown>;

/** In order: redirect URIs (invalid_redirect_uri), then the authentication method, then member types. */
const REGISTRATION_CHECKS: readonly Check<Meta>[] = [checkRedirectUris, checkAuthMethod, checkMetadataTypes];

/** Members echoed back as registered when the client sent them (display and bookkeeping only). */
export const ECHOED = [
  'client_uri',
  'logo_uri',
  'tos_uri',
  'policy_uri',
  'application_type',
  'scope',
  'software_id',
  'software_version',
  'contacts',
];

export async function handleRegister(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: OAuthContext,
  cors: Record<string, string>,
): Promise<void> {
  const meta = await readMetadata(req, res, cors);
  if (meta === undefined) return;
  const m = normaliseMetadata(meta);
  const err = firstFailure(REGISTRATION_CHECKS, m);
  if (err) return sendOAuthJson(res, err, cors);

  const method = (m.token_endpoint_auth_method as AuthMethod | undefined) ?? 'none';
  const secret = method === 'none' ? undefined : randomToken(ctx.random, 32);
  const client = newClient(ctx, m, method, secret);
  const evicted = ctx.clients.add(client, keepRank(ctx));
  if (evicted)
    ctx.log?.info('oauth: client registry full, evicted the oldest registration nothing waits on', {
      client_id: evicted,
    });
  ctx.log?.info('oauth: client registered', {
    client_id: client.clientId,
    client_name: client.clientName,
    auth_method: method,
  });

  const record: Record<string, unknown> = {
    client_id: client.clientId,
    client_id_issued_at: client.issuedAt,
    ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: method,
    grant_types: client.grantTypes,
    response_types: ['code'],
    ...(client.clientName ? { client_name: client.clientName } : {}),
    ...client.extra,
  };
  sendJson(res, 201, JSON.stringify(record), { ...cors, Pragma: 'no-cache' });
}

/** The request's JSON object of client metadata; undefined when refused (answered). */
async function readMetadata(
  req: IncomingMessage,
  res: ServerResponse,
  cors: Record<string, string>,
): Promise<Meta | undefined> {
  const refuse = (description: string, status?: number) => {
    sendOAuthJson(res, oauthError('invalid_client_metadata', description, status), cors);
    return undefined;
  };
  if (mediaType(req) !== 'application/json')
    return refuse('Send the client metadata as JSON with Content-Type: application/json');
  const body = await readBody(req, OAUTH_MAX_BODY_BYTES);
  if (!body.ok) {
    if (body.reason !== 'too_large') return undefined;
    lingeringClose(req, res);
    return refuse('The registration request is larger than 8 KiB', 413);
  }
  let meta: unknown;
  try {
    meta = JSON.parse(body.text);
  } catch {
    return refuse('The body is not valid JSON');
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta))
    return refuse('The body must be a JSON object of client metadata (RFC 7591 §2)');
  return meta as Meta;
}

function newClient(ctx: OAuthContext, m: Meta, method: AuthMethod, secret: string | undefined): Client {
  const extra: Record<string, unknown> = {};
  for (const k of ECHOED) if (m[k] !== undefined) extra[k] = m[k];
  return {
    clientId: randomToken(ctx.random, 16),
    secretDigest: secret === undefined ? undefined : digest(secret),
    authMethods: [method],
    redirectUris: [...(m.redirect_uris as string[])],
    grantTypes: narrowGrantTypes(m.grant_types),
    clientName: typeof m.client_name === 'string' && m.client_name.trim() ? m.client_name.trim() : undefined,
    issuedAt: Math.floor(ctx.clock.now() / 1000),
    preRegistered: false,
    extra,
  };
}

/**
 * How much a registration is worth keeping when the registry is full (lowest goes first): 0 nothing waits on
 * it; 1 its waiting pages have all taken a wrong password (a guesser's); 2 a page waits where no wrong password
 * was typed (perhaps the operator's, still typing); 3 it holds a grant. Computed once, on the first question.
 */
function keepRank(ctx: OAuthContext): (clientId: string) => number {
  let granted: ReadonlySet<string> | undefined;
  let waiting: ReadonlyMap<string, boolean> | undefined;
  return (id) => {
    granted ??= ctx.grants.clientsWithGrants();
    if (granted.has(id)) return 3;
    waiting ??= ctx.pending.waitingClients();
    const clean = waiting.get(id);
    return clean === undefined ? 0 : clean ? 2 : 1;
  };
}
