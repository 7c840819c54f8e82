// Behind a local TLS reverse proxy (docs/oauth.md#tested-with): a Node https proxy with a throwaway
// self-signed certificate (openssl, temp dir) in front of the spawned bin, adding X-Forwarded-Proto/Host/For,
// with SERVICE_TRUST_PROXY_HEADERS=1 (docs/oauth.md#endpoints: the base URL rule). Every URL in the metadata,
// the challenge, the `iss` of the redirect and the tokens uses the public https origin, and the official SDK
// clients complete the flow through the proxy. The public name resolves to 127.0.0.1 only inside the test's
// own fetch (a custom lookup), which also trusts the throwaway CA.
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { rawRequest, startOAuthBin } from './oauth-helpers.js';
import { BrowserlessProvider } from './oauth-provider.js';
import { clientV1, listToolsV2, signInV1, signInV2 } from './oauth-sdk-clients.js';
import { selfSignedCert } from '../helpers/tls-cert.js';

const PUBLIC_HOST = 'mcp.workbench.test';

let dir: string;
let ws: TempWorkspace;
let server: SpawnedServer;
let proxy: https.Server;
let ca: Buffer;
let publicBase = '';

/** fetch over node:https that trusts the throwaway certificate and resolves PUBLIC_HOST to 127.0.0.1. */
function tlsFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init.headers).forEach((v, k) => headers.set(k, v));
  const body = init.body === undefined || init.body === null ? undefined : String(init.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        agent: false, // a connection per request: a kept-alive one the proxy closed (5 s) would be a reset
        method: init.method ?? (input instanceof Request ? input.method : 'GET'),
        headers: Object.fromEntries(headers.entries()),
        ca,
        servername: url.hostname,
        lookup: (_host, opts, cb) => {
          if ((opts as { all?: boolean }).all)
            (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
              { address: '127.0.0.1', family: 4 },
            ]);
          else cb(null, '127.0.0.1', 4);
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 502;
          const nullBody = [101, 204, 205, 304].includes(status);
          resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: h }));
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
    req.end(body);
  });
}

beforeAll(async () => {
  dir = selfSignedCert([PUBLIC_HOST]).dir;
  ca = readFileSync(path.join(dir, 'cert.pem'));
  ws = makeWorkspace({ 'README.md': '# demo\n' });
  server = await startOAuthBin(ws.dir, { SERVICE_TRUST_PROXY_HEADERS: '1' });
  const backend = new URL(server.base);
  // The reverse proxy: TLS in, plain HTTP to the loopback server, forwarding headers added (as nginx would).
  proxy = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: ca }, (req, res) => {
    const headers = {
      ...req.headers,
      host: backend.host,
      'x-forwarded-proto': 'https',
      'x-forwarded-host': req.headers.host ?? '',
      'x-forwarded-for': req.socket.remoteAddress ?? '',
    };
    const up = http.request(
      { host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  publicBase = `https://${PUBLIC_HOST}:${(proxy.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await server?.stop();
  ws?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('URLs through the TLS proxy (SERVICE_TRUST_PROXY_HEADERS=1)', () => {
  it('metadata, endpoints and the 401 challenge all name the public https origin', async () => {
    const as = (await (
      await tlsFetch(`${publicBase}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(as.issuer).toBe(publicBase);
    for (const k of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint'])
      expect(String(as[k])).toMatch(new RegExp(`^${publicBase}/oauth/`));
    for (const [p, suffix] of [
      ['/.well-known/oauth-protected-resource', ''],
      ['/.well-known/oauth-protected-resource/mcp', '/mcp'],
    ]) {
      const prm = (await (await tlsFetch(publicBase + p)).json()) as Record<string, unknown>;
      expect(prm.resource).toBe(`${publicBase}${suffix}`); // RFC 9728 §3.3
      expect(prm.authorization_servers).toEqual([publicBase]);
    }
    const challenge = await tlsFetch(`${publicBase}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${publicBase}/.well-known/oauth-protected-resource/mcp"`,
    );
    const card = (await (await tlsFetch(`${publicBase}/.well-known/mcp.json`)).json()) as {
      auth: Record<string, unknown>;
    };
    expect(card.auth.resource).toBe(`${publicBase}/mcp`);
  });

  it('RFC 7239 Forwarded is honoured too; without forwarding headers the loopback origin stays', async () => {
    const fwd = await rawRequest(`${server.base}/.well-known/oauth-authorization-server`, {
      headers: { forwarded: 'for=10.0.0.1;proto=https;host=tunnel.example.com' },
    });
    expect(fwd.json.issuer).toBe('https://tunnel.example.com');
    const direct = await rawRequest(`${server.base}/.well-known/oauth-authorization-server`);
    expect(direct.json.issuer).toBe(server.base);
  });
});

describe('the official SDK clients complete the flow through the proxy', () => {
  it('v1: discovery → registration → password → token (iss and aud on https) → tools/list', async () => {
    const provider = new BrowserlessProvider('tls v1 client', { fetch: tlsFetch });
    const url = new URL(`${publicBase}/mcp`);
    const { transport, callback: cb } = await signInV1(url, provider, tlsFetch);
    expect(cb.searchParams.get('iss')).toBe(publicBase);
    const claims = decodeJwt(provider.savedTokens?.access_token as string);
    expect(claims.iss).toBe(publicBase);
    expect(claims.aud).toBe(`${publicBase}/mcp`);
    const client = clientV1('tls-v1');
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_file');
    await client.close();
    // The same token sent to the loopback origin directly is for another audience.
    const direct = await rawRequest(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.savedTokens?.access_token}`,
        'content-type': 'application/json',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(direct.status).toBe(401);
  }, 180_000);

  it('v2 (pinned 2026-07-28): the same flow, with the SDK checking iss against the https issuer', async () => {
    const provider = new BrowserlessProvider('tls v2 client', { fetch: tlsFetch });
    const url = new URL(`${publicBase}/mcp`);
    const { transport } = await signInV2(url, provider, tlsFetch);
    expect((await listToolsV2(transport, 'tls-v2')).tools.map((t) => t.name)).toContain('read_file');
    expect(decodeJwt(provider.savedTokens?.access_token as string).aud).toBe(`${publicBase}/mcp`);
  }, 180_000);
});
