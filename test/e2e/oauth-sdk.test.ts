// Real clients end to end against the spawned bin in oauth mode (docs/oauth.md#endpoints: a
// client that knows only the /mcp URL discovers, registers, sends the operator to the password page, gets a
// token). The official SDK v1 client (handshake era) and v2 client (pinned 2026-07-28), each with an
// OAuthClientProvider whose redirectToAuthorization plays the operator's browser: it fetches the page,
// submits the password form and reads the code from the 302 (docs/oauth.md#tested-with).
// Then finishAuth(code), reconnect, tools/list; and a refresh through the SDK (docs/oauth.md#refresh-tokens).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { startOAuthBin } from './oauth-helpers.js';
import { BrowserlessProvider } from './oauth-provider.js';
import { clientV1, listToolsV2, signInV1, signInV2, transportV1, transportV2 } from './oauth-sdk-clients.js';

let ws: TempWorkspace;
let server: SpawnedServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'README.md': '# demo\n' });
  server = await startOAuthBin(ws.dir);
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

describe('SDK v1 client (@modelcontextprotocol/sdk, handshake era) with an OAuthClientProvider', () => {
  it('discovery → registration → password form → token → tools/list, then a refresh through the SDK', async () => {
    const provider = new BrowserlessProvider('sdk-v1 test client');
    const url = new URL(server.url);
    const { transport, callback: cb } = await signInV1(url, provider);
    // What the SDK did on its own: it found the metadata, registered, and sent the "browser" to the page.
    expect(provider.clientInfo?.client_id).toBeTruthy();
    expect(provider.pageHtml).toContain('sdk-v1 test client');
    expect(cb.searchParams.get('iss')).toBe(server.base);
    expect(cb.searchParams.get('state')).toBe(provider.lastState);
    expect(provider.savedTokens?.token_type).toMatch(/^bearer$/i);
    expect(provider.savedTokens?.refresh_token).toBeTruthy();

    const client = clientV1();
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('read_file');
    await client.close();

    // The access token goes bad; the SDK refreshes with the (rotating) refresh token and carries on.
    const oldRefresh = provider.savedTokens?.refresh_token;
    provider.corruptAccessToken();
    const again = clientV1();
    await again.connect(transportV1(url, provider));
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    expect(provider.savedTokens?.refresh_token).toBeTruthy();
    expect(provider.savedTokens?.refresh_token).not.toBe(oldRefresh);
    await again.close();
  });
});

describe('SDK v2 client (@modelcontextprotocol/client, pinned 2026-07-28) with an OAuthClientProvider', () => {
  it('discovery → registration → password form → token (iss checked by the SDK, RFC 9207) → tools/list', async () => {
    const provider = new BrowserlessProvider('sdk-v2 test client');
    const url = new URL(server.url);
    // Every /mcp POST the client makes, with its MCP-Protocol-Version header: proves the era under test.
    const mcpVersions: Array<string | null> = [];
    const recording = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const u = String(input instanceof Request ? input.url : input);
      if (u === server.url && init?.method === 'POST')
        mcpVersions.push(new Headers(init.headers).get('mcp-protocol-version'));
      return fetch(input, init);
    };
    const { transport, callback: cb } = await signInV2(url, provider, recording);
    expect(provider.pageHtml).toContain('sdk-v2 test client');
    expect(cb.searchParams.get('iss')).toBe(server.base);
    const { tools } = await listToolsV2(transport);
    expect(tools.map((t) => t.name)).toContain('read_file');

    const oldRefresh = provider.savedTokens?.refresh_token;
    provider.corruptAccessToken();
    const again = await listToolsV2(transportV2(url, provider, recording));
    expect(again.tools.length).toBeGreaterThan(0);
    expect(provider.savedTokens?.refresh_token).not.toBe(oldRefresh);
    expect(mcpVersions.length).toBeGreaterThan(0);
    expect(new Set(mcpVersions)).toEqual(new Set(['2026-07-28']));
  });
});
