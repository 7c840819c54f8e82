// An OAuthClientProvider for the official SDK clients (v1 and v2 share the shape) that plays the operator's
// browser without a browser: redirectToAuthorization fetches the authorization page, submits the password
// form and keeps the 302's Location (docs/oauth.md#tested-with). Everything is kept in memory.
import { randomBytes } from 'node:crypto';
import { PASSWORD } from './oauth-helpers.js';

type FetchFn = (url: string | URL, init?: RequestInit) => Promise<Response>;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export class BrowserlessProvider {
  clientInfo: Json | undefined;
  savedTokens: Json | undefined;
  private verifier = '';
  /** The callback URL the server redirected the "browser" to, with code, state and iss. */
  callback: URL | undefined;
  pageHtml = '';
  lastState = '';

  constructor(
    private readonly name: string,
    private readonly opts: { redirect?: string; password?: string; fetch?: FetchFn } = {},
  ) {}

  get redirectUrl(): string {
    return this.opts.redirect ?? 'http://127.0.0.1:9/callback';
  }

  get clientMetadata(): Json {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.lastState = randomBytes(12).toString('base64url');
    return this.lastState;
  }

  clientInformation(): Json | undefined {
    return this.clientInfo;
  }
  saveClientInformation(info: Json): void {
    this.clientInfo = info;
  }
  tokens(): Json | undefined {
    return this.savedTokens;
  }
  saveTokens(tokens: Json): void {
    this.savedTokens = tokens;
  }
  private discovery: Json | undefined;
  saveDiscoveryState(state: Json): void {
    this.discovery = state;
  }
  discoveryState(): Json | undefined {
    return this.discovery;
  }
  saveCodeVerifier(v: string): void {
    this.verifier = v;
  }
  codeVerifier(): string {
    return this.verifier;
  }

  /** Make the stored access token invalid (keeping the refresh token), as if it had expired. */
  corruptAccessToken(): void {
    if (this.savedTokens) this.savedTokens = { ...this.savedTokens, access_token: 'expired.or.bad' };
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const f = this.opts.fetch ?? fetch;
    const page = await f(url, { redirect: 'manual' });
    this.pageHtml = await page.text();
    if (page.status !== 200)
      throw new Error(
        `authorization page: ${page.status} ${page.headers.get('location') ?? this.pageHtml.slice(0, 300)}`,
      );
    const handle = /name="request" value="([^"]+)"/.exec(this.pageHtml)?.[1];
    if (!handle) throw new Error('no form handle on the authorization page');
    const post = await f(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        request: handle,
        password: this.opts.password ?? PASSWORD,
        action: 'approve',
      }).toString(),
    });
    await post.text();
    const location = post.headers.get('location');
    if (post.status !== 302 || !location) throw new Error(`password form: ${post.status}`);
    this.callback = new URL(location);
  }
}
