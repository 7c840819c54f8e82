// Shared helpers for the OAuth tests: an in-process server in oauth mode (real node:http stack on 127.0.0.1,
// config read exactly as the CLI reads it, injected clock), PKCE pairs, and the three legs of the flow as a
// browser and a client would drive them over real HTTP: register, the password page, the token endpoint.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Clock } from '../../src/core/clock.js';
import type { HttpDeps } from '../../src/http/server.js';
import type { RandomSource } from '../../src/oauth/secrets.js';
import type { OAuthServer } from '../../src/oauth/server.js';
import { startInProcess, startServer, type InProcessServer, type SpawnedServer } from '../helpers/server.js';

export const PASSWORD = 'correct horse battery staple';
export const CALLBACK = 'http://127.0.0.1:9/callback';

export interface OAuthTestServer extends InProcessServer {
  oauth: OAuthServer;
}

/** The server's modules that startOAuthServer builds with, imported on its first call (the tests that start only
 *  the bin do not evaluate src/, as test/helpers/server.ts explains). */
async function oauthModules() {
  const [{ load }, { baseUrl }, { oauthSetupFromConfig }, { systemRandom }, { createOAuthServer }] =
    await Promise.all([
      import('../../src/config/load.js'),
      import('../../src/http/base-url.js'),
      import('../../src/oauth/from-config.js'),
      import('../../src/oauth/secrets.js'),
      import('../../src/oauth/server.js'),
    ]);
  return { load, baseUrl, oauthSetupFromConfig, systemRandom, createOAuthServer };
}

/** The real HTTP stack in oauth mode. `env` holds SERVICE_* settings as a user would set them. */
export async function startOAuthServer(opts: {
  workspace: string;
  env?: Record<string, string>;
  clock?: Clock;
  random?: RandomSource;
  maxDynamicClients?: number;
  /** Client ID Metadata Document fetching: loopback allowed, an extra trusted CA (oauth-cimd tests). */
  cimd?: { allowLoopback?: boolean; ca?: string };
  /** Connection and request caps and timeouts of the HTTP front (pressure tests). */
  limits?: HttpDeps['limits'];
  /** Override of the per-attempt delay of a wrong password. */
  passwordDelayMs?: number;
}): Promise<OAuthTestServer> {
  const env: Record<string, string> = {
    SERVICE_AUTH_MODE: 'oauth',
    SERVICE_OAUTH_PASSWORD: PASSWORD,
    SERVICE_AUTH_TOKEN: '',
    ...opts.env,
  };
  const { load, baseUrl, oauthSetupFromConfig, systemRandom, createOAuthServer } = await oauthModules();
  const action = load(['--workspace', opts.workspace], env, opts.workspace);
  if (action.kind !== 'serve') throw new Error('unexpected action');
  const config = action.config;
  const setup = oauthSetupFromConfig(config, {
    clock: opts.clock ?? { now: Date.now, monotonic: () => performance.now() },
    random: opts.random ?? systemRandom,
    baseUrl: (req) => baseUrl(req, config),
  });
  if (!setup.ok) throw new Error(setup.message);
  const oauth = createOAuthServer({
    ...setup.options,
    ...(opts.clock ? { clock: opts.clock } : {}),
    maxDynamicClients: opts.maxDynamicClients,
    ...(opts.cimd ? { cimd: opts.cimd } : {}),
    ...(opts.passwordDelayMs !== undefined ? { passwordDelayMs: opts.passwordDelayMs } : {}),
  });
  const server = await startInProcess({
    workspace: opts.workspace,
    env,
    clock: opts.clock,
    authenticator: oauth.authenticator,
    extraRoutes: oauth.routes,
    limits: opts.limits,
  });
  return { ...server, oauth };
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface JsonReply {
  status: number;
  headers: Headers;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

async function reply(res: Response): Promise<JsonReply> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

export async function register(
  base: string,
  meta: unknown,
  headers: Record<string, string> = {},
): Promise<JsonReply> {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof meta === 'string' ? meta : JSON.stringify(meta),
  });
  return reply(res);
}

/** Registers a public client with one redirect URI and returns its client_id. */
export async function registerPublic(
  base: string,
  redirectUri = CALLBACK,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await register(base, { redirect_uris: [redirectUri], client_name: 'Test Client', ...extra });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${r.text}`);
  return r.json.client_id as string;
}

export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const u = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.href;
}

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  /** The hidden CSRF handle of the form, when the page has one. */
  handle?: string;
  location?: string;
}

/** The authorization page as a test reads it: status, headers, HTML and the form's request handle. */
async function toPage(res: Response): Promise<Page> {
  const html = await res.text();
  const handle = /name="request" value="([^"]+)"/.exec(html)?.[1];
  return {
    status: res.status,
    headers: res.headers,
    html,
    handle,
    location: res.headers.get('location') ?? undefined,
  };
}

export async function getPage(url: string): Promise<Page> {
  return toPage(await fetch(url, { redirect: 'manual' }));
}

export async function submitForm(
  base: string,
  fields: Record<string, string>,
  pageUrl = `${base}/oauth/authorize`,
): Promise<Page> {
  const res = await fetch(pageUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return toPage(res);
}

export interface AuthorizeOptions {
  clientId: string;
  redirectUri?: string;
  challenge: string;
  state?: string;
  resource?: string;
  scope?: string;
  password?: string;
}

/** Opens the page, submits the password, returns the parameters of the 302 back to the client. */
export async function authorize(base: string, o: AuthorizeOptions): Promise<URLSearchParams> {
  const page = await getPage(
    authorizeUrl(base, {
      response_type: 'code',
      client_id: o.clientId,
      redirect_uri: o.redirectUri ?? CALLBACK,
      code_challenge: o.challenge,
      code_challenge_method: 'S256',
      state: o.state,
      resource: o.resource,
      scope: o.scope,
    }),
  );
  if (page.status !== 200 || !page.handle)
    throw new Error(`authorization page failed: ${page.status} ${page.location ?? page.html.slice(0, 400)}`);
  const done = await submitForm(base, {
    request: page.handle,
    password: o.password ?? PASSWORD,
    action: 'approve',
  });
  if (done.status !== 302 || !done.location) throw new Error(`password submission failed: ${done.status}`);
  return new URL(done.location).searchParams;
}

export async function token(
  base: string,
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<JsonReply> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) body.append(k, v);
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: body.toString(),
  });
  return reply(res);
}

/** The whole flow for a public client: register → page → password → code → tokens. */
export async function fullFlow(
  base: string,
  opts: { redirectUri?: string; resource?: string } = {},
): Promise<{ clientId: string; access: string; refresh?: string; json: JsonReply['json'] }> {
  const redirectUri = opts.redirectUri ?? CALLBACK;
  const clientId = await registerPublic(base, redirectUri);
  const p = pkce();
  const cb = await authorize(base, {
    clientId,
    redirectUri,
    challenge: p.challenge,
    state: 's1',
    resource: opts.resource ?? `${base}/mcp`,
  });
  const r = await token(base, {
    grant_type: 'authorization_code',
    code: cb.get('code') ?? '',
    redirect_uri: redirectUri,
    client_id: clientId,
    code_verifier: p.verifier,
    resource: opts.resource ?? `${base}/mcp`,
  });
  if (r.status !== 200) throw new Error(`token exchange failed: ${r.status} ${r.text}`);
  return { clientId, access: r.json.access_token, refresh: r.json.refresh_token, json: r.json };
}

/** A handshake-era tools/list with a bearer token; returns the HTTP status and parsed body. */
export async function toolsList(
  mcpUrl: string,
  bearerToken: string | undefined,
  extra: Record<string, string> = {},
): Promise<JsonReply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  };
  if (bearerToken !== undefined) headers.authorization = `Bearer ${bearerToken}`;
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  return reply(res);
}

/** A request through node:http, which (unlike fetch) lets a test set the Host header. */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<JsonReply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers, json, text });
      });
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * The built bin in oauth mode with the test password and no static token (real process, real HTTP), plus
 * `env` (a CA to trust, proxy headers, the test-only loopback metadata documents).
 */
export function startOAuthBin(workspace: string, env: Record<string, string> = {}): Promise<SpawnedServer> {
  return startServer({
    workspace,
    env: {
      HOME: '/nonexistent-home',
      SERVICE_AUTH_MODE: 'oauth',
      SERVICE_OAUTH_PASSWORD: PASSWORD,
      SERVICE_AUTH_TOKEN: '',
      ...env,
    },
  });
}

/**
 * Runs a client's command to its end (a ceiling only ends a hung run): its exit code and stdout and stderr
 * together. `stdin: 'pipe'` keeps its stdin open until it exits (a stdio bridge ends when its stdin does).
 */
export function runToEnd(
  cmd: string,
  args: string[],
  o: { cwd?: string; env: Record<string, string>; ceilingMs?: number; stdin?: 'ignore' | 'pipe' },
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: [o.stdin ?? 'ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    const ceiling = setTimeout(() => child.kill('SIGKILL'), o.ceilingMs ?? 150_000);
    child.on('exit', (code) => {
      clearTimeout(ceiling);
      child.stdin?.destroy();
      resolve({ code, out });
    });
  });
}
