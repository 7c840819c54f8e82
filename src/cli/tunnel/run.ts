// `workbench-mcp tunnel cloudflared|ngrok|devtunnel` (docs/remote-access.md): uses the bearer token kept for
// the workspace (made now if there is none; the server child finds it in the same state directory) or, with
// nothing kept, makes one for the run and passes it by environment, never argv; runs the built server on
// loopback as a child process and the provider CLI found on PATH, reads the public URL from the provider,
// waits (--wait, saying every few seconds what it waits for) until https://<host>/.well-known/mcp.json
// answers through the tunnel, prints the block, and stops both on Ctrl-C or when either dies. Exit codes:
// TUNNEL_EXIT.
import { ConfigError, load, type Config } from '../../config/load.js';
import { isLoopbackHostname } from '../../core/hosts.js';
import { generatePassword, systemRandom } from '../../oauth/secrets.js';
import { keptToken } from '../../state/credentials.js';
import { openStateDir, StateDirError } from '../../state/state-dir.js';
import { checkRoot } from '../../workspace/paths.js';
import { scopeArgs } from '../banner.js';
import { commandLine, MAIN_JS, NODE_FLAGS, selfCommand } from '../self.js';
import { describeExit, startChild, type Child, type Exit } from '../../process/supervised.js';
import { cloudflared } from './cloudflared.js';
import { devtunnel } from './devtunnel.js';
import { ngrok } from './ngrok.js';
import { renderBlock, qrCode } from './print.js';
import {
  findOnPath,
  PROVIDER_IDS,
  type Provider,
  type ProviderId,
  type ProviderOptions,
} from './provider.js';
import { explainFailure, progress, waitReachable, watchOrigin } from './wait.js';
import { randomBase64url } from '../../core/random.js';

export const TUNNEL_EXIT = {
  /** Stopped by Ctrl-C, SIGTERM or SIGHUP. */
  stopped: 0,
  usage: 2,
  /** The provider's CLI is not on PATH. */
  noProvider: 3,
  /** The server exited (did not start, or died). */
  server: 4,
  /** The provider exited (did not start, or died), or named no usable URL. */
  provider: 5,
  /** The public URL did not answer within the ceiling. */
  unreachable: 6,
} as const;

const SERVER_START_MS = 120_000;
/** Default of --wait: how long the provider may take to name its URL, and then that URL to answer. */
const WAIT_S = 180;
const MAX_WAIT_S = 3600;
const FACTORIES: Record<ProviderId, (o: ProviderOptions) => Provider> = { cloudflared, ngrok, devtunnel };

export const TUNNEL_USAGE = `Usage: workbench-mcp tunnel cloudflared|ngrok|devtunnel [--name NAME] [--wait SECONDS] [server options]

Starts the server on 127.0.0.1 and publishes it through the provider's CLI (found on PATH, never downloaded),
then prints https://<host>/mcp with the header or OAuth password and settings for each client.
  --name NAME     ngrok: your reserved domain; devtunnel: a tunnel made with devtunnel create (stable address)
  --wait SECONDS  how long the provider may take to name its URL, and then that URL to answer (default ${WAIT_S})
  --auth-mode bearer|oauth, --workspace DIR, --port N (default 8765; 0 = any, not for devtunnel), and every
                  other server option (workbench-mcp --help)
Exit codes: 0 stopped by Ctrl-C, 2 bad options, 3 provider CLI missing, 4 the server exited,
            5 the provider exited, 6 the public URL never answered.
`;

interface Parsed {
  provider: ProviderId;
  name?: string;
  waitMs: number;
  serverArgs: string[];
}

function parseArgs(argv: readonly string[]): Parsed | { error: string; usage?: true } | { help: true } {
  if (argv.includes('--help')) return { help: true };
  const [first, ...rest] = argv;
  if (first === undefined || first.startsWith('--'))
    return { error: `name a tunnel provider: ${PROVIDER_IDS.join(', ')}`, usage: true };
  if (!PROVIDER_IDS.includes(first as ProviderId))
    return {
      error: `unknown tunnel provider ${JSON.stringify(first)}; use one of ${PROVIDER_IDS.join(', ')}`,
    };
  const serverArgs: string[] = [];
  let name: string | undefined;
  let waitS = WAIT_S;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    const value = () => (a.includes('=') ? a.slice(a.indexOf('=') + 1) : rest[++i]);
    if (a === '--name' || a.startsWith('--name=')) {
      name = value();
      if (!name) return { error: '--name needs a value' };
    } else if (a === '--wait' || a.startsWith('--wait=')) {
      const v = value() ?? '';
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > MAX_WAIT_S)
        return {
          error: `--wait must be a number of seconds from 1 to ${MAX_WAIT_S} (got ${JSON.stringify(v)})`,
        };
      waitS = Number(v);
    } else serverArgs.push(a);
  }
  return { provider: first as ProviderId, name, waitMs: waitS * 1000, serverArgs };
}

interface Credential {
  /** What the server child gets by environment. */
  env: Record<string, string>;
  /** A token the block may show: made now (docs/design-notes.md#secrets-at-start). */
  token?: string;
  /** How the block names a kept token it must not show: the command that prints it. */
  keptShow?: string;
  /** The token lives for this run only (nothing is kept). */
  forRun?: boolean;
  password?: string;
}

/**
 * The credential: a configured one is never shown; otherwise the token kept for the workspace (made now, and
 * then shown, when there is none — the server child reads the same file), or with nothing kept a token for
 * this run, passed to the child by environment. In OAuth mode the child keeps its signing key itself.
 */
function credential(c: Config): Credential | { error: string } {
  if (c.authMode === 'oauth') {
    if (c.oauthPassword) return { env: {} };
    const password = generatePassword(systemRandom);
    return { env: { SERVICE_OAUTH_PASSWORD: password }, password };
  }
  if (c.authTokens.length > 0) return { env: {} };
  const root = checkRoot(c.workspace, c.env.HOME);
  if (!root.ok) return { error: `${c.sources.workspace ?? 'the current directory'}: ${root.reason}` };
  try {
    const opened = openStateDir(c.stateDir, root.root.real);
    if (opened.kind === 'on') {
      const kept = keptToken(opened.state);
      const show = commandLine(selfCommand(c.env.PATH), [
        'token',
        'show',
        ...scopeArgs(c, { stateDir: true }),
      ]);
      return kept.created ? { env: {}, token: kept.token, keptShow: show } : { env: {}, keptShow: show };
    }
  } catch (e) {
    if (e instanceof StateDirError) return { error: e.message };
    throw e;
  }
  const token = randomBase64url(32);
  return { env: { SERVICE_AUTH_TOKEN: token }, token, forRun: true };
}

/** The provider gets the user's environment without any SERVICE_* setting: it needs none of our secrets. */
function providerEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('SERVICE_')));
}

type Event =
  { kind: 'server'; exit: Exit } | { kind: 'provider'; exit: Exit } | { kind: 'signal'; name: string };

export async function runTunnel(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
  io: { out: (s: string) => void; err: (s: string) => void; isTTY: boolean },
): Promise<number> {
  const say = (s: string) => io.err(`workbench-mcp tunnel: ${s}\n`);
  const refuse = (s: string, code: number = TUNNEL_EXIT.usage) => {
    say(s);
    return code;
  };
  const parsed = parseArgs(argv);
  if ('help' in parsed) {
    io.out(TUNNEL_USAGE);
    return 0;
  }
  if ('error' in parsed) {
    if ('usage' in parsed) io.err(TUNNEL_USAGE);
    return refuse(parsed.error);
  }
  let config: Config;
  try {
    const action = load(parsed.serverArgs, env, cwd);
    if (action.kind !== 'serve') return refuse('--version does not apply here');
    config = action.config;
  } catch (e) {
    if (e instanceof ConfigError) return refuse(e.message);
    throw e;
  }
  if (config.stdio) return refuse('--stdio does not apply: the tunnel serves HTTP');
  if (config.authMode === 'noauth')
    return refuse('noauth would publish the workspace to anyone; use --auth-mode bearer or oauth');
  if (!isLoopbackHostname(config.host))
    return refuse(`the tunnel serves on 127.0.0.1; drop --host ${config.host}`);
  const provider = FACTORIES[parsed.provider]({ port: config.port, name: parsed.name });
  const invalid = provider.invalid();
  if (invalid) return refuse(invalid);
  const cli = findOnPath(provider.cli, config.env.PATH);
  if (!cli) return refuse(`${provider.cli} is not on PATH; ${provider.install}`, TUNNEL_EXIT.noProvider);
  const cred = credential(config);
  if ('error' in cred) return refuse(cred.error);
  return new Session(config, provider, cli, parsed, cred, io, say).run();
}

class Session {
  private server?: Child;
  private tunnel?: Child;
  private readonly serverArgs: string[];
  private readonly waitMs: number;
  private signalled?: (e: Event) => void;
  private readonly signal = new Promise<Event>((r) => (this.signalled = r));

  constructor(
    private readonly config: Config,
    private readonly provider: Provider,
    private readonly cli: string,
    parsed: Parsed,
    private readonly cred: Credential,
    private readonly io: { out: (s: string) => void; err: (s: string) => void; isTTY: boolean },
    private readonly say: (s: string) => void,
  ) {
    this.serverArgs = parsed.serverArgs;
    this.waitMs = parsed.waitMs;
  }

  /** Resolves with the first of: the server or the provider exiting, a stop signal. */
  private failure(): Promise<Event> {
    const all: Array<Promise<Event>> = [this.signal];
    if (this.server) all.push(this.server.exited.then((exit) => ({ kind: 'server', exit }) as Event));
    if (this.tunnel) all.push(this.tunnel.exited.then((exit) => ({ kind: 'provider', exit }) as Event));
    return Promise.race(all);
  }

  async run(): Promise<number> {
    const onSignal = (name: string) => () => this.signalled?.({ kind: 'signal', name });
    const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, onSignal(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    try {
      return await this.phases();
    } finally {
      await this.stopAll();
      for (const [s, h] of handlers) process.off(s, h);
    }
  }

  private async phases(): Promise<number> {
    let origin = this.provider.knownOrigin;
    let port = this.config.port;
    if (this.provider.order === 'provider-first') {
      const got = await this.startProvider(port);
      if (typeof got === 'number') return got;
      origin = got;
    }
    const started = await this.startServer(port, origin);
    if (typeof started !== 'number') return started ? this.report(started) : TUNNEL_EXIT.server;
    port = started;
    if (this.provider.order === 'server-first') {
      const got = await this.startProvider(port);
      if (typeof got === 'number') return got;
      if (origin && got !== origin)
        this.say(`${this.provider.cli} reports ${got}, not the reserved ${origin}`);
      origin = got;
    }
    return this.publish(origin as string, port);
  }

  /** Waits until the public origin answers, prints the block, then runs until something ends. */
  private async publish(origin: string, port: number): Promise<number> {
    const waitS = this.waitMs / 1000;
    this.say(`waiting until ${origin}/.well-known/mcp.json answers through the tunnel (up to ${waitS} s)…`);
    let over = false;
    const reached = await Promise.race([
      waitReachable(
        origin,
        this.config,
        this.waitMs,
        () => over,
        (line) => this.say(line),
      ),
      this.failure(),
    ]);
    over = true;
    if ('kind' in reached) return this.report(reached);
    if (!reached.ok) {
      this.say(
        `${origin} did not answer within ${waitS} s: ${explainFailure(reached.last, new URL(origin).host)}; stopping. ` +
          `Try again, or allow longer with --wait SECONDS; a stable address (a named tunnel or a reserved domain: README "Going remote") also spares clients a new URL on every run`,
      );
      return TUNNEL_EXIT.unreachable;
    }
    for (const w of reached.warnings) this.say(w);
    const url = `${origin}/mcp`;
    this.io.out(
      renderBlock({
        url,
        describe: this.provider.describe,
        workspace: this.config.workspace,
        port,
        authMode: this.config.authMode === 'oauth' ? 'oauth' : 'bearer',
        token: this.cred.token,
        keptShow: this.cred.keptShow,
        forRun: this.cred.forRun,
        password: this.cred.password,
        self: selfCommand(this.config.env.PATH),
        scope: scopeArgs(this.config, { stateDir: true }),
        qr: this.io.isTTY ? await qrCode(url) : undefined,
      }),
    );
    return this.report(await this.failure());
  }

  /**
   * Starts the server child on loopback (the credential and the pinned origin by environment); resolves with
   * its port, the event that came first, or undefined when it did not start within the ceiling.
   */
  private async startServer(port: number, pin: string | undefined): Promise<number | Event | undefined> {
    // WB_TUNNEL_CHILD: the child's banner says the tunnel publishes it, not how to start one.
    const env: Record<string, string> = { ...this.config.env, ...this.cred.env, WB_TUNNEL_CHILD: '1' };
    if (pin && !this.config.serverUrl) env.SERVICE_SERVER_URL = pin;
    if (pin && this.config.serverUrl && this.config.serverUrl !== pin)
      this.say(`SERVICE_SERVER_URL is ${this.config.serverUrl}, but the tunnel is ${pin}; keeping yours`);
    const args = [...NODE_FLAGS, MAIN_JS, ...this.serverArgs, '--host', '127.0.0.1', '--port', String(port)];
    this.server = startChild('the server', process.execPath, args, env);
    const ready = new Promise<number>((resolve) => {
      this.server?.onLine((line) => {
        this.io.err(line + '\n');
        const m = /workbench-mcp listening on http:\/\/[^\s]+:(\d+)\/mcp/.exec(line);
        if (m) resolve(Number(m[1]));
      });
    });
    const r = await Promise.race([ready, this.failure(), sleep(SERVER_START_MS)]);
    if (r === undefined) this.say(`the server did not start within ${SERVER_START_MS / 1000} s`);
    return r;
  }

  /** Starts the provider and reads its public origin; a number is an exit code. */
  private async startProvider(port: number): Promise<string | number> {
    this.say(`starting ${this.cli} ${this.provider.argv(port).join(' ')}`);
    this.tunnel = startChild(
      this.provider.cli,
      this.cli,
      this.provider.argv(port),
      providerEnv(this.config.env),
    );
    const watch = watchOrigin(this.provider, this.tunnel);
    const waitS = this.waitMs / 1000;
    const stopProgress = progress((s) =>
      this.say(`still waiting for ${this.provider.cli} to name its public URL (${s} s of ${waitS} s)`),
    );
    const r = await Promise.race([watch.result, this.failure(), sleep(this.waitMs)]);
    stopProgress();
    watch.cancel();
    if (r === undefined) {
      this.say(`${this.provider.cli} named no public URL within ${waitS} s; its last output:`);
      this.printTail(this.tunnel);
      return TUNNEL_EXIT.provider;
    }
    if ('kind' in r) return this.report(r);
    if ('error' in r) {
      this.say(r.error);
      return TUNNEL_EXIT.provider;
    }
    return r.origin;
  }

  private printTail(c: Child): void {
    for (const l of c.tail()) this.io.err(`  | ${l}\n`);
  }

  /** Says what ended the session; the exit code says which process it was. */
  private report(e: Event): number {
    if (e.kind === 'signal') {
      this.say(`${e.name}: stopping ${this.provider.cli} and the server`);
      return TUNNEL_EXIT.stopped;
    }
    const [child, other] = e.kind === 'server' ? [this.server, this.tunnel] : [this.tunnel, this.server];
    const stopping = other && !other.done() ? `; stopping ${other.name}` : '';
    this.say(`${child?.name} ${describeExit(e.exit)}${stopping}. Its last output:`);
    if (child) this.printTail(child);
    if (e.kind === 'provider' && this.provider.exitHint) this.say(this.provider.exitHint);
    return e.kind === 'server' ? TUNNEL_EXIT.server : TUNNEL_EXIT.provider;
  }

  private async stopAll(): Promise<void> {
    await this.tunnel?.stop();
    await this.server?.stop();
  }
}

function sleep(ms: number): Promise<undefined> {
  return new Promise((r) => setTimeout(() => r(undefined), ms).unref());
}
