// Dynamic registration as the clients people use send it (docs/design-notes.md#registration-leniency; RFC
// 7591 §2–3): one realistic registration body per client, each registered over real HTTP and then taken
// through the whole flow — the password page at the redirect URI the client really uses, the code, the token
// exchange with the method it registered — and a tools/list with the token. Then the metadata rules the table
// relies on: null members are absent, an empty scope is no scope, unknown members are ignored, and a loopback
// redirect URI registered without a port accepts any port (RFC 8252 §7.3) while everything else is exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import {
  authorize,
  authorizeUrl,
  getPage,
  pkce,
  register,
  startOAuthServer,
  token,
  toolsList,
  type OAuthTestServer,
} from '../e2e/oauth-helpers.js';

let ws: TempWorkspace;
let srv: OAuthTestServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  srv = await startOAuthServer({ workspace: ws.dir });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

interface ClientCase {
  name: string;
  body: Record<string, unknown>;
  /** The redirect URI the client uses at /oauth/authorize (a port chosen at run time for portless ones). */
  uses: string;
}

const CLIENTS: ClientCase[] = [
  {
    // claude.ai / Claude Desktop connectors (Anthropic's backend): anthropics/claude-ai-mcp issues #1043, #560
    // ("token_endpoint_auth_method": "client_secret_post", python-httpx) and the widely logged body with
    // client_name/scope "claudeai".
    name: 'claude.ai',
    body: {
      client_name: 'claudeai',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'claudeai',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
    },
    uses: 'https://claude.ai/api/mcp/auth_callback',
  },
  {
    // ChatGPT connectors: OpenAI Apps SDK "Authentication" (developers.openai.com/apps-sdk/build/auth) — the
    // stable callback https://chatgpt.com/connector_platform_oauth_redirect (needs RFC 9207 iss).
    name: 'ChatGPT (stable callback)',
    body: {
      client_name: 'ChatGPT',
      redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      application_type: 'web',
    },
    uses: 'https://chatgpt.com/connector_platform_oauth_redirect',
  },
  {
    // ChatGPT, older connections: the per-connection callback https://chatgpt.com/connector/oauth/{callback_id},
    // no auth method (→ none), a scope list.
    name: 'ChatGPT (callback-id)',
    body: {
      client_name: 'ChatGPT',
      redirect_uris: ['https://chatgpt.com/connector/oauth/cb_5f2a9c'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid offline_access',
    },
    uses: 'https://chatgpt.com/connector/oauth/cb_5f2a9c',
  },
  {
    // Claude Code 2.1.330 when DCR is used (get clientMetadata in the @anthropic-ai/claude-code binary).
    name: 'Claude Code',
    body: {
      client_name: 'Claude Code (workbench)',
      redirect_uris: ['http://localhost:49152/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    uses: 'http://localhost:49152/callback',
  },
  {
    // Codex (codex-rs uses the rmcp SDK's register_client: name, one loopback redirect, both grants, none).
    name: 'Codex',
    body: {
      client_name: 'Codex',
      redirect_uris: ['http://127.0.0.1:41231/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      response_types: ['code'],
    },
    uses: 'http://127.0.0.1:41231/callback',
  },
  {
    // Cursor: the private-use scheme callback cursor://anysphere.cursor-mcp/oauth/callback (Cursor docs and
    // server allow-lists that name it, e.g. Box MCP setup).
    name: 'Cursor',
    body: {
      client_name: 'Cursor',
      redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    uses: 'cursor://anysphere.cursor-mcp/oauth/callback',
  },
  {
    // VS Code: fetchDynamicRegistration in microsoft/vscode src/vs/base/common/oauth.ts — four redirect URIs,
    // among them a portless loopback one, grant types filtered by ours, application_type native.
    name: 'VS Code',
    body: {
      client_name: 'Visual Studio Code',
      client_uri: 'https://code.visualstudio.com',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [
        'https://insiders.vscode.dev/redirect',
        'https://vscode.dev/redirect',
        'http://127.0.0.1/',
        'http://127.0.0.1:33418/',
      ],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    },
    uses: 'http://127.0.0.1:53011/', // 33418 taken: any port of the portless one (RFC 8252 §7.3)
  },
  {
    // Gemini CLI 0.61.0 (@google/gemini-cli bundle, MCPOAuthProvider.registerClient): `scope: ""` when the
    // server advertises no scopes — refused with 400 before docs/design-notes.md#registration-leniency.
    name: 'Gemini CLI',
    body: {
      client_name: 'Gemini CLI MCP Client',
      redirect_uris: ['http://localhost:7777/oauth/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: '',
    },
    uses: 'http://localhost:7777/oauth/callback',
  },
  {
    // mcp-remote 0.15.1 (dist: get clientMetadata + resolveClientMetadata): software_id/version, native.
    name: 'mcp-remote',
    body: {
      redirect_uris: ['http://localhost:3334/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'MCP CLI Client',
      client_uri: 'https://github.com/modelcontextprotocol/mcp-cli',
      software_id: '2e6dc280-f3c3-4e01-99a7-8181dbd1d23d',
      software_version: '0.15.1',
      application_type: 'native',
    },
    uses: 'http://localhost:3334/oauth/callback',
  },
  {
    // MCP Inspector 2.12.0 (clients/cli/build/index.js get clientMetadata): `scope: ""`, native.
    name: 'MCP Inspector 2.12',
    body: {
      redirect_uris: ['http://127.0.0.1:6276/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'MCP Inspector',
      client_uri: 'https://github.com/modelcontextprotocol/inspector',
      scope: '',
      application_type: 'native',
    },
    uses: 'http://127.0.0.1:6276/oauth/callback',
  },
];

describe('registrations of real clients (RFC 7591 §3; docs/design-notes.md#registration-leniency)', () => {
  it.each(CLIENTS.map((c) => [c.name, c] as const))(
    '%s: registers (201), authorizes at the redirect URI it uses, exchanges the code, lists tools',
    async (_name, c) => {
      const r = await register(srv.base, c.body);
      expect(r.status, r.text).toBe(201);
      const method = (c.body.token_endpoint_auth_method as string | undefined) ?? 'none';
      expect(r.json.token_endpoint_auth_method).toBe(method);
      expect(r.json.redirect_uris).toEqual(c.body.redirect_uris);
      if (c.body.scope) expect(r.json.scope).toBe(c.body.scope);
      else expect(r.json.scope).toBeUndefined(); // "" is no scope
      const p = pkce();
      const resource = `${srv.base}/mcp`;
      const cb = await authorize(srv.base, {
        clientId: r.json.client_id,
        redirectUri: c.uses,
        challenge: p.challenge,
        state: 'st',
        resource,
      });
      expect(cb.get('state')).toBe('st');
      expect(cb.get('iss')).toBe(srv.base);
      const secret = method === 'client_secret_post' ? { client_secret: r.json.client_secret } : {};
      const t = await token(srv.base, {
        grant_type: 'authorization_code',
        code: cb.get('code') ?? '',
        redirect_uri: c.uses,
        client_id: r.json.client_id,
        code_verifier: p.verifier,
        resource,
        ...secret,
      });
      expect(t.status, t.text).toBe(200);
      const list = await toolsList(srv.url, t.json.access_token);
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.json)).toContain('read_file');
    },
  );
});

describe('metadata members (RFC 7591 §2; docs/design-notes.md#registration-leniency)', () => {
  it('null members are absent: a body of a typed client model with nulls registers', async () => {
    const r = await register(srv.base, {
      redirect_uris: ['http://127.0.0.1:8123/callback'],
      client_name: 'Typed Client',
      client_uri: null,
      logo_uri: null,
      tos_uri: null,
      policy_uri: null,
      scope: null,
      contacts: null,
      jwks_uri: null,
      jwks: null,
      software_id: null,
      software_version: null,
      token_endpoint_auth_method: null,
      grant_types: null,
      response_types: null,
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.token_endpoint_auth_method).toBe('none');
    expect(r.json.grant_types).toEqual(['authorization_code', 'refresh_token']);
    for (const k of ['client_uri', 'logo_uri', 'scope', 'contacts']) expect(r.json[k]).toBeUndefined();
  });

  it.each([
    ['""', ''],
    ['blanks', '   '],
  ])('an empty scope (%s) is no scope', async (_n, scope) => {
    const r = await register(srv.base, { redirect_uris: ['http://127.0.0.1:8124/cb'], scope });
    expect(r.status, r.text).toBe(201);
    expect(r.json.scope).toBeUndefined();
  });

  it('a scope with doubled spaces is normalised, and echoed', async () => {
    const r = await register(srv.base, { redirect_uris: ['http://127.0.0.1:8125/cb'], scope: ' mcp  read ' });
    expect(r.status, r.text).toBe(201);
    expect(r.json.scope).toBe('mcp read');
  });

  it('unknown members (a software statement, OIDC extras, vendor fields) are ignored, not echoed', async () => {
    const r = await register(srv.base, {
      redirect_uris: ['http://127.0.0.1:8126/cb'],
      software_statement: 'eyJhbGciOiJub25lIn0.eyJzb2Z0d2FyZV9pZCI6IngifQ.',
      require_auth_time: true,
      default_max_age: 3600,
      id_token_signed_response_alg: 'RS256',
      'x-vendor': { nested: [1, 2] },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.software_statement).toBeUndefined();
    expect(r.json['x-vendor']).toBeUndefined();
  });

  it('logo/tos/policy URIs and application_type are registered metadata and returned (RFC 7591 §3.2.1)', async () => {
    const body = {
      redirect_uris: ['https://app.example/cb'],
      logo_uri: 'https://app.example/logo.png',
      tos_uri: 'https://app.example/tos',
      policy_uri: 'https://app.example/privacy',
      application_type: 'web',
      contacts: ['ops@app.example'],
    };
    const r = await register(srv.base, body);
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject(body);
  });

  it('private_key_jwt is refused for a registration and the answer says where it is accepted', async () => {
    const r = await register(srv.base, {
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://app.example/jwks.json',
    });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_client_metadata');
    expect(r.json.error_description).toMatch(/Client ID Metadata Document/);
  });
});

describe('loopback redirect URIs and ports (RFC 8252 §7.3; RFC 9700 §2.1 exact matching otherwise)', () => {
  let clientId: string;
  const { challenge } = pkce();
  const page = (redirect: string, id = clientId) =>
    getPage(
      authorizeUrl(srv.base, {
        response_type: 'code',
        client_id: id,
        redirect_uri: redirect,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );

  beforeAll(async () => {
    const r = await register(srv.base, {
      redirect_uris: ['http://127.0.0.1/', 'http://localhost/callback', 'http://127.0.0.1:9000/fixed'],
    });
    clientId = r.json.client_id;
  });

  it.each([
    ['http://127.0.0.1:53011/', 200],
    ['http://127.0.0.1/', 200],
    ['http://localhost:8080/callback', 200],
    ['http://localhost:8080/callback?x=1', 400],
    ['http://localhost:8080/other', 400],
    ['http://127.0.0.1:53011/callback', 400], // path differs from http://127.0.0.1/
    ['http://[::1]:53011/', 400], // another loopback host is another URI
    ['http://127.0.0.1:9001/fixed', 400], // registered with a port: exact
    ['https://127.0.0.1:53011/', 400],
  ])('%s → %i', async (uri, status) => {
    const p = await page(uri);
    expect(p.status).toBe(status);
    if (status !== 200) expect(p.location).toBeUndefined();
  });

  it('a pre-registered client keeps exact matching (docs/design-notes.md#pre-registered-client-and-static-tokens)', async () => {
    const pre = await startOAuthServer({
      workspace: ws.dir,
      env: {
        SERVICE_OAUTH_CLIENT_ID: 'pre-client',
        SERVICE_OAUTH_REDIRECT_URIS: 'http://127.0.0.1/callback',
      },
    });
    try {
      const open = (uri: string) =>
        getPage(
          authorizeUrl(pre.base, {
            response_type: 'code',
            client_id: 'pre-client',
            redirect_uri: uri,
            code_challenge: challenge,
            code_challenge_method: 'S256',
          }),
        );
      expect((await open('http://127.0.0.1/callback')).status).toBe(200);
      expect((await open('http://127.0.0.1:5555/callback')).status).toBe(400);
    } finally {
      await pre.close();
    }
  });
});
