// The authorization server as the HTTP front sees it: createOAuthServer() builds the stores once and returns
// the routes (an ExtraRoute for http/server.ts) and the /mcp Authenticator. Routing and method handling for
// the OAuth paths live here (docs/oauth.md#endpoints); each endpoint's rules live in its own module.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { corsHeaders, sendJson } from '../http/respond.js';
import type { ExtraRoute } from '../http/server.js';
import { AccessTokens } from './grants/access-tokens.js';
import { PasswordAttempts, WRONG_PASSWORD_DELAY_MS } from './grants/attempts.js';
import { OAuthAuthenticator } from './endpoints/authenticator.js';
import {
  AUTHORIZE_WAIT_PATH,
  handleAuthorizeGet,
  handleAuthorizePost,
  handleAuthorizeWait,
} from './endpoints/authorize.js';
import { ConsoleSignIns, type SignInApprovals } from './grants/console-signin.js';
import type { ActivityFeed } from '../core/activity.js';
import { CimdResolver, isCimdClientId } from './clients/cimd.js';
import { ClientAssertions } from './clients/client-assertion.js';
import { ClientRegistry, preRegisteredClient, type PreRegisteredSettings } from './clients.js';
import { CodeStore } from './grants/codes.js';
import type { OAuthContext } from './context.js';
import { oauthError, sendErrorPage, sendOAuthJson } from './errors.js';
import { GrantStore, type GrantPersistence } from './grants/grants.js';
import { PUBLIC_CORS, sendPreflight } from './http-io.js';
import {
  AS_METADATA_PATH,
  AUTHORIZE_PATH,
  authorizationServerMetadata,
  PRM_PATH,
  protectedResourceMetadata,
  REGISTER_PATH,
  TOKEN_PATH,
} from './endpoints/metadata.js';
import { PendingRequests } from './grants/pending.js';
import { handleRegister } from './endpoints/register.js';
import { systemRandom, type RandomSource } from './secrets.js';
import { handleToken } from './endpoints/token-endpoint.js';

export interface OAuthOptions {
  password: string;
  /** The password was generated for this run (100 bits): no limit beyond the per-attempt delay (attempts.ts). */
  passwordGenerated?: boolean;
  /** Override of WRONG_PASSWORD_DELAY_MS (tests). */
  passwordDelayMs?: number;
  /** HS256 key, at least 32 bytes. */
  tokenKey: Uint8Array;
  tokenTtlSeconds: number;
  /** Static bearer tokens also accepted on /mcp (docs/design-notes.md#pre-registered-client-and-static-tokens). */
  staticTokens: readonly string[];
  preRegistered?: PreRegisteredSettings;
  baseUrl: (req: IncomingMessage) => string;
  allowedOrigins: readonly string[];
  clock: Clock;
  random?: RandomSource;
  log?: Logger;
  /** Where grants of metadata-document and pre-registered clients are kept across restarts (state/grant-file.ts). */
  grantFile?: { load(): string | undefined; save(text: string): void };
  /** Override of the dynamic registry bound (tests). */
  maxDynamicClients?: number;
  /** Fetching Client ID Metadata Documents: loopback allowed only by the test-only setting; an extra trusted CA
   *  for in-process tests (a spawned server trusts NODE_EXTRA_CA_CERTS). */
  cimd?: { enabled?: boolean; allowLoopback?: boolean; ca?: string | Buffer };
  /** The operator's console's approvals, when it is on (console-signin.ts). */
  signIns?: SignInApprovals;
  /** The console's activity list, when it is on: wrong passwords are listed there. */
  activity?: ActivityFeed;
}

export interface OAuthServer {
  routes: ExtraRoute[];
  authenticator: OAuthAuthenticator;
  /** The shared state, for tests and diagnostics. */
  context: OAuthContext;
}

export function createOAuthServer(o: OAuthOptions): OAuthServer {
  const random = o.random ?? systemRandom;
  const pre = o.preRegistered
    ? preRegisteredClient(o.preRegistered, Math.floor(o.clock.now() / 1000))
    : undefined;
  const cimd = new CimdResolver({
    clock: o.clock,
    enabled: o.cimd?.enabled ?? true,
    allowLoopback: o.cimd?.allowLoopback ?? false,
    ca: o.cimd?.ca,
  });
  const context: OAuthContext = {
    clients: new ClientRegistry(pre, o.maxDynamicClients),
    cimd,
    assertions: new ClientAssertions(cimd, o.clock),
    pending: new PendingRequests(o.clock, random, pre?.clientId),
    attempts: new PasswordAttempts(o.clock, o.passwordGenerated ?? false),
    codes: new CodeStore(o.clock, random),
    grants: new GrantStore(o.clock, random, undefined, keptGrants(o.grantFile, pre?.clientId)),
    tokens: new AccessTokens(o.tokenKey, o.tokenTtlSeconds, o.clock, random),
    password: o.password,
    passwordDelayMs: o.passwordDelayMs ?? WRONG_PASSWORD_DELAY_MS,
    clock: o.clock,
    random,
    baseUrl: o.baseUrl,
    allowedOrigins: o.allowedOrigins,
    log: o.log,
    ...(o.signIns ? { signIns: new ConsoleSignIns(o.signIns, o.clock, random) } : {}),
    ...(o.activity ? { activity: o.activity } : {}),
  };
  const authenticator = new OAuthAuthenticator(
    context.tokens,
    context.clients,
    context.grants,
    o.staticTokens,
  );
  return { routes: [(req, res, url) => route(req, res, url, context)], authenticator, context };
}

/** Grants outlive the process for clients that do: metadata-document clients and the pre-registered one. */
function keptGrants(
  file: OAuthOptions['grantFile'],
  preId: string | undefined,
): GrantPersistence | undefined {
  if (!file) return undefined;
  return {
    keeps: (clientId) => isCimdClientId(clientId) || clientId === preId,
    load: () => file.load(),
    save: (text) => file.save(text),
  };
}

function notAllowed(res: ServerResponse, allow: string, cors: Record<string, string>): void {
  sendOAuthJson(res, oauthError('invalid_request', `Method not allowed here; use ${allow}`, 405), {
    ...cors,
    Allow: allow,
  });
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctx: OAuthContext,
): Promise<boolean> {
  const path = url.pathname;
  const method = req.method ?? 'GET';
  const cors = corsHeaders(req, ctx.allowedOrigins);
  switch (path) {
    case PRM_PATH:
    case `${PRM_PATH}/mcp`:
    case AS_METADATA_PATH: {
      if (method === 'OPTIONS') sendPreflight(res, 'GET, OPTIONS', { ...PUBLIC_CORS });
      else if (method !== 'GET' && method !== 'HEAD') notAllowed(res, 'GET', PUBLIC_CORS);
      else {
        const base = ctx.baseUrl(req);
        const doc =
          path === AS_METADATA_PATH
            ? authorizationServerMetadata(base, ctx.cimd.enabled)
            : protectedResourceMetadata(base, path === PRM_PATH);
        sendJson(res, 200, JSON.stringify(doc), { ...PUBLIC_CORS });
      }
      return true;
    }
    case REGISTER_PATH:
      if (method === 'OPTIONS') sendPreflight(res, 'POST, OPTIONS', cors);
      else if (method !== 'POST') notAllowed(res, 'POST', cors);
      else await handleRegister(req, res, ctx, cors);
      return true;
    case TOKEN_PATH:
      if (method === 'OPTIONS') sendPreflight(res, 'POST, OPTIONS', cors);
      else if (method !== 'POST') notAllowed(res, 'POST', cors);
      else await handleToken(req, res, ctx, cors);
      return true;
    case AUTHORIZE_WAIT_PATH:
      if (method === 'GET') await handleAuthorizeWait(req, res, url, ctx);
      else sendErrorPage(res, oauthError('invalid_request', 'Use GET to check a waiting sign-in', 405));
      return true;
    case AUTHORIZE_PATH:
      if (method === 'GET' || method === 'HEAD') await handleAuthorizeGet(req, res, url, ctx);
      else if (method === 'POST') await handleAuthorizePost(req, res, ctx);
      else sendErrorPage(res, oauthError('invalid_request', 'Use GET to open the authorization page', 405));
      return true;
    default:
      return false;
  }
}
