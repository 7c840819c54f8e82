// What the CLI prepares before a start (cli/serve.ts): the HTTP parts loaded for that mode only, the state
// directory when something is to be kept, OAuth settings, the bearer credential and the authenticator. A
// problem that must stop the start exits 2 through fail().
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config/load.js';
import { systemClock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { ExtraRoute } from '../http/server.js';
import type { OAuthSetup } from '../oauth/from-config.js';
import type { Runtime } from '../runtime/runtime.js';
import { keptSigningKey, keptToken, watchToken } from '../state/credentials.js';
import { grantFile } from '../state/grant-file.js';
import { openStateDir, StateDirError, type KeptState, type StateOpen } from '../state/state-dir.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import type { TokenNews } from './banner.js';
import { fail } from './fail.js';
import { randomBase64url } from '../core/random.js';

/**
 * What serving over HTTP needs beyond what stdio needs, and the OAuth server only when it is configured:
 * loaded before anything starts, and only in that mode (docs/architecture.md "The bin is one bundled file":
 * start-up loads what the configured mode uses). A part that cannot be loaded means an incomplete
 * installation.
 */
export async function httpParts(c: Config) {
  try {
    const [server, auth, oauth] = await Promise.all([
      import('../http/server.js'),
      import('../auth/authenticate.js'),
      c.authMode === 'oauth'
        ? Promise.all([
            import('../oauth/from-config.js'),
            import('../oauth/server.js'),
            import('../oauth/secrets.js'),
            import('../http/base-url.js'),
          ])
        : undefined,
    ]);
    return { server, auth, oauth };
  } catch (e) {
    process.stderr.write(
      `workbench-mcp: cannot load the HTTP server: ${String((e as Error)?.message ?? e)}\n` +
        '  the installation is incomplete or damaged: reinstall workbench-mcp (or run `npm run build` in a checkout)\n',
    );
    process.exit(1);
  }
}
export type HttpParts = Awaited<ReturnType<typeof httpParts>>;

/** The state directory, opened only when something is to be kept; an unsafe one stops the start (exit 2). */
function stateFor(c: Config, root: WorkspaceRoot): StateOpen {
  try {
    return openStateDir(c.stateDir, root.real);
  } catch (e) {
    if (e instanceof StateDirError) fail(e.message);
    throw e;
  }
}

/** The state directory for the console's link key only: a problem is a warning, not a refused start. */
function consoleState(c: Config, root: WorkspaceRoot, log: Logger): StateOpen | undefined {
  try {
    return openStateDir(c.stateDir, root.real);
  } catch (e) {
    if (!(e instanceof StateDirError)) throw e;
    log.warn(`\`workbench-mcp console\` will not find this server: ${e.message}`);
    return undefined;
  }
}

/** OAuth settings, validated before anything starts (a bad pre-registered redirect URI exits 2). */
export function oauthSetup(
  c: Config,
  parts: HttpParts | undefined,
  state: StateOpen | undefined,
  log: Logger,
): Extract<OAuthSetup, { ok: true }> | undefined {
  if (!parts?.oauth) return undefined;
  const [{ oauthSetupFromConfig }, , { systemRandom }, { baseUrl }] = parts.oauth;
  let keptKey: Uint8Array | undefined;
  if (state?.kind === 'on' && !c.oauthTokenSecret) {
    try {
      const k = keptSigningKey(state.state);
      keptKey = k.key;
      if (k.created)
        log.info(`OAuth signing key made and kept in ${k.file}: tokens stay valid when the server restarts`);
    } catch (e) {
      if (e instanceof StateDirError) fail(e.message);
      throw e;
    }
  }
  const setup = oauthSetupFromConfig(c, {
    clock: systemClock,
    random: systemRandom,
    baseUrl: (req) => baseUrl(req, c),
    keptKey,
    grantFile: state?.kind === 'on' ? grantFile(state.state, log) : undefined,
  });
  if (!setup.ok) fail(setup.message);
  if (state?.kind === 'unavailable' && !c.oauthTokenSecret)
    log.warn(
      `nothing is kept (${state.reason}): every restart invalidates every OAuth token; set SERVICE_STATE_DIR or SERVICE_OAUTH_TOKEN_SECRET`,
    );
  return setup;
}

export interface AuthSetup {
  authenticator: Authenticator;
  extraRoutes?: ExtraRoute[];
  /** What to say about the bearer token at start (undefined: configured, never printed). */
  news?: TokenNews;
  /** The tokens accepted now (for the proof route), kept up to date when a kept token is rotated. */
  tokens: () => readonly string[];
}

/** The bearer token(s): configured, else kept for the workspace (made now if none), else made for this run. */
export interface BearerCredential {
  tokens: readonly string[];
  news?: TokenNews;
  kept?: { state: KeptState; file: string };
}

export function bearerCredential(c: Config, state: StateOpen | undefined): BearerCredential {
  if (c.authTokens.length > 0) return { tokens: c.authTokens };
  if (state?.kind !== 'on') {
    const token = randomBase64url(32);
    const why = state?.kind === 'unavailable' ? state.reason : 'SERVICE_STATE_DIR=off';
    return { tokens: [token], news: { kind: 'run', token, why } };
  }
  try {
    const k = keptToken(state.state);
    const news: TokenNews = k.created
      ? { kind: 'kept', token: k.token, created: true, file: k.file }
      : { kind: 'kept', created: false, file: k.file };
    return { tokens: [k.token], news, kept: { state: state.state, file: k.file } };
  } catch (e) {
    if (e instanceof StateDirError) fail(e.message);
    throw e;
  }
}

export function authenticatorFor(
  c: Config,
  parts: HttpParts,
  oauth: Extract<OAuthSetup, { ok: true }> | undefined,
  runtime: Runtime,
  bearer: BearerCredential | undefined,
): AuthSetup {
  const { BearerAuthenticator, NoAuthAuthenticator } = parts.auth;
  const configured = () => c.authTokens;
  if (c.authMode === 'noauth')
    return { authenticator: new NoAuthAuthenticator(c.externalAuthProxy), tokens: configured };
  if (oauth && parts.oauth) {
    const [, { createOAuthServer }] = parts.oauth;
    // Static SERVICE_AUTH_TOKEN(s) are accepted beside OAuth when set, never generated here (docs/oauth.md).
    const server = createOAuthServer({
      ...oauth.options,
      clock: runtime.clock,
      log: runtime.log,
      // "Approve from the console" on the authorization page (docs/console.md#sign-in).
      signIns: runtime.approvals,
      activity: runtime.activity,
    });
    return { authenticator: server.authenticator, extraRoutes: server.routes, tokens: configured };
  }
  let current = bearer?.tokens ?? c.authTokens;
  const authenticator = new BearerAuthenticator(current);
  const kept = bearer?.kept;
  if (kept) {
    const stop = watchToken(
      kept.state,
      (token) => {
        current = [token];
        authenticator.replace(current);
        runtime.log.info(
          `the kept bearer token in ${kept.file} was replaced; only the new one is accepted now`,
        );
      },
      (message) => runtime.log.warn(message),
    );
    runtime.onShutdown(stop);
  }
  return { authenticator, news: bearer?.news, tokens: () => current };
}

/** Kept credentials: a generated bearer token, the OAuth signing key and grants (docs/configuration.md). The
 *  operator's console keeps its link key there too (cli/console-start.ts), but never stops a start for it. */
export function stateForStart(
  c: Config,
  http: HttpParts | undefined,
  root: WorkspaceRoot,
  log: Logger,
): StateOpen | undefined {
  const needsState =
    http !== undefined && (c.authMode === 'oauth' || (c.authMode === 'bearer' && c.authTokens.length === 0));
  // Open workspaces are kept there too (src/workspaces/registry.ts), over either transport.
  if (needsState || c.projectRoots?.length) return stateFor(c, root);
  return http && c.console ? consoleState(c, root, log) : undefined;
}
