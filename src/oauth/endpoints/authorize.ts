// GET/POST /oauth/authorize — the operator's password page (docs/oauth.md#the-authorization-page). GET finds
// the client (registered, or a Client ID Metadata Document) and runs the checks in order; every failure
// before the operator has acted is shown on a page and never redirected
// (docs/oauth.md#the-authorization-page; RFC 9700 §4.11.2: anyone can register a redirect URI, so redirecting
// errors to it would make this endpoint an open redirector). POST accepts a same-origin submission of a filed
// request only, checks the password in constant time under the attempt limits (attempts.ts), and redirects
// with `code`, `state` and `iss` (RFC 6749 §4.1.2, RFC 9207 §2) — or `error=access_denied` when the operator
// denies.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { lingeringClose } from '../../http/body.js';
import { safeEqual } from '../../core/constant-time.js';
import { firstFailure, type Check } from '../checks/check.js';
import type { AuthorizeCtx } from '../checks/authorize-context.js';
import { checkClientGrant } from '../checks/client-grant.js';
import { checkClientKnown } from '../checks/client-known.js';
import { checkParamsOnce } from '../checks/params-once.js';
import { checkPkceChallenge } from '../checks/pkce-challenge.js';
import { checkRedirectUriMatch, redirectUriAllowed } from '../checks/redirect-uri-match.js';
import { checkResourceIndicator, resourceOf } from '../checks/resource-indicator.js';
import { checkResponseType } from '../checks/response-type.js';
import { checkSameOriginPost } from '../checks/same-origin-post.js';
import { checkScope } from '../checks/scope-syntax.js';
import { lookupClient } from '../clients/client-lookup.js';
import type { Client } from '../clients.js';
import type { OAuthContext } from '../context.js';
import { errorRedirectUrl, oauthError, sendErrorPage, sendRedirect, withQuery } from '../errors.js';
import { authorizePage, pairingPage, sendHtml } from '../html.js';
import type { ConsoleSignIns } from '../grants/console-signin.js';
import { readBody } from '../../http/body.js';
import { mediaType, OAUTH_MAX_BODY_BYTES, parseForm } from '../http-io.js';
import type { AuthorizationRequest } from '../grants/pending.js';

/** Every check of an authorization request, in order; a failure is an error page, never a redirect. */
const CHECKS: readonly Check<AuthorizeCtx>[] = [
  checkClientKnown,
  checkRedirectUriMatch,
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
  ctx: OAuthContext,
  res: ServerResponse,
  client: Client,
  handle: string,
  request: AuthorizationRequest,
  status: number,
  message?: string,
  headers: Record<string, string> = {},
): void {
  const page = authorizePage(
    {
      clientName: client.clientName ?? 'An unnamed application',
      clientId: request.clientId,
      redirectHost: redirectHost(request.redirectUri),
      handle,
      message,
      documentHost: client.documentHost,
      consoleOn: ctx.signIns !== undefined,
    },
    [request.redirectUri],
  );
  sendHtml(res, status, page, headers);
}

export async function handleAuthorizeGet(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctx: OAuthContext,
): Promise<void> {
  const form = parseForm(url.search.slice(1));
  const base = ctx.baseUrl(req);
  const found = form.repeated.includes('client_id')
    ? undefined
    : await lookupClient(ctx, form.get('client_id'));
  if (found && !found.ok) return sendErrorPage(res, found.error);
  const actx: AuthorizeCtx = { form, client: found?.client, base };
  const err = firstFailure(CHECKS, actx);
  if (err) return sendErrorPage(res, err);
  const client = actx.client as Client;
  const request: AuthorizationRequest = {
    clientId: client.clientId,
    redirectUri: form.get('redirect_uri') as string,
    state: form.get('state'),
    codeChallenge: form.get('code_challenge') as string,
    resource: resourceOf(base),
    scope: form.get('scope'),
    base,
  };
  showForm(ctx, res, client, ctx.pending.add(request), request, 200);
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export async function handleAuthorizePost(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: OAuthContext,
): Promise<void> {
  const form = await readAuthorizeForm(req, res, ctx);
  const filed = form && (await filedRequest(res, ctx, form));
  if (!form || !filed) return;
  const { handle, request, client } = filed;
  if (form.get('action') === 'deny') {
    ctx.pending.take(handle);
    const denied = oauthError('access_denied', 'The operator denied the authorization request');
    return sendRedirect(res, errorRedirectUrl(request.redirectUri, denied, request.state, request.base));
  }
  // No password: the operator's console, with a pairing code (console-signin.ts); no attempt limit applies.
  if (form.get('action') === 'console' && ctx.signIns) return askConsole(res, ctx, handle, request, client);
  const verdict = ctx.attempts.check(request.clientId);
  if (!verdict.ok) {
    const s = seconds(verdict.waitMs);
    const who = verdict.scope === 'client' ? 'for this application' : 'on this server';
    return showForm(
      ctx,
      res,
      client,
      handle,
      request,
      429,
      `Too many wrong passwords ${who}. Wait ${s} seconds before trying again.`,
      { 'Retry-After': String(s) },
    );
  }
  // docs/design-notes.md#password-attempts: constant-time compare through the one door.
  if (!safeEqual(form.get('password') ?? '', ctx.password)) {
    return wrongPassword(res, ctx, client, handle, request);
  }
  ctx.attempts.success(request.clientId);
  ctx.pending.take(handle);
  const code = ctx.codes.issue(request);
  ctx.log?.info('oauth: authorization approved', { client_id: request.clientId });
  sendRedirect(res, withQuery(request.redirectUri, { code, state: request.state, iss: request.base }));
}

type Form = ReturnType<typeof parseForm>;

/** The submitted form: same origin, form-encoded, at most 8 KiB; undefined when refused (answered). */
async function readAuthorizeForm(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: OAuthContext,
): Promise<Form | undefined> {
  const crossSite = checkSameOriginPost(req.headers, ctx.baseUrl(req));
  if (crossSite) return void sendErrorPage(res, crossSite);
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    return void sendErrorPage(
      res,
      oauthError(
        'invalid_request',
        'The authorization form must be submitted as application/x-www-form-urlencoded',
      ),
    );
  }
  const body = await readBody(req, OAUTH_MAX_BODY_BYTES);
  if (body.ok) return parseForm(body.text);
  if (body.reason === 'too_large') {
    lingeringClose(req, res);
    sendErrorPage(res, oauthError('invalid_request', 'The form submission is larger than 8 KiB', 413));
  }
  return undefined;
}

/** The filed request the form answers, and its client if still registered; undefined when not (answered). */
async function filedRequest(
  res: ServerResponse,
  ctx: OAuthContext,
  form: Form,
): Promise<{ handle: string; request: AuthorizationRequest; client: Client } | undefined> {
  const handle = form.get('request');
  const request = ctx.pending.get(handle);
  if (!handle || !request) {
    return void sendErrorPage(
      res,
      oauthError(
        'invalid_request',
        'This authorization page has expired or was already used (pages are valid for 10 minutes)',
      ),
    );
  }
  // The client may have been evicted (or its document changed) while the page was open: never redirect to a
  // URI that is no longer registered.
  const found = await lookupClient(ctx, request.clientId);
  const client = found?.ok ? found.client : undefined;
  if (!client || !redirectUriAllowed(client, request.redirectUri)) {
    ctx.pending.take(handle);
    return void sendErrorPage(
      res,
      oauthError(
        'invalid_request',
        'The application that asked for access is no longer registered; start the connection again',
      ),
    );
  }
  return { handle, request, client };
}

/**
 * A wrong password: counted for the client and the page, answered after the per-attempt delay
 * (docs/security-model.md#under-attack-connections-and-the-password-page, 3: a cost to every guess, unnoticed
 * by a person), with the form again — or, for a configured password, an error page once the page has taken
 * PAGE_MAX_FAILURES (it is withdrawn: the application must start again).
 */
async function wrongPassword(
  res: ServerResponse,
  ctx: OAuthContext,
  client: Client,
  handle: string,
  request: AuthorizationRequest,
): Promise<void> {
  ctx.attempts.failure(request.clientId);
  ctx.activity?.publish({
    kind: 'refused',
    time: ctx.clock.now(),
    client: client.clientName ?? request.clientId,
    what: 'wrong password on the authorization page',
  });
  const onPage = ctx.pending.recordFailure(handle);
  const limit = ctx.attempts.pageLimit;
  const withdrawn = limit !== undefined && onPage >= limit;
  if (withdrawn) ctx.pending.take(handle);
  ctx.log?.warn('oauth: wrong password on the authorization page', {
    client_id: request.clientId,
    client_failures: ctx.attempts.failureCount(request.clientId),
  });
  await delay(ctx.passwordDelayMs);
  if (res.destroyed) return;
  if (withdrawn) {
    return sendErrorPage(
      res,
      oauthError(
        'access_denied',
        `Too many wrong passwords on this page (${limit}); it no longer accepts any. Start the connection again from your application.`,
        429,
      ),
    );
  }
  const next = ctx.attempts.check(request.clientId);
  const msg = next.ok
    ? 'Wrong password. Try again.'
    : `Wrong password. Wait ${seconds(next.waitMs)} seconds before the next attempt.`;
  showForm(ctx, res, client, handle, request, 401, msg);
}

/** Files the sign-in on the operator's console and shows the pairing code; the page then waits (wait route). */
function askConsole(
  res: ServerResponse,
  ctx: OAuthContext,
  handle: string,
  request: AuthorizationRequest,
  client: Client,
): void {
  const signIns = ctx.signIns as ConsoleSignIns;
  const name = client.clientName ?? 'An unnamed application';
  const host = redirectHost(request.redirectUri);
  const { token, code } = signIns.start(handle, request.clientId, name, host);
  ctx.log?.info('oauth: sign-in sent to the operator console', { client_id: request.clientId });
  sendHtml(res, 200, pairingPage({ clientName: name, redirectHost: host, code, waitUrl: waitUrl(token) }));
}

export const AUTHORIZE_WAIT_PATH = '/oauth/authorize/wait';
/** How long one wait request holds for the operator before the page refreshes. */
export const CONSOLE_WAIT_MS = 10_000;

function waitUrl(token: string): string {
  return `${AUTHORIZE_WAIT_PATH}?t=${encodeURIComponent(token)}`;
}

/** GET /oauth/authorize/wait?t=…: the pairing page's refresh; redirects once the operator decided. */
export async function handleAuthorizeWait(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctx: OAuthContext,
): Promise<void> {
  const signIns = ctx.signIns;
  const token = url.searchParams.get('t') ?? '';
  const w = signIns?.get(token);
  if (!signIns || !w)
    return sendErrorPage(
      res,
      oauthError(
        'invalid_request',
        'This sign-in is no longer waiting (it expired, was withdrawn or finished)',
      ),
    );
  const closed = new AbortController();
  req.on('close', () => closed.abort());
  const { result, note } = await signIns.approvals.wait(w.approvalId, CONSOLE_WAIT_MS, closed.signal);
  if (res.destroyed) return;
  if (result === 'pending') {
    const request = ctx.pending.get(w.handle);
    const found = request ? await lookupClient(ctx, request.clientId) : undefined;
    const name = found?.ok ? (found.client.clientName ?? 'An unnamed application') : 'The application';
    const host = request ? redirectHost(request.redirectUri) : '';
    return sendHtml(
      res,
      200,
      pairingPage({ clientName: name, redirectHost: host, code: w.code, waitUrl: waitUrl(token) }),
    );
  }
  signIns.done(token);
  const filed = await filedRequest(
    res,
    ctx,
    parseForm(new URLSearchParams({ request: w.handle }).toString()),
  );
  if (!filed) return;
  ctx.pending.take(w.handle);
  const { request } = filed;
  if (result === 'denied') {
    const denied = oauthError('access_denied', `The operator denied the sign-in${note ? `: ${note}` : ''}`);
    return sendRedirect(res, errorRedirectUrl(request.redirectUri, denied, request.state, request.base));
  }
  const code = ctx.codes.issue(request);
  ctx.log?.info('oauth: authorization approved in the console', { client_id: request.clientId });
  sendRedirect(res, withQuery(request.redirectUri, { code, state: request.state, iss: request.base }));
}
