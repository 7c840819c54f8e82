// GET/POST /oauth/authorize — the operator's password page (spec §4, §5.2.2; http-and-auth-contract
// "GET /oauth/authorize", "POST /oauth/authorize"). GET runs the checks in order: the first two answer with
// a page (never redirect to an unverified URI, RFC 6749 §4.1.2.1), the rest redirect with `error=`. POST acts
// on a filed request only, checks the password in constant time under the global attempt limit, and
// redirects with `code`, `state` and `iss` (RFC 6749 §4.1.2, RFC 9207 §2).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { safeEqual } from '../core/constant-time.js';
import { firstFailure, type Check } from './checks/check.js';
import type { AuthorizeCtx } from './checks/authorize-context.js';
import { checkClientGrant } from './checks/client-grant.js';
import { checkClientKnown } from './checks/client-known.js';
import { checkParamsOnce } from './checks/params-once.js';
import { checkPkceChallenge } from './checks/pkce-challenge.js';
import { checkRedirectUriMatch } from './checks/redirect-uri-match.js';
import { checkResourceIndicator, resourceOf } from './checks/resource-indicator.js';
import { checkResponseType } from './checks/response-type.js';
import { checkScope } from './checks/scope-syntax.js';
import type { Client } from './clients.js';
import type { OAuthContext } from './context.js';
import {
  errorRedirectUrl,
  oauthError,
  sendErrorPage,
  sendRedirect,
  withQuery,
  type OAuthError,
} from './errors.js';
import { authorizePage, sendHtml } from './html.js';
import { dropRestOfBody, mediaType, parseForm, readBody } from './http-io.js';
import type { AuthorizationRequest } from './pending.js';

/** Failures here are shown on a page: there is no trustworthy place to redirect to. */
const PAGE_CHECKS: readonly Check<AuthorizeCtx>[] = [checkClientKnown, checkRedirectUriMatch];

/** Failures here go back to the (now verified) redirect URI with `error=` (RFC 6749 §4.1.2.1). */
const REDIRECT_CHECKS: readonly Check<AuthorizeCtx>[] = [
  checkParamsOnce,
  checkResponseType,
  checkPkceChallenge,
  checkResourceIndicator,
  checkScope,
  (ctx) => checkClientGrant(ctx.client as Client, 'authorization_code'),
];

/** What the operator should recognise as the destination: host[:port], or `scheme://host` for apps. */
export function redirectHost(uri: string): string {
  const u = new URL(uri);
  if (u.protocol === 'http:' || u.protocol === 'https:') return u.host;
  return `${u.protocol}//${u.host}`.replace(/\/\/$/, '');
}

function showForm(
  res: ServerResponse,
  ctx: OAuthContext,
  handle: string,
  request: AuthorizationRequest,
  status: number,
  message?: string,
  headers: Record<string, string> = {},
): void {
  const client = ctx.clients.get(request.clientId);
  const page = authorizePage(
    {
      clientName: client?.clientName ?? 'An unnamed application',
      clientId: request.clientId,
      redirectHost: redirectHost(request.redirectUri),
      handle,
      message,
    },
    [request.redirectUri],
  );
  sendHtml(res, status, page, headers);
}

export function handleAuthorizeGet(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctx: OAuthContext,
): void {
  const form = parseForm(url.search.slice(1));
  const base = ctx.baseUrl(req);
  const actx: AuthorizeCtx = {
    form,
    client: form.repeated.includes('client_id') ? undefined : ctx.clients.get(form.get('client_id')),
    base,
  };
  const pageErr = firstFailure(PAGE_CHECKS, actx);
  if (pageErr) return sendErrorPage(res, pageErr);
  const redirectUri = form.get('redirect_uri') as string;
  const state = form.get('state');
  const err = firstFailure(REDIRECT_CHECKS, actx);
  if (err) return sendRedirect(res, errorRedirectUrl(redirectUri, err, state, base));

  const request: AuthorizationRequest = {
    clientId: (actx.client as Client).clientId,
    redirectUri,
    state,
    codeChallenge: form.get('code_challenge') as string,
    resource: resourceOf(base),
    scope: form.get('scope'),
    base,
  };
  showForm(res, ctx, ctx.pending.add(request), request, 200);
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export async function handleAuthorizePost(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: OAuthContext,
): Promise<void> {
  const pageError = (e: OAuthError) => sendErrorPage(res, e);
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    return pageError(
      oauthError(
        'invalid_request',
        'The authorization form must be submitted as application/x-www-form-urlencoded',
      ),
    );
  }
  const body = await readBody(req);
  if (!body.ok) {
    if (body.reason === 'too_large') {
      pageError(oauthError('invalid_request', 'The form submission is larger than 8 KiB', 413));
      dropRestOfBody(req, res);
    }
    return;
  }
  const form = parseForm(body.text);
  const handle = form.get('request');
  const request = ctx.pending.get(handle);
  if (!handle || !request) {
    return pageError(
      oauthError(
        'invalid_request',
        'This authorization page has expired or was already used (pages are valid for 10 minutes)',
      ),
    );
  }
  // The client may have been evicted while the page was open: never redirect to a URI no longer registered.
  const client = ctx.clients.get(request.clientId);
  if (!client || !client.redirectUris.includes(request.redirectUri)) {
    ctx.pending.take(handle);
    return pageError(
      oauthError(
        'invalid_request',
        'The application that asked for access is no longer registered; start the connection again',
      ),
    );
  }
  if (form.get('action') === 'deny') {
    ctx.pending.take(handle);
    const denied = oauthError('access_denied', 'The operator denied the authorization request');
    return sendRedirect(res, errorRedirectUrl(request.redirectUri, denied, request.state, request.base));
  }
  const wait = ctx.attempts.blockedFor();
  if (wait > 0) {
    const s = seconds(wait);
    return showForm(
      res,
      ctx,
      handle,
      request,
      429,
      `Too many wrong passwords. Wait ${s} seconds before trying again.`,
      { 'Retry-After': String(s) },
    );
  }
  // decisions.md 12 / contract: constant-time compare through the one door.
  if (!safeEqual(form.get('password') ?? '', ctx.password)) {
    const next = ctx.attempts.failure();
    ctx.log?.warn('oauth: wrong password on the authorization page', { failures: ctx.attempts.failureCount });
    const msg =
      next > 0
        ? `Wrong password. Wait ${seconds(next)} seconds before the next attempt.`
        : 'Wrong password. Try again.';
    return showForm(res, ctx, handle, request, 401, msg);
  }
  ctx.attempts.success();
  ctx.pending.take(handle);
  const code = ctx.codes.issue(request);
  ctx.log?.info('oauth: authorization approved', { client_id: request.clientId });
  sendRedirect(res, withQuery(request.redirectUri, { code, state: request.state, iss: request.base }));
}
