#!/usr/bin/env -S node --max-semi-space-size=1 --optimize-for-size
// (The shebang caps V8's young generation at 1 MiB per semi-space: large responses then cost short GCs instead
// of ~60 MB of resident memory; `npm start` passes the same flag.)
// Entry point: argv + environment → Config → HTTP or stdio. The only place that wires modules together and
// the only place that exits the process.
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { ConfigError, load, type Config } from '../config/load.js';
import { keptSigningKey, keptToken, TOKEN_FILE, watchToken } from '../state/credentials.js';
import { grantFile } from '../state/grant-file.js';
import {
  openStateDir,
  removeKept,
  StateDirError,
  type KeptState,
  type StateOpen,
} from '../state/state-dir.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import {
  DANGEROUS_WARNING,
  passwordBanner,
  scopeArgs,
  servingBanner,
  tokenBanner,
  type TokenNews,
} from './banner.js';
import { startConsole } from './console-start.js';
import { selfCommand } from './self.js';
import { configTableMarkdown } from '../config/schema.js';
import { createLogger, type Logger } from '../core/log.js';
import { setPausePoints } from '../core/pause.js';
import { SERVER_VERSION } from '../core/version.js';
import type { Authenticator } from '../auth/authenticate.js';
import { SERVER_PRINCIPAL } from '../core/principal.js';
import type { ExtraRoute } from '../http/server.js';
import { isLoopbackHostname } from '../core/hosts.js';
import { systemClock } from '../core/clock.js';
import type { OAuthSetup } from '../oauth/from-config.js';
import { Runtime } from '../runtime/runtime.js';
import { RuntimeDirError } from '../process/runtime-dir.js';
import { SandboxUnavailableError } from '../process/sandbox.js';
import { serveStdio } from '../stdio/serve.js';
import { checkRoot } from '../workspace/paths.js';
import { helpText } from './help.js';
import { runSubcommand } from './subcommands.js';

function fail(message: string): never {
  process.stderr.write(`workbench-mcp: ${message}\n`);
  process.exit(2);
}

/** Start-up rules that need more than one setting (docs/design-notes.md#one-workspace-one-runtime). */
function checkCombination(c: Config): void {
  if (c.stdio) return;
  if (!isLoopbackHostname(c.host) && c.authMode === 'noauth') {
    fail(
      `SERVICE_HOST ${c.host} is not a loopback address, and noauth would publish the workspace to anyone who can reach it; use SERVICE_AUTH_MODE=bearer or oauth`,
    );
  }
  if (c.dangerouslyFakeReadonlyAnnotations && c.authMode === 'noauth') {
    fail(
      '--dangerously-fake-readonly-annotations needs authentication over HTTP; use SERVICE_AUTH_MODE=bearer or oauth',
    );
  }
  if (c.console && c.consolePort !== 0 && c.consolePort === c.port)
    fail(
      `--console-port ${c.consolePort} is the /mcp port; the console needs a port of its own (0 picks a free one)`,
    );
  if (c.auditLog) {
    try {
      accessSync(path.dirname(path.resolve(c.auditLog)), constants.W_OK);
    } catch {
      fail(`SERVICE_AUDIT_LOG ${c.auditLog}: its directory is not writable`);
    }
  }
}

/**
 * What serving over HTTP needs beyond what stdio needs, and the OAuth server only when it is configured:
 * loaded before anything starts, and only in that mode (docs/architecture.md "The bin is one bundled file":
 * start-up loads what the configured mode uses). A part that cannot be loaded means an incomplete
 * installation.
 */
async function httpParts(c: Config) {
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
type HttpParts = Awaited<ReturnType<typeof httpParts>>;

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
function oauthSetup(
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

interface AuthSetup {
  authenticator: Authenticator;
  extraRoutes?: ExtraRoute[];
  /** What to say about the bearer token at start (undefined: configured, never printed). */
  news?: TokenNews;
  /** The tokens accepted now (for the proof route), kept up to date when a kept token is rotated. */
  tokens: () => readonly string[];
}

/** The bearer token(s): configured, else kept for the workspace (made now if none), else made for this run. */
interface BearerCredential {
  tokens: readonly string[];
  news?: TokenNews;
  kept?: { state: KeptState; file: string };
}

function bearerCredential(c: Config, state: StateOpen | undefined): BearerCredential {
  if (c.authTokens.length > 0) return { tokens: c.authTokens };
  if (state?.kind !== 'on') {
    const token = randomBytes(32).toString('base64url');
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

function authenticatorFor(
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
    const server = createOAuthServer({ ...oauth.options, clock: runtime.clock, log: runtime.log });
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

async function main(): Promise<void> {
  // eslint-disable-next-line no-restricted-syntax -- handed straight to config/ (through the subcommand)
  const sub = await runSubcommand(process.argv.slice(2), process.env, process.cwd());
  if (sub !== undefined) return void process.exit(sub);
  let action;
  try {
    // eslint-disable-next-line no-restricted-syntax -- handed straight to config/, the only reader
    action = load(process.argv.slice(2), process.env, process.cwd());
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  if (action.kind === 'help')
    return void process.stdout.write(helpText(SERVER_VERSION, selfCommand(action.pathVar)));
  if (action.kind === 'version') return void process.stdout.write(`${SERVER_VERSION}\n`);
  if (action.kind === 'print-config-table') return void process.stdout.write(configTableMarkdown() + '\n');
  const config = action.config;
  if (config.testPause) setPausePoints(config.testPause.points, config.testPause.resumeFile);
  const rootCheck = checkRoot(config.workspace, config.env.HOME);
  if (!rootCheck.ok) {
    const from = config.sources.workspace;
    fail(
      from
        ? `${from}: ${rootCheck.reason}`
        : `${rootCheck.reason} (the current directory is served when no --workspace is given)`,
    );
  }
  checkCombination(config);
  const http = config.stdio ? undefined : await httpParts(config);
  const log = createLogger(config.logLevel);
  // Kept credentials: a generated bearer token, the OAuth signing key and grants (docs/configuration.md).
  const needsState =
    http !== undefined &&
    (config.authMode === 'oauth' || (config.authMode === 'bearer' && config.authTokens.length === 0));
  // The operator's console keeps its link key there too (cli/console-start.ts), but never stops a start for it.
  const state = needsState
    ? stateFor(config, rootCheck.root)
    : http && config.console
      ? consoleState(config, rootCheck.root, log)
      : undefined;
  const oauth = oauthSetup(config, http, state, log);
  const bearer = http && config.authMode === 'bearer' ? bearerCredential(config, state) : undefined;
  const self = selfCommand(config.env.PATH);
  let runtime: Runtime;
  try {
    runtime = new Runtime({ config, root: rootCheck.root, log });
  } catch (e) {
    if (e instanceof RuntimeDirError || e instanceof SandboxUnavailableError) fail(e.message);
    throw e;
  }

  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    await runtime.shutdown();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  if (config.permissionMode === 'dangerous') log.warn(DANGEROUS_WARNING);
  if (config.stdio || !http) {
    process.stderr.write(
      `workbench-mcp: serving ${rootCheck.root.lexical} on stdio (permission mode ${config.permissionMode})\n`,
    );
    // Warm up once the client's opening requests are answered: warming blocks for some milliseconds.
    await serveStdio(runtime, process.stdin, process.stdout, () => afterReady(runtime, log));
    return stop();
  }

  const { authenticator, extraRoutes, news, tokens } = authenticatorFor(config, http, oauth, runtime, bearer);
  // What `doctor` may ask this server to prove it knows before sending it a secret (http/proof.ts).
  const password = config.oauthPassword ?? oauth?.generatedPassword;
  const server = http.server.createHttpServer({
    runtime,
    authenticator,
    extraRoutes,
    proofSecrets: () => (password === undefined ? tokens() : [...tokens(), password]),
  });
  runtime.onShutdown(() => new Promise<void>((r) => server.close(() => r())));
  runtime.onShutdown(() => server.closeAllConnections());
  server.on('error', (e: NodeJS.ErrnoException) => {
    // Exit 2 like fail(), but through stop() so the runtime directory made above is removed.
    const hint =
      e.code === 'EADDRINUSE'
        ? '; another program uses that port: choose another with --port N, or --port 0 for any free port'
        : e.code === 'EADDRNOTAVAIL'
          ? '; that address is not on this machine: use --host 127.0.0.1'
          : e.code === 'EACCES'
            ? '; ports below 1024 need privileges: use --port 8765 or --port 0'
            : '';
    process.stderr.write(
      `workbench-mcp: cannot listen on ${config.host}:${config.port}: ${e.code ?? e.message}${hint}\n`,
    );
    // A token made for this start was never shown: the next start makes (and shows) a new one.
    if (news?.kind === 'kept' && news.created && state?.kind === 'on') removeKept(state.state, TOKEN_FILE);
    void stop(2);
  });
  server.listen(config.port, config.host, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    // docs/design-notes.md#secrets-at-start: a secret made now is shown once, directly on stderr, never
    // through the logger; a kept one is named by its file, a configured one never.
    if (news) process.stderr.write(tokenBanner(news, config, self));
    if (oauth?.generatedPassword) process.stderr.write(passwordBanner(oauth.generatedPassword));
    for (const w of oauth?.warnings ?? []) log.warn(w);
    if (config.dangerouslyFakeReadonlyAnnotations) {
      log.warn(
        '--dangerously-fake-readonly-annotations: tools/list reports every tool as read-only; never publish this endpoint',
      );
    }
    if (config.externalAuthProxy && config.authMode === 'noauth') {
      log.warn(
        'SERVICE_EXTERNAL_AUTH_PROXY=1: noauth serves forwarded requests; the proxy in front MUST authenticate every request',
      );
    }
    process.stderr.write(servingBanner(config, self, port, rootCheck.root.lexical));
    void startConsole({
      runtime,
      local: `http://${host}:${port}/mcp`,
      credential: () => tokens()[0],
      state,
      self,
      scope: scopeArgs(config, { stateDir: true }),
    }).then((line) => {
      process.stderr.write(line);
      process.stderr.write(`workbench-mcp listening on http://${host}:${port}/mcp\n`);
      // After the ready line: probing bubblewrap takes a few milliseconds.
      setImmediate(() => afterReady(runtime, log));
    });
  });
}

/**
 * Right after the server is ready: start what the first command needs (sandbox probe, spawner helper, the
 * tool modules) so it does not wait for them (docs/tools.md#commands, docs/architecture.md), and without a
 * sandbox say what `safe`/`trusted` then cannot stop (docs/security-model.md).
 */
function afterReady(runtime: Runtime, log: ReturnType<typeof createLogger>): void {
  runtime.commands.warm();
  const loaded = runtime.catalog.preload();
  loaded.catch((e: unknown) => log.error(String((e as Error)?.message ?? e)));
  void rehearse(runtime, loaded).catch(() => {});
  const s = runtime.commands.sandboxStatus();
  if (s.in_use !== null || runtime.config.permissionMode === 'dangerous') return;
  log.warn(
    `permission mode ${runtime.config.permissionMode} without an OS sandbox cannot stop a script: ${s.reason}`,
  );
}

/**
 * Once the tools are loaded and the command helper is up, one `echo` through exec_command's whole path, then
 * forgotten: the first real command finds its code compiled and the helper's first fork done
 * (docs/architecture.md: the first command within 1.5× of later ones). Not a tool call of any client: no
 * audit line, never listed.
 */
async function rehearse(runtime: Runtime, loaded: Promise<unknown>): Promise<void> {
  // A test that stops the server at a pause point aims at its own tool call, not at this one.
  if (runtime.config.testPause) return;
  await loaded;
  if (!(await runtime.commands.whenUp())) return;
  const entry = await runtime.catalog.lookup('exec_command');
  if (!entry) return;
  const ctx = { runtime, principal: SERVER_PRINCIPAL, signal: new AbortController().signal };
  const r = await entry.call({ cmd: 'echo rehearsal' }, ctx);
  const id = r.structured.command_id;
  if (typeof id === 'string') runtime.commands.forget(id);
  runtime.log.debug('first-command rehearsal done', { forgotten: typeof id === 'string' });
}

main().catch((e) => {
  process.stderr.write(`workbench-mcp: fatal: ${String((e as Error)?.stack ?? e)}\n`);
  process.exit(1);
});
