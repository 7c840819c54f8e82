// Client ID Metadata Documents can be turned off by the operator (SERVICE_OAUTH_CLIENT_METADATA_DOCUMENTS=0):
// a server that cannot reach the clients' document hosts (claude.ai for Claude Code, …) then neither advertises
// nor accepts them, so clients fall back to dynamic registration instead of failing at sign-in.
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { authorizeUrl, getPage, pkce, startOAuthServer, type OAuthTestServer } from '../e2e/oauth-helpers.js';

let ws: TempWorkspace | undefined;
let server: OAuthTestServer | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
});

async function start(env: Record<string, string>): Promise<OAuthTestServer> {
  ws = makeWorkspace({ 'README.md': '# cimd off\n' });
  server = await startOAuthServer({ workspace: ws.dir, env });
  return server;
}

const metadata = async (s: OAuthTestServer) =>
  (await (await fetch(`${s.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;

describe('SERVICE_OAUTH_CLIENT_METADATA_DOCUMENTS (MCP 2025-11-25 "Client ID Metadata Documents")', () => {
  it('by default documents are advertised', async () => {
    const s = await start({});
    expect((await metadata(s)).client_id_metadata_document_supported).toBe(true);
  });

  it('=0: not advertised, and an https client_id is refused on a page that says why, nothing fetched', async () => {
    const s = await start({ SERVICE_OAUTH_CLIENT_METADATA_DOCUMENTS: '0' });
    expect((await metadata(s)).client_id_metadata_document_supported).toBe(false);
    const { challenge } = pkce();
    const page = await getPage(
      authorizeUrl(s.base, {
        response_type: 'code',
        client_id: 'https://client.example/oauth/metadata.json',
        redirect_uri: 'https://client.example/callback',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 's1',
      }),
    );
    expect(page.status).toBe(400);
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('does not accept client metadata documents');
    expect(page.html).toContain('SERVICE_OAUTH_CLIENT_METADATA_DOCUMENTS=0');
  });
});
