// The requests `workbench-mcp doctor` makes, as a client would make them: GETs of the public documents,
// tools/list in both protocol eras, and the whole OAuth sign-in (dynamic registration → authorization page →
// password → code → token) for a headless client. Every request has a ceiling and never follows redirects.
import { createHash } from 'node:crypto';
import { SERVER_VERSION } from '../core/version.js';
import {
  DEFAULT_HANDSHAKE_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  MODERN_VERSIONS,
} from '../core/versions.js';
import { randomBase64url, randomHex } from '../core/random.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /* eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON of any shape */
  json: any;
}

const CEILING_MS = 30_000;

export async function request(url: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(CEILING_MS), ...init });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export type Era = 'handshake' | 'modern';

function postRpc(mcpUrl: string, body: unknown, headers: Record<string, string>, token?: string) {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  return request(mcpUrl, { method: 'POST', headers: h, body: JSON.stringify(body) });
}

/** tools/list without credentials (the 401 check). */
export function unauthenticated(mcpUrl: string): Promise<Reply> {
  return postRpc(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, {});
}

/** tools/list as a client of that era sends it: after initialize (handshake), or with `_meta` (2026-07-28). */
export async function toolsList(mcpUrl: string, era: Era, token: string): Promise<Reply> {
  if (era === 'modern') {
    const version = MODERN_VERSIONS[0] as string;
    const meta = { [META_PROTOCOL_VERSION]: version, [META_CLIENT_CAPABILITIES]: {} };
    return postRpc(
      mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } },
      { 'mcp-protocol-version': version, 'mcp-method': 'tools/list' },
      token,
    );
  }
  const init = await postRpc(
    mcpUrl,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: DEFAULT_HANDSHAKE_VERSION,
        capabilities: {},
        clientInfo: { name: 'workbench-mcp-doctor', version: SERVER_VERSION },
      },
    },
    {},
    token,
  );
  if (init.status !== 200 || !init.json?.result) return init;
  const version = String(init.json.result.protocolVersion ?? DEFAULT_HANDSHAKE_VERSION);
  const h = { 'mcp-protocol-version': version };
  await postRpc(mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, h, token);
  return postRpc(mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, h, token);
}

export type FlowResult = { ok: true; accessToken: string } | { ok: false; step: string; detail: string };

const REDIRECT_URI = 'http://127.0.0.1:9/callback';

type Failed = { ok: false; step: string; detail: string };
const failed = (step: string, detail: string): Failed => ({ ok: false, step, detail });

/** Dynamic registration of a public client (RFC 7591), as a headless client would send it. */
async function registerClient(endpoint: string): Promise<string | Failed> {
  const reg = await request(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'workbench-mcp doctor',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    }),
  });
  const clientId = reg.json?.client_id as string | undefined;
  if (reg.status !== 201 || !clientId)
    return failed('registration', `HTTP ${reg.status} ${reg.text.slice(0, 200)}`);
  return clientId;
}

/** The authorization page, then the password form; returns the code from the redirect back. */
async function authorize(authUrl: URL, password: string): Promise<string | Failed> {
  const page = await request(authUrl.href);
  const handle = /name="request" value="([^"]+)"/.exec(page.text)?.[1];
  if (page.status !== 200 || !handle) return failed('authorization page', `HTTP ${page.status}`);
  const form = await request(authUrl.origin + authUrl.pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request: handle, password, action: 'approve' }).toString(),
  });
  const location = form.headers.get('location');
  const code = location ? new URL(location).searchParams.get('code') : null;
  if (form.status !== 302 || !code)
    return failed('password', form.status === 401 ? 'the password was refused' : `HTTP ${form.status}`);
  return code;
}

/** The full OAuth sign-in of a public client, read from the server's own metadata at `base`. */
export async function oauthFlow(base: string, password: string): Promise<FlowResult> {
  const as = await request(`${base}/.well-known/oauth-authorization-server`);
  const meta = as.json as Record<string, string> | undefined;
  if (as.status !== 200 || !meta?.registration_endpoint) return failed('metadata', `HTTP ${as.status}`);
  const clientId = await registerClient(meta.registration_endpoint);
  if (typeof clientId !== 'string') return clientId;
  const verifier = randomBase64url(32);
  const resource = `${base}/mcp`;
  const authUrl = new URL(meta.authorization_endpoint ?? `${base}/oauth/authorize`);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomHex(8),
    resource,
  };
  for (const [k, v] of Object.entries(params)) authUrl.searchParams.set(k, v);
  const code = await authorize(authUrl, password);
  if (typeof code !== 'string') return code;
  const tok = await request(meta.token_endpoint ?? `${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    }).toString(),
  });
  const accessToken = tok.json?.access_token as string | undefined;
  if (tok.status !== 200 || !accessToken)
    return failed('token', `HTTP ${tok.status} ${tok.text.slice(0, 200)}`);
  return { ok: true, accessToken };
}
