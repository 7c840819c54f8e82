// The server, loaded by the bin (main.ts) once its heap flags are in force (heap-flags.ts): argv + environment
// → Config → HTTP or stdio. With what it prepares (start-parts.ts), its warm-up (warm-up.ts) and its refusal
// (fail.ts), the only place that wires modules together and, with heap-flags.ts, the only place that exits the
// process.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { ConfigError, load, type Config } from '../config/load.js';
import { TOKEN_FILE } from '../state/credentials.js';
import { removeKept, type StateOpen } from '../state/state-dir.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import { DANGEROUS_WARNING, passwordBanner, scopeArgs, servingBanner, tokenBanner } from './banner.js';
import { runningServer, startConsole } from './console-start.js';
import { commandLine, selfCommand } from './self.js';
import { configTableMarkdown } from '../config/describe.js';
import { createLogger, type Logger } from '../core/log.js';
import { setPausePoints } from '../core/pause.js';
import { SERVER_VERSION } from '../core/version.js';
import { isLoopbackHostname } from '../core/hosts.js';
import { readyLine } from '../core/ready-line.js';
import type { OAuthSetup } from '../oauth/from-config.js';
import { Runtime } from '../runtime/runtime.js';
import { RuntimeDirError } from '../process/runtime-dir.js';
import { SandboxUnavailableError } from '../process/sandbox/sandbox.js';
import { closeInheritedDescriptors } from '../process/inherited-fds.js';
import { loadPty } from '../process/spawn/spawn.js';
import { SearchEngines } from '../workspace/search/engines.js';
import { serveStdio } from '../stdio/serve.js';
import { checkRoot } from '../workspace/paths.js';
import { fail } from './fail.js';
import { helpText } from './help.js';
import {
  authenticatorFor,
  bearerCredential,
  httpParts,
  oauthSetup,
  stateForStart,
  type AuthSetup,
  type BearerCredential,
  type HttpParts,
} from './start-parts.js';
import { runSubcommand } from './subcommands.js';
import { afterReady } from './warm-up.js';

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

/** The Config to serve, or undefined when the command was a subcommand, --help, --version or the table. */
async function configOrExit(): Promise<Config | undefined> {
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
  return action.config;
}

function checkedRoot(config: Config): WorkspaceRoot {
  const rootCheck = checkRoot(config.workspace, config.env.HOME);
  if (rootCheck.ok) return rootCheck.root;
  const from = config.sources.workspace;
  return fail(
    from
      ? `${from}: ${rootCheck.reason}`
      : `${rootCheck.reason} (the current directory is served when no --workspace is given)`,
  );
}

/**
 * What the server would otherwise load on first use (the search engines, the PTY library, prom-client's
 * registry), loaded with the tool modules so that no code is loaded once a command may have run
 * (tools/lazy-catalog.ts; docs/security-model.md, rule B).
 */
async function loadLaterCode(config: Config): Promise<void> {
  loadPty(); // where it cannot load, the reason is kept and tty commands say it
  await SearchEngines.loadCode();
  if (!config.stdio) (await import('../http/metrics-exposition.js')).loadMetricsCode();
}

/**
 * The runtime, assembled, then started (runtime/runtime.ts): a runtime directory that cannot be made or a
 * sandbox that cannot run stops the start (exit 2), after what was already made is removed.
 */
async function startRuntime(
  config: Config,
  root: WorkspaceRoot,
  log: Logger,
  state: StateOpen | undefined,
): Promise<Runtime> {
  let runtime: Runtime | undefined;
  try {
    const kept = state?.kind === 'on' ? { kept: state.state } : {};
    runtime = new Runtime({ config, root, log, preload: () => loadLaterCode(config), ...kept });
    await runtime.start();
    return runtime;
  } catch (e) {
    if (!(e instanceof RuntimeDirError || e instanceof SandboxUnavailableError)) throw e;
    await runtime?.shutdown();
    return fail(e.message);
  }
}

/**
 * Shuts the runtime down once and exits; SIGINT and SIGTERM call it, and then one line says the server
 * stopped (a Ctrl-C is a normal end, not a failure).
 */
function stopper(runtime: Runtime): (code?: number) => Promise<void> {
  let stopping = false;
  const stop = async (code = 0, signal?: string) => {
    if (stopping) return;
    stopping = true;
    await runtime.shutdown();
    if (signal) process.stderr.write(`workbench-mcp: stopped (${signal})\n`);
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0, 'SIGINT'));
  process.on('SIGTERM', () => void stop(0, 'SIGTERM'));
  return stop;
}

async function main(): Promise<void> {
  // First, before anything is started: no child may get what the server's launcher left open.
  const inherited = closeInheritedDescriptors();
  const config = await configOrExit();
  if (!config) return;
  if (config.testPause) setPausePoints(config.testPause.points, config.testPause.resumeFile);
  const root = checkedRoot(config);
  checkCombination(config);
  const http = config.stdio ? undefined : await httpParts(config);
  const log = createLogger(config.logLevel);
  if (inherited.length) log.debug('closed inherited descriptors', { fds: inherited });
  const state = stateForStart(config, http, root, log);
  const oauth = oauthSetup(config, http, state, log);
  const bearer = http && config.authMode === 'bearer' ? bearerCredential(config, state) : undefined;
  const runtime = await startRuntime(config, root, log, state);
  const stop = stopper(runtime);
  if (config.permissionMode === 'dangerous') log.warn(DANGEROUS_WARNING);
  if (config.stdio || !http) {
    process.stderr.write(
      `workbench-mcp: serving ${root.lexical} on stdio (permission mode ${config.permissionMode})\n`,
    );
    // Warm up once the client's opening requests are answered: warming blocks for some milliseconds.
    await serveStdio(runtime, process.stdin, process.stdout, () => afterReady(runtime, log));
    return stop();
  }
  serveHttp({ config, http, oauth, bearer, runtime, state, log, root, stop });
}

/** What serving over HTTP starts from. */
interface HttpStart {
  config: Config;
  http: HttpParts;
  oauth: Extract<OAuthSetup, { ok: true }> | undefined;
  bearer: BearerCredential | undefined;
  runtime: Runtime;
  state: StateOpen | undefined;
  log: Logger;
  root: WorkspaceRoot;
  stop: (code?: number) => Promise<void>;
}

function serveHttp(s: HttpStart): void {
  const { config, runtime, oauth } = s;
  const auth = authenticatorFor(config, s.http, oauth, runtime, s.bearer);
  // What `doctor` may ask this server to prove it knows before sending it a secret (http/proof.ts).
  const password = config.oauthPassword ?? oauth?.generatedPassword;
  const server = s.http.server.createHttpServer({
    runtime,
    authenticator: auth.authenticator,
    extraRoutes: auth.extraRoutes,
    proofSecrets: () => (password === undefined ? auth.tokens() : [...auth.tokens(), password]),
  });
  runtime.onShutdown(() => new Promise<void>((r) => server.close(() => r())));
  runtime.onShutdown(() => server.closeAllConnections());
  server.on('error', (e: NodeJS.ErrnoException) => {
    // Exit 2 like fail(), but through stop() so the runtime directory made above is removed.
    const hint = listenHint(e.code, s);
    process.stderr.write(
      `workbench-mcp: cannot listen on ${config.host}:${config.port}: ${e.code ?? e.message}${hint}\n`,
    );
    // A token made for this start was never shown: the next start makes (and shows) a new one.
    if (auth.news?.kind === 'kept' && auth.news.created && s.state?.kind === 'on')
      removeKept(s.state.state, TOKEN_FILE);
    void s.stop(2);
  });
  server.listen(config.port, config.host, () => {
    const addr = server.address();
    onListening(s, auth, typeof addr === 'object' && addr ? addr.port : config.port);
  });
}

/** What to do about a listen error; for a port in use, whether it is this workspace's own server. */
function listenHint(code: string | undefined, s: HttpStart): string {
  if (code === 'EADDRINUSE') {
    const own = runningServer(s.state);
    if (own && new URL(own.url).port === String(s.config.port))
      return (
        `; this workspace's server already runs there (pid ${own.pid}, ${own.url}): connect your clients to it, ` +
        `get its console with ${commandLine(selfCommand(s.config.env.PATH), ['console', ...scopeArgs(s.config, { stateDir: true })])}, ` +
        `or stop it (kill ${own.pid}) before starting another; --port 0 runs a second one beside it`
      );
    return '; another program uses that port: choose another with --port N, or --port 0 for any free port';
  }
  if (code === 'EADDRNOTAVAIL') return '; that address is not on this machine: use --host 127.0.0.1';
  if (code === 'EACCES') return '; ports below 1024 need privileges: use --port 8765 or --port 0';
  return '';
}

/** Listening: the one-time secrets, the warnings and the banner, then the console and the ready line. */
function onListening(s: HttpStart, auth: AuthSetup, port: number): void {
  const { config, oauth, log, runtime } = s;
  const self = selfCommand(config.env.PATH);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // docs/design-notes.md#secrets-at-start: a secret made now is shown once, directly on stderr, never
  // through the logger; a kept one is named by its file, a configured one never.
  if (auth.news) process.stderr.write(tokenBanner(auth.news, config, self));
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
  process.stderr.write(servingBanner(config, self, port, s.root.lexical));
  const local = `http://${host}:${port}/mcp`;
  const credential = () => auth.tokens()[0];
  void startConsole({
    runtime,
    local,
    credential,
    state: s.state,
    self,
    scope: scopeArgs(config, { stateDir: true }),
  }).then((line) => {
    process.stderr.write(line);
    process.stderr.write(readyLine(host, port));
    // After the ready line: probing bubblewrap takes a few milliseconds.
    const self = { url: local, credential, oauth: config.authMode === 'oauth' };
    setImmediate(() => afterReady(runtime, log, self));
  });
}

main().catch((e) => {
  process.stderr.write(`workbench-mcp: fatal: ${String((e as Error)?.stack ?? e)}\n`);
  process.exit(1);
});
