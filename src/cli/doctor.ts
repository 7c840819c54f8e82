// `workbench-mcp doctor [URL]` (docs/remote-access.md): checks a running server the way a remote client meets
// it — local endpoint, public endpoint, server card, both OAuth metadata documents (which must name the
// public origin, not 127.0.0.1), the 401 challenge, an authenticated tools/list in both eras (token from
// SERVICE_AUTH_TOKEN / SERVICE_AUTH_TOKEN_FILE, read through config/), and in OAuth mode a full sign-in when
// SERVICE_OAUTH_PASSWORD is set. One line per check with the fix for a failure; exit 1 if any failed.
import { ConfigError, load, type Config } from '../config/load.js';
import { PROOF_PATH, proofOf } from '../http/proof.js';
import { isLoopbackHostname } from '../core/hosts.js';
import { readToken } from '../state/credentials.js';
import { peekStateDir, StateDirError } from '../state/state-dir.js';
import { checkRoot } from '../workspace/paths.js';
import { selfCommand } from './self.js';
import { fetchFailure } from './tunnel/wait.js';
import { oauthFlow, request, toolsList, unauthenticated, type Era, type Reply } from './doctor-http.js';
import { randomBase64url } from '../core/random.js';

type Status = 'pass' | 'FAIL' | 'skip';
interface Line {
  status: Status;
  name: string;
  detail: string;
  fix?: string;
}

export const DOCTOR_USAGE = `Usage: workbench-mcp doctor [https://<host>/mcp] [--port N] [--host H]

Checks the server on --host/--port (default 127.0.0.1:8765) and, given its public URL, everything a remote
client meets there. Uses SERVICE_AUTH_TOKEN / SERVICE_AUTH_TOKEN_FILE for the authenticated calls, else the
token kept for the workspace (--workspace, default the current directory) and, in OAuth mode, runs a full
sign-in when SERVICE_OAUTH_PASSWORD is set. Exit 1 if any check failed.
`;

let self = 'workbench-mcp';

const RESTART_PINNED = (origin: string) =>
  `restart the server with SERVICE_SERVER_URL=${origin} (or --server-url ${origin}); behind your own proxy SERVICE_TRUST_PROXY_HEADERS=1 also works, and ${self} tunnel sets this up for you`;

/** The bearer token doctor sends: the configured one, else the one kept for the workspace (never created). */
export function doctorToken(c: Config): { token?: string; source: string } {
  const configured = c.authTokens[0];
  if (configured) return { token: configured, source: 'SERVICE_AUTH_TOKEN / SERVICE_AUTH_TOKEN_FILE' };
  const root = checkRoot(c.workspace, c.env.HOME);
  if (!root.ok) return { source: 'nowhere' };
  try {
    const state = peekStateDir(c.stateDir, root.root.real);
    const token = state ? readToken(state) : undefined;
    if (token) return { token, source: `the token kept for ${root.root.lexical}` };
  } catch (e) {
    if (!(e instanceof StateDirError)) throw e;
  }
  return { source: 'nowhere' };
}

class Doctor {
  readonly lines: Line[] = [];
  private readonly bearer: { token?: string; source: string };
  constructor(
    private readonly config: Config,
    private readonly out: (s: string) => void,
  ) {
    this.bearer = doctorToken(config);
    self = selfCommand(config.env.PATH);
  }

  add(status: Status, name: string, detail: string, fix?: string): void {
    const l = { status, name, detail, fix };
    this.lines.push(l);
    this.out(`${status.padEnd(5)} ${name}: ${detail}${fix ? ` — fix: ${fix}` : ''}\n`);
  }

  /** GET a public document; a failure adds the line (`FAIL`, or `skip` when absence is fine) and returns undefined. */
  async get(name: string, url: string, fix: string, absent: Status = 'FAIL'): Promise<Reply | undefined> {
    try {
      return await request(url);
    } catch (e) {
      this.add(absent, name, `${url} did not answer (${fetchFailure(e)})`, fix);
      return undefined;
    }
  }

  async card(name: string, base: string, fix: string, absent: Status = 'FAIL'): Promise<Reply | undefined> {
    const r = await this.get(name, `${base}/.well-known/mcp.json`, fix, absent);
    if (!r) return undefined;
    if (r.status !== 200 || r.json?.server?.name !== 'workbench-mcp') {
      this.add(
        'FAIL',
        name,
        `${base}/.well-known/mcp.json answered HTTP ${r.status}, not a workbench-mcp card`,
        fix,
      );
      return undefined;
    }
    this.add('pass', name, `${base} answers (workbench-mcp ${r.json.server.version})`);
    return r;
  }

  checkCard(card: Reply, base: string, oauth: boolean, publicUrl: boolean): void {
    const c = card.json;
    const problems: string[] = [];
    if (c.transport?.endpoint !== '/mcp')
      problems.push(`transport endpoint is ${String(c.transport?.endpoint)}`);
    if (oauth && publicUrl && c.auth?.resource !== `${base}/mcp`)
      problems.push(`auth.resource is ${String(c.auth?.resource)}, not ${base}/mcp`);
    if (problems.length > 0)
      return this.add('FAIL', 'server card', problems.join('; '), RESTART_PINNED(base));
    this.add('pass', 'server card', `${c.tools?.count ?? '?'} tools, auth ${String(c.auth?.type)}`);
  }

  async metadata(base: string, publicUrl: boolean): Promise<void> {
    const fix = RESTART_PINNED(base);
    const prmUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
    const prm = await this.get('protected-resource metadata', prmUrl, fix);
    if (prm) {
      const names = [prm.json?.resource, ...(prm.json?.authorization_servers ?? [])].map(String);
      const wrong = names.find((u) => !u.startsWith(base));
      if (prm.status !== 200)
        this.add('FAIL', 'protected-resource metadata', `${prmUrl}: HTTP ${prm.status}`, fix);
      else if (wrong && publicUrl)
        this.add('FAIL', 'protected-resource metadata', `names ${origin(wrong)} instead of ${base}`, fix);
      else this.add('pass', 'protected-resource metadata', `resource ${String(prm.json.resource)}`);
    }
    const asUrl = `${base}/.well-known/oauth-authorization-server`;
    const as = await this.get('authorization-server metadata', asUrl, fix);
    if (!as) return;
    const j = as.json ?? {};
    const urls = [j.issuer, j.authorization_endpoint, j.token_endpoint, j.registration_endpoint].map(String);
    const wrong = urls.find((u) => u !== base && !u.startsWith(`${base}/`));
    if (as.status !== 200)
      this.add('FAIL', 'authorization-server metadata', `${asUrl}: HTTP ${as.status}`, fix);
    else if (wrong && publicUrl)
      this.add('FAIL', 'authorization-server metadata', `names ${origin(wrong)} instead of ${base}`, fix);
    else this.add('pass', 'authorization-server metadata', `issuer ${String(j.issuer)}`);
  }

  async challenge(base: string, oauth: boolean): Promise<void> {
    const name = 'unauthenticated call';
    let r: Reply;
    try {
      r = await unauthenticated(`${base}/mcp`);
    } catch (e) {
      return this.add(
        'FAIL',
        name,
        `POST ${base}/mcp failed (${fetchFailure(e)})`,
        'check the public endpoint first',
      );
    }
    const wa = r.headers.get('www-authenticate') ?? '';
    const want = `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`;
    if (r.status === 200)
      return this.add(
        'FAIL',
        name,
        'answered 200 without credentials',
        'run the server with --auth-mode bearer or oauth',
      );
    if (r.status !== 401 || !/^Bearer\b/i.test(wa))
      return this.add(
        'FAIL',
        name,
        `HTTP ${r.status}, WWW-Authenticate ${JSON.stringify(wa)}`,
        'expected 401 with a Bearer challenge; is something else answering on this URL?',
      );
    if (oauth && !wa.includes(want))
      return this.add('FAIL', name, `the challenge points at ${wa}, not ${want}`, RESTART_PINNED(base));
    this.add('pass', name, `401 with WWW-Authenticate: ${wa}`);
  }

  async tools(base: string, era: Era, token: string, source: string): Promise<void> {
    const name = `authenticated tools/list (${era === 'modern' ? '2026-07-28' : 'handshake era'})`;
    let r: Reply;
    try {
      r = await toolsList(`${base}/mcp`, era, token);
    } catch (e) {
      return this.add('FAIL', name, `failed (${fetchFailure(e)})`, 'check the public endpoint first');
    }
    if (r.status === 401)
      return this.add(
        'FAIL',
        name,
        `the server refused the token from ${source} (401)`,
        'use the token the server printed at start (or kept: token show), or the one in its own SERVICE_AUTH_TOKEN / SERVICE_AUTH_TOKEN_FILE',
      );
    const tools = r.json?.result?.tools;
    if (r.status !== 200 || !Array.isArray(tools))
      return this.add(
        'FAIL',
        name,
        `HTTP ${r.status}: ${r.text.slice(0, 200)}`,
        'see the server log for this request',
      );
    this.add('pass', name, `${tools.length} tools`);
  }

  /** Local and public endpoints; returns the base URL and card the other checks use. */
  async endpoints(publicUrl: string | undefined): Promise<{ base: string; card: Reply } | undefined> {
    const c = this.config;
    const local = `http://${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`;
    // Given a public URL, the server may well run on another machine or port: then no local answer is fine.
    const localCard = await this.card(
      'local endpoint',
      local,
      `start the server (${self} --port ${c.port}), or point doctor at it with --port N`,
      publicUrl ? 'skip' : 'FAIL',
    );
    if (!publicUrl) {
      this.add('skip', 'public endpoint', `no URL given (${self} doctor https://<host>/mcp)`);
      return localCard && { base: local, card: localCard };
    }
    const pub = await this.card(
      'public endpoint',
      publicUrl,
      `is the tunnel running (${self} tunnel …) and forwarding to this server?`,
    );
    if (!pub) return undefined;
    if (!publicUrl.startsWith('https://') && !isLoopbackHostname(new URL(publicUrl).hostname))
      this.add(
        'FAIL',
        'public endpoint',
        `${publicUrl} is not https`,
        'publish through an HTTPS tunnel or proxy',
      );
    if (localCard && !isSameServer(localCard, pub))
      this.add(
        'FAIL',
        'public endpoint',
        'it reaches another server than the local one',
        "point the tunnel at this server's port",
      );
    return { base: publicUrl, card: pub };
  }

  /** OAuth mode with SERVICE_OAUTH_PASSWORD: the whole sign-in; returns its access token when it worked. */
  async signIn(base: string): Promise<string | undefined> {
    const password = this.config.oauthPassword;
    if (!password) {
      this.add('skip', 'OAuth sign-in', "set SERVICE_OAUTH_PASSWORD to the server's password to run it");
      return undefined;
    }
    const flow = await oauthFlow(base, password).catch((e: unknown) => ({
      ok: false as const,
      step: 'request',
      detail: fetchFailure(e),
    }));
    if (flow.ok) {
      this.add('pass', 'OAuth sign-in', 'registration, password page, code and token exchange all worked');
      return flow.accessToken;
    }
    const fix =
      flow.step === 'password'
        ? "set SERVICE_OAUTH_PASSWORD to the server's password (a wrong one is answered after a short delay and counts toward the limits on wrong passwords)"
        : 'see the server log for this request';
    this.add('FAIL', 'OAuth sign-in', `failed at the ${flow.step} step: ${flow.detail}`, fix);
    return undefined;
  }

  /**
   * Before a token or password is sent to `base`: the server there proves it knows each of them (http/proof.ts),
   * so a program squatting the port never receives one. Nothing to send: nothing to prove.
   */
  async proven(base: string, secrets: string[]): Promise<boolean> {
    if (secrets.length === 0) return true;
    const nonce = randomBase64url(24);
    const name = 'server identity';
    let proofs: unknown;
    try {
      proofs = (await request(`${base}${PROOF_PATH}?nonce=${nonce}`)).json?.proofs;
    } catch (e) {
      proofs = fetchFailure(e);
    }
    const got = Array.isArray(proofs) ? proofs : [];
    const port = receivingPort(base, this.config.port);
    const missing = secrets.filter((s) => !got.includes(proofOf(s, nonce, port)));
    if (missing.length === 0) {
      this.add('pass', name, `${base} proved it knows the configured secret(s) without receiving them`);
      return true;
    }
    this.add(
      'FAIL',
      name,
      `${base} could not prove it knows the configured token or password, so none was sent: another program may be listening on port ${port}, or this server runs with other credentials`,
      `check what listens there (ss -ltnp), and run doctor with the same SERVICE_AUTH_TOKEN / SERVICE_OAUTH_PASSWORD and --port as the server`,
    );
    return false;
  }

  /** Runs every check in order; tools/list uses the configured token, else the OAuth sign-in's. */
  async run(publicUrl: string | undefined): Promise<void> {
    const found = await this.endpoints(publicUrl);
    if (!found) return;
    const { base, card } = found;
    const pinnedCheck = publicUrl !== undefined;
    const oauth = card.json.auth?.type === 'oauth2';
    this.checkCard(card, base, oauth, pinnedCheck);
    if (oauth) await this.metadata(base, pinnedCheck);
    else this.add('skip', 'OAuth metadata', `the server is in ${String(card.json.auth?.type)} mode`);
    await this.challenge(base, oauth);
    const secrets = [this.bearer.token, oauth ? this.config.oauthPassword : undefined];
    if (
      !(await this.proven(
        base,
        secrets.filter((x): x is string => x !== undefined),
      ))
    )
      return;
    const fromFlow = oauth ? await this.signIn(base) : undefined;
    const configured = this.bearer.token;
    const token = configured ?? fromFlow;
    if (!token) {
      this.add(
        'skip',
        'authenticated tools/list',
        "set SERVICE_AUTH_TOKEN (or SERVICE_AUTH_TOKEN_FILE) to the server's token, or give the server's --workspace so its kept token is used",
      );
      return;
    }
    const source = configured ? this.bearer.source : 'the OAuth sign-in';
    await this.tools(base, 'handshake', token, source);
    await this.tools(base, 'modern', token, source);
  }
}

/**
 * The port the server at `base` receives doctor's requests on, which its proof is bound to (http/proof.ts): a
 * loopback URL's own port (`doctor http://127.0.0.1:PORT/mcp` reaches the server directly), else the server's
 * --port, where a tunnel or proxy in front delivers them.
 */
export function receivingPort(base: string, serverPort: number): number {
  const u = new URL(base);
  if (!isLoopbackHostname(u.hostname.replace(/^\[|\]$/g, ''))) return serverPort;
  return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

function origin(u: string): string {
  try {
    return new URL(u).origin;
  } catch {
    return u;
  }
}

function isSameServer(a: Reply, b: Reply): boolean {
  return a.json?.server?.version === b.json?.server?.version && a.json?.tools?.count === b.json?.tools?.count;
}

/** The origin of a `https://host/mcp` argument, or an error. */
function publicOrigin(raw: string): string | { error: string } {
  try {
    return new URL(raw).origin;
  } catch {
    return { error: `${raw} is not a URL; give the public one, e.g. https://<host>/mcp` };
  }
}

export async function runDoctor(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
  io: { out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const url = argv.find((a) => /^https?:\/\//i.test(a));
  let config: Config;
  try {
    const action = argv.includes('--help')
      ? undefined
      : load(
          argv.filter((a) => a !== url),
          env,
          cwd,
        );
    if (action?.kind !== 'serve') {
      io.out(DOCTOR_USAGE);
      return 0;
    }
    config = action.config;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    io.err(`workbench-mcp doctor: ${e.message}\n`);
    return 2;
  }
  const pub = url === undefined ? undefined : publicOrigin(url);
  if (typeof pub === 'object') {
    io.err(`workbench-mcp doctor: ${pub.error}\n`);
    return 2;
  }
  io.out(`workbench-mcp doctor${pub ? ` ${pub}/mcp` : ''}\n`);
  const d = new Doctor(config, io.out);
  await d.run(pub);
  const failed = d.lines.filter((l) => l.status === 'FAIL').length;
  io.out(failed === 0 ? 'All checks passed.\n' : `${failed} check(s) failed.\n`);
  return failed === 0 ? 0 : 1;
}
