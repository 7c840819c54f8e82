// Minimal raw JSON-RPC over fetch, for tests that check exact statuses and bodies. Real clients (the official
// SDKs) are used in test/e2e; this is for the wire-level rows of the spec's tables.
import { TEST_TOKEN } from './server.js';

export const MODERN = '2026-07-28';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  token: string | null = TEST_TOKEN,
): Promise<RawResponse> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  };
  if (token) h.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: h,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A 2026-07-28 request with the envelope and the mirror headers filled in. */
export function modern(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  extraHeaders: Record<string, string> = {},
) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const headers: Record<string, string> = {
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...extraHeaders,
  };
  if (method === 'tools/call' && typeof params.name === 'string' && !('mcp-name' in extraHeaders))
    headers['mcp-name'] = params.name;
  return post(url, { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }, headers);
}

export function handshake(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return post(url, { jsonrpc: '2.0', id, method, params }, headers);
}

/** tools/call in the handshake era; returns the CallToolResult. */
export async function callTool(url: string, name: string, args: Record<string, unknown> = {}) {
  const r = await handshake(url, 1, 'tools/call', { name, arguments: args });
  if (r.status !== 200 || !r.json?.result)
    throw new Error(`tools/call ${name} failed: ${r.status} ${r.text}`);
  return r.json.result as {
    content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
    structuredContent: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    isError: boolean;
  };
}
