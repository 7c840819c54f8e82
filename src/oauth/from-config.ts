// Config → OAuthOptions, before the server starts (docs/oauth.md): the password (configured, or generated and
// handed back to be printed once by the CLI), the signing key (SERVICE_OAUTH_TOKEN_SECRET hex, else the one kept
// in the state directory, else 32 random bytes per process), the pre-registered client with its redirect URIs
// validated like a registration (missing → warning and exactly http://127.0.0.1/callback).
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import { redirectUriProblem } from './checks/redirect-uri-syntax.js';
import type { OAuthOptions } from './server.js';
import { generatePassword, type RandomSource } from './secrets.js';

export const PRE_REGISTERED_FALLBACK_REDIRECT = 'http://127.0.0.1/callback';

export type OAuthSetup =
  | { ok: true; options: OAuthOptions; generatedPassword?: string; warnings: string[] }
  | { ok: false; message: string };

export function oauthSetupFromConfig(
  c: Config,
  deps: {
    clock: Clock;
    random: RandomSource;
    baseUrl: (req: IncomingMessage) => string;
    /** The signing key kept in the state directory, used when SERVICE_OAUTH_TOKEN_SECRET is unset. */
    keptKey?: Uint8Array;
    grantFile?: OAuthOptions['grantFile'];
  },
): OAuthSetup {
  const warnings: string[] = [];
  const generatedPassword = c.oauthPassword ? undefined : generatePassword(deps.random);
  const tokenKey = c.oauthTokenSecret
    ? Buffer.from(c.oauthTokenSecret, 'hex')
    : (deps.keptKey ?? deps.random(32));
  const pre = preRegisteredClient(c, warnings);
  if (!pre.ok) return pre;
  const preRegistered = pre.client;
  if (c.testCimdAllowLoopback)
    warnings.push(
      'WB_TEST_CIMD_ALLOW_LOOPBACK is set: client metadata documents may be fetched from loopback addresses (a test-only setting; never use it in production)',
    );
  return {
    ok: true,
    generatedPassword,
    warnings,
    options: {
      password: c.oauthPassword ?? (generatedPassword as string),
      passwordGenerated: generatedPassword !== undefined,
      tokenKey,
      tokenTtlSeconds: c.oauthTokenTtl,
      staticTokens: c.authTokens,
      preRegistered,
      baseUrl: deps.baseUrl,
      allowedOrigins: c.allowedOrigins,
      clock: deps.clock,
      random: deps.random,
      cimd: { enabled: c.oauthClientMetadataDocuments, allowLoopback: c.testCimdAllowLoopback ?? false },
      grantFile: deps.grantFile,
    },
  };
}

/** The pre-registered client of SERVICE_OAUTH_CLIENT_ID, its redirect URIs validated like a registration. */
function preRegisteredClient(
  c: Config,
  warnings: string[],
): { ok: true; client: OAuthOptions['preRegistered'] } | { ok: false; message: string } {
  if (!c.oauthClientId) {
    if (c.oauthRedirectUris.length > 0 || c.oauthClientSecret)
      warnings.push(
        'SERVICE_OAUTH_REDIRECT_URIS / SERVICE_OAUTH_CLIENT_SECRET are ignored without SERVICE_OAUTH_CLIENT_ID',
      );
    return { ok: true, client: undefined };
  }
  let uris = [...c.oauthRedirectUris];
  if (uris.length === 0) {
    warnings.push(
      `SERVICE_OAUTH_CLIENT_ID is set without SERVICE_OAUTH_REDIRECT_URIS; the pre-registered client may only use ${PRE_REGISTERED_FALLBACK_REDIRECT} — set its real redirect URIs`,
    );
    uris = [PRE_REGISTERED_FALLBACK_REDIRECT];
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return { ok: false, message: `SERVICE_OAUTH_REDIRECT_URIS: ${problem}` };
  }
  if (new Set(uris).size !== uris.length)
    return { ok: false, message: 'SERVICE_OAUTH_REDIRECT_URIS lists the same URI more than once' };
  return { ok: true, client: { clientId: c.oauthClientId, redirectUris: uris, secret: c.oauthClientSecret } };
}
