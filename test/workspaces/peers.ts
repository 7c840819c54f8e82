// The two SDK clients the several-workspaces suites drive at once (test/workspaces/workspaces-suite.ts,
// test/console/console-workspaces-suite.ts): v1 of the handshake era and v2 pinned to 2026-07-28, each behind
// one small call interface (structured content, first text, whether it is an error).
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { TEST_TOKEN } from '../helpers/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Sc = Record<string, any>;
export interface Peer {
  call(name: string, args: Record<string, unknown>): Promise<{ sc: Sc; text: string; isError: boolean }>;
  close(): Promise<void>;
}

const headers = { authorization: `Bearer ${TEST_TOKEN}` };

function wrap(client: { callTool(p: unknown): Promise<unknown>; close(): Promise<void> }): Peer {
  return {
    async call(name, args) {
      const r = (await client.callTool({ name, arguments: args })) as any;
      return { sc: r.structuredContent ?? {}, text: r.content?.[0]?.text ?? '', isError: r.isError === true };
    },
    close: () => client.close(),
  };
}

/** A connected v1 (handshake-era) SDK client named `name`. */
export async function v1Peer(url: string, name: string): Promise<Peer> {
  const client = new ClientV1({ name, version: '1.0.0' });
  await client.connect(new HttpV1(new URL(url), { requestInit: { headers } }));
  return wrap(client);
}

/** A connected v2 SDK client named `name`, pinned to the 2026-07-28 protocol. */
export async function v2Peer(url: string, name: string): Promise<Peer> {
  const client = new ClientV2(
    { name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new HttpV2(new URL(url), { requestInit: { headers } }));
  return wrap(client);
}
