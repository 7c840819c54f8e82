// POST /oauth/token (RFC 6749 §3.2, §4.1.3, §6; docs/oauth.md#endpoints; docs/oauth.md#tokens): form-encoded,
// ≤ 8 KiB, each parameter once. The code is spent the moment it is presented — before client authentication
// or any other check — so a failing exchange still uses it up (docs/oauth.md#codes). Then the client
// authenticates with its registered method (token-client.ts: secrets, none, or a private_key_jwt assertion of
// a metadata-document client), and the grant's checks run in the order listed below. Errors are RFC 6749 §5.2
// JSON with no-store; successes are §5.1 JSON with no-store.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { lingeringClose } from '../../http/body.js';
import { firstFailure, type Check } from '../checks/check.js';
import { authenticateTokenClient } from './token-client.js';
import { checkClientGrant } from '../checks/client-grant.js';
import { checkCodeClient } from '../checks/code-client.js';
import type { CodeCtx } from '../checks/code-context.js';
import { checkCodeExpiry } from '../checks/code-expiry.js';
import { checkCodeRedeemable } from '../checks/code-redeemable.js';
import { checkCodeRedirect } from '../checks/code-redirect.js';
import { checkCodeResource } from '../checks/code-resource.js';
import { checkParamsOnce } from '../checks/params-once.js';
import { checkPkceVerifier } from '../checks/pkce-verifier.js';
import { checkRefreshClient } from '../checks/refresh-client.js';
import type { RefreshCtx } from '../checks/refresh-context.js';
import { checkRefreshExpiry } from '../checks/refresh-expiry.js';
import { checkRefreshRedeemable } from '../checks/refresh-redeemable.js';
import { checkRefreshResource } from '../checks/refresh-resource.js';
import { SUPPORTED_GRANT_TYPES, type Client, type GrantType } from '../clients.js';
import type { OAuthContext } from '../context.js';
import { oauthError, sendOAuthJson } from '../errors.js';
import type { Family } from '../grants/grants.js';
import { readBody } from '../../http/body.js';
import { mediaType, OAUTH_MAX_BODY_BYTES, parseForm } from '../http-io.js';
import type { Redemption } from '../grants/codes.js';

const CODE_CHECKS: readonly Check<CodeCtx>[] = [
  checkCodeRedeemable,
  checkCodeClient,
  checkCodeExpiry,
  checkCodeRedirect,
  checkPkceVerifier,
  checkCodeResource,
];

const REFRESH_CHECKS: readonly Check<RefreshCtx>[] = [
  checkRefreshRedeemable,
  checkRefreshClient,
  checkRefreshExpiry,
  checkRefreshResource,
];

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

type Form = ReturnType<typeof parseForm>;
type Fail = (e: ReturnType<typeof oauthError>) => void;

/** What a grant's exchange works with once the client is authenticated. */
interface Exchange {
  res: ServerResponse;
  ctx: OAuthContext;
  cors: Record<string, string>;
  form: Form;
  client: Client;
  base: string;
  fail: Fail;
}

export async function handleToken(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: OAuthContext,
  cors: Record<string, string>,
): Promise<void> {
  const fail: Fail = (e) => sendOAuthJson(res, e, cors);
  const form = await readTokenForm(req, res, cors, fail);
  if (!form) return;
  const grantType = form.get('grant_type');
  // Spend the code first: its single presentation is this one, whatever the outcome (docs/oauth.md#codes).
  const code =
    grantType === 'authorization_code' && !form.repeated.includes('code') ? form.get('code') : undefined;
  const redemption: Redemption = code !== undefined ? ctx.codes.redeem(code) : { status: 'unknown' };

  const repeated = checkParamsOnce({ form });
  if (repeated) return fail(repeated);
  if (grantType === undefined) return fail(oauthError('invalid_request', 'grant_type is required'));
  if (!SUPPORTED_GRANT_TYPES.includes(grantType as GrantType)) {
    return fail(
      oauthError(
        'unsupported_grant_type',
        `grant_type ${JSON.stringify(grantType)} is not supported; use authorization_code or refresh_token`,
      ),
    );
  }
  const base = ctx.baseUrl(req);
  const auth = await authenticateTokenClient(req.headers.authorization, form, ctx, base);
  if (!auth.ok) return fail(auth.error);
  const unauthorized = checkClientGrant(auth.client, grantType as GrantType);
  if (unauthorized) return fail(unauthorized);
  const ex: Exchange = { res, ctx, cors, form, client: auth.client, base, fail };
  return grantType === 'authorization_code' ? exchangeCode(ex, redemption) : refresh(ex);
}

/** The form of a token request; undefined when refused (answered). */
async function readTokenForm(
  req: IncomingMessage,
  res: ServerResponse,
  cors: Record<string, string>,
  fail: Fail,
): Promise<Form | undefined> {
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    fail(
      oauthError(
        'invalid_request',
        'Send the token request as application/x-www-form-urlencoded (RFC 6749 §4.1.3)',
      ),
    );
    return undefined;
  }
  const body = await readBody(req, OAUTH_MAX_BODY_BYTES);
  if (body.ok) return parseForm(body.text);
  if (body.reason === 'too_large') {
    lingeringClose(req, res);
    sendOAuthJson(res, oauthError('invalid_request', 'The token request is larger than 8 KiB', 413), cors);
  }
  return undefined;
}

async function exchangeCode(ex: Exchange, redemption: Redemption): Promise<void> {
  const { ctx, form, client, base } = ex;
  const err = firstFailure(CODE_CHECKS, { form, client, redemption, now: ctx.clock.now(), base });
  if (err) {
    // RFC 6749 §4.1.2: a code used twice SHOULD revoke the tokens issued from it.
    if (redemption.status === 'spent' && redemption.record.familyId)
      ctx.grants.revoke(redemption.record.familyId);
    return ex.fail(err);
  }
  const grant = (redemption as Extract<Redemption, { status: 'fresh' }>).record;
  const family = ctx.grants.start(client.clientId, grant.grant.resource, grant.grant.scope);
  grant.familyId = family.id;
  ctx.log?.info('oauth: authorization code exchanged', { client_id: client.clientId });
  return sendTokens(ex.res, ctx, client, family, base, ex.cors);
}

async function refresh(ex: Exchange): Promise<void> {
  const { ctx, form, client, base } = ex;
  const refreshToken = form.get('refresh_token');
  const lookup =
    refreshToken === undefined ? ({ status: 'unknown' } as const) : ctx.grants.findRefresh(refreshToken);
  const err = firstFailure(REFRESH_CHECKS, { form, client, lookup, now: ctx.clock.now(), base });
  if (err) {
    // RFC 9700 §4.14.2: reuse of a rotated token, or a token in the wrong client's hands, revokes the family.
    const stolen =
      lookup.status === 'retired' ||
      (lookup.status === 'current' && lookup.family.clientId !== client.clientId);
    if (stolen) {
      ctx.grants.revoke(lookup.family.id);
      ctx.log?.warn('oauth: refresh token reuse detected, grant revoked', {
        client_id: lookup.family.clientId,
      });
    }
    return ex.fail(err);
  }
  const family = (lookup as Extract<typeof lookup, { status: 'current' }>).family;
  return sendTokens(ex.res, ctx, client, family, base, ex.cors);
}

async function sendTokens(
  res: ServerResponse,
  ctx: OAuthContext,
  client: Client,
  family: Family,
  base: string,
  cors: Record<string, string>,
): Promise<void> {
  // Rotate before anything awaits, so two concurrent uses of one refresh token cannot both pass the checks.
  // Refresh tokens only for clients that registered the grant (grants.ts rotates on every use).
  const refresh = client.grantTypes.includes('refresh_token') ? ctx.grants.issueRefresh(family) : undefined;
  const access = await ctx.tokens.issue({
    issuer: base,
    audience: family.resource,
    clientId: client.clientId,
    familyId: family.id,
    scope: family.scope,
  });
  ctx.grants.noteAccessToken(family, access.expiresAt);
  const body: Record<string, unknown> = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: ctx.tokens.ttl,
  };
  if (refresh !== undefined) body.refresh_token = refresh;
  if (family.scope) body.scope = family.scope;
  const text = JSON.stringify(body);
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...NO_STORE,
    ...cors,
  });
  res.end(text);
}
