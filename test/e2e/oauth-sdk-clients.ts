// The official SDK clients signing in with the BrowserlessProvider (oauth-provider.ts), written once for every
// e2e test that needs them: the first connection fails with the SDK's UnauthorizedError after it discovered
// the server, registered and sent the "browser" through the password page; the code from the callback is then
// redeemed on a fresh transport, which holds the tokens. v1 is @modelcontextprotocol/sdk (handshake era), v2
// is @modelcontextprotocol/client pinned to 2026-07-28.
import { expect } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  UnauthorizedError as UnauthorizedV1,
  type OAuthClientProvider as OAuthClientProviderV1,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
  UnauthorizedError as UnauthorizedV2,
  type OAuthClientProvider as OAuthClientProviderV2,
} from '@modelcontextprotocol/client';
import type { BrowserlessProvider } from './oauth-provider.js';

export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface SignedIn<T> {
  /** A transport holding the tokens. */
  transport: T;
  /** Where the password page sent the "browser": code, state and iss. */
  callback: URL;
}

/** A v1 client (its name is what the server's logs show). */
export function clientV1(name = 'oauth-v1'): ClientV1 {
  return new ClientV1({ name, version: '1.0.0' });
}

/** A v1 transport to `url` signing in through `provider` (and `fetch`, e.g. one that trusts a test CA). */
export function transportV1(url: URL, provider: BrowserlessProvider, fetch?: FetchFn): HttpV1 {
  const authProvider = provider as unknown as OAuthClientProviderV1;
  return new HttpV1(url, fetch ? { authProvider, fetch } : { authProvider });
}

export async function signInV1(
  url: URL,
  provider: BrowserlessProvider,
  fetch?: FetchFn,
): Promise<SignedIn<HttpV1>> {
  await expect(clientV1().connect(transportV1(url, provider, fetch))).rejects.toBeInstanceOf(UnauthorizedV1);
  const callback = provider.callback as URL;
  const transport = transportV1(url, provider, fetch);
  await transport.finishAuth(callback.searchParams.get('code') as string);
  return { transport, callback };
}

export function transportV2(url: URL, provider: BrowserlessProvider, fetch?: FetchFn): HttpV2 {
  const authProvider = provider as unknown as OAuthClientProviderV2;
  return new HttpV2(url, fetch ? { authProvider, fetch } : { authProvider });
}

/** A v2 client pinned to 2026-07-28 connects through `transport`, lists the tools and closes. */
export async function listToolsV2(transport: HttpV2, name = 'oauth-v2') {
  const client = new ClientV2(
    { name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  const r = await client.listTools();
  await client.close();
  return r;
}

/** v2 hands finishAuth the whole callback query: the SDK checks iss against the issuer it discovered
 *  (RFC 9207) before redeeming the code. */
export async function signInV2(
  url: URL,
  provider: BrowserlessProvider,
  fetch?: FetchFn,
): Promise<SignedIn<HttpV2>> {
  await expect(listToolsV2(transportV2(url, provider, fetch))).rejects.toBeInstanceOf(UnauthorizedV2);
  const callback = provider.callback as URL;
  const transport = transportV2(url, provider, fetch);
  await transport.finishAuth(callback.searchParams);
  return { transport, callback };
}
