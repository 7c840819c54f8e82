#!/usr/bin/env -S node --max-semi-space-size=1
// (The shebang caps V8's young generation at 1 MiB per semi-space: large responses then cost short GCs instead
// of ~60 MB of resident memory; `npm start` passes the same flag.)
// Entry point: argv + environment → Config → HTTP or stdio. The only place that wires modules together and
// the only place that exits the process.
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { ConfigError, load, type Config } from '../config/load.js';
import { configTableMarkdown } from '../config/schema.js';
import { createLogger } from '../core/log.js';
import { setPausePoints } from '../core/pause.js';
import { SERVER_VERSION } from '../core/version.js';
import type { Authenticator } from '../auth/authenticate.js';
import { SERVER_PRINCIPAL } from '../auth/principal.js';
import type { ExtraRoute } from '../http/server.js';
import { isLoopbackHostname } from '../http/hosts.js';
import { systemClock } from '../core/clock.js';
import type { OAuthSetup } from '../oauth/from-config.js';
import { Runtime } from '../runtime/runtime.js';
import { RuntimeDirError } from '../runtime/runtime-dir.js';
import { SandboxUnavailableError } from '../process/sandbox.js';
import { serveStdio } from '../stdio/serve.js';
import { checkRoot } from '../workspace/paths.js';
import { helpText } from './help.js';
import { runSubcommand } from './subcommands.js';

function fail(message: string): never {
  process.stderr.write(`workbench-mcp: ${message}\n`);
  process.exit(2);
}

/** Start-up rules that need more than one setting (http-and-auth-contract "Process and binding"). */
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
  if (c.auditLog) {
    try {
      accessSync(path.dirname(path.resolve(c.auditLog)), constants.W_OK);
    } catch {
      fail(`SERVICE_AUDIT_LOG ${c.auditLog}: its directory is not writable`);
    }
  }
}

/**
 * What serving over HTTP needs beyond what stdio needs, and the OAuth server only when it is configured: loaded
 * before anything starts, and only in that mode (issue 14: start-up loads what the configured mode uses). A
 * part that cannot be loaded means an incomplete installation.
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

/** OAuth settings, validated before anything starts (a bad pre-registered redirect URI exits 2). */
function oauthSetup(c: Config, parts: HttpParts | undefined): Extract<OAuthSetup, { ok: true }> | undefined {
  if (!parts?.oauth) return undefined;
  const [{ oauthSetupFromConfig }, , { systemRandom }, { baseUrl }] = parts.oauth;
  const setup = oauthSetupFromConfig(c, {
    clock: systemClock,
    random: systemRandom,
    baseUrl: (req) => baseUrl(req, c),
  });
  if (!setup.ok) fail(setup.message);
  return setup;
}

function authenticatorFor(
  c: Config,
  parts: HttpParts,
  oauth: Extract<OAuthSetup, { ok: true }> | undefined,
  runtime: Runtime,
): { authenticator: Authenticator; extraRoutes?: ExtraRoute[]; generatedToken?: string } {
  const { BearerAuthenticator, NoAuthAuthenticator } = parts.auth;
  if (c.authMode === 'noauth') return { authenticator: new NoAuthAuthenticator(c.externalAuthProxy) };
  if (oauth && parts.oauth) {
    const [, { createOAuthServer }] = parts.oauth;
    // Static SERVICE_AUTH_TOKEN(s) are accepted beside OAuth when set, never generated here (decisions.md 11).
    const server = createOAuthServer({ ...oauth.options, clock: runtime.clock, log: runtime.log });
    return { authenticator: server.authenticator, extraRoutes: server.routes };
  }
  if (c.authTokens.length > 0) return { authenticator: new BearerAuthenticator(c.authTokens) };
  const token = randomBytes(32).toString('base64url');
  return { authenticator: new BearerAuthenticator([token]), generatedToken: token };
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
  if (action.kind === 'help') return void process.stdout.write(helpText(SERVER_VERSION));
  if (action.kind === 'version') return void process.stdout.write(`${SERVER_VERSION}\n`);
  if (action.kind === 'print-config-table') return void process.stdout.write(configTableMarkdown() + '\n');
  const config = action.config;
  if (config.testPause) setPausePoints(config.testPause.points, config.testPause.resumeFile);
  const rootCheck = checkRoot(config.workspace, config.env.HOME);
  if (!rootCheck.ok) fail(`SERVICE_WORKSPACE: ${rootCheck.reason}`);
  checkCombination(config);
  const http = config.stdio ? undefined : await httpParts(config);
  const oauth = oauthSetup(config, http);
  const log = createLogger(config.logLevel);
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

  if (config.stdio || !http) {
    process.stderr.write(
      `workbench-mcp: serving ${rootCheck.root.lexical} on stdio (permission mode ${config.permissionMode})\n`,
    );
    // Warm up once the client's opening requests are answered: warming blocks for some milliseconds.
    await serveStdio(runtime, process.stdin, process.stdout, () => afterReady(runtime, log));
    return stop();
  }

  const { authenticator, extraRoutes, generatedToken } = authenticatorFor(config, http, oauth, runtime);
  // What `doctor` may ask this server to prove it knows before sending it a secret (http/proof.ts).
  const proofSecrets = [...config.authTokens, generatedToken, config.oauthPassword, oauth?.generatedPassword];
  const server = http.server.createHttpServer({
    runtime,
    authenticator,
    extraRoutes,
    proofSecrets: proofSecrets.filter((s): s is string => s !== undefined),
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
    void stop(2);
  });
  server.listen(config.port, config.host, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    if (generatedToken) {
      // decisions.md 8: shown once, directly on stderr, never through the logger.
      process.stderr.write(
        `workbench-mcp: no SERVICE_AUTH_TOKEN set; generated a bearer token for this run (shown once):\n\n    ${generatedToken}\n\n` +
          `  Send it as "Authorization: Bearer <token>". Set SERVICE_AUTH_TOKEN or SERVICE_AUTH_TOKEN_FILE to keep one.\n`,
      );
    }
    if (oauth?.generatedPassword) {
      // decisions.md 8: shown once, directly on stderr, never through the logger.
      process.stderr.write(
        `workbench-mcp: no SERVICE_OAUTH_PASSWORD set; generated an OAuth password for this run (shown once):\n\n    ${oauth.generatedPassword}\n\n` +
          `  Type it on the authorization page when a client connects. Set SERVICE_OAUTH_PASSWORD to keep one.\n`,
      );
    }
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
    process.stderr.write(
      `workbench-mcp: serving ${rootCheck.root.lexical} (permission mode ${config.permissionMode}); ` +
        'to reach it from anywhere: workbench-mcp tunnel cloudflared|ngrok|devtunnel\n',
    );
    process.stderr.write(`workbench-mcp listening on http://${host}:${port}/mcp\n`);
    // After the ready line: probing bubblewrap takes a few milliseconds.
    setImmediate(() => afterReady(runtime, log));
  });
}

/**
 * Right after the server is ready: start what the first command needs (sandbox probe, spawner helper, the tool
 * modules) so it does not wait for them (issues 12 and 14), and without a sandbox say what `safe`/`trusted`
 * then cannot stop (issue 10).
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
 * forgotten: the first real command finds its code compiled and the helper's first fork done (issue 14: the
 * first command within 1.5× of later ones). Not a tool call of any client: no audit line, never listed.
 */
async function rehearse(runtime: Runtime, loaded: Promise<unknown>): Promise<void> {
  // A test that stops the server at a pause point aims at its own tool call, not at this one.
  if (runtime.config.testPause) return;
  await loaded;
  if (!(await runtime.commands.whenUp())) return;
  const entry = await runtime.catalog.lookup('exec_command');
  if (!entry) return;
  const ctx = { runtime, principal: SERVER_PRINCIPAL, signal: new AbortController().signal };
  const r = await entry.def.handler(entry.parse({ cmd: 'echo rehearsal' }), ctx);
  const id = r.structured.command_id;
  if (typeof id === 'string') runtime.commands.forget(id);
  runtime.log.debug('first-command rehearsal done', { forgotten: typeof id === 'string' });
}

main().catch((e) => {
  process.stderr.write(`workbench-mcp: fatal: ${String((e as Error)?.stack ?? e)}\n`);
  process.exit(1);
});
