// Writing responses: JSON with no-store, CORS headers for allowed origins, never Mcp-Session-Id.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAllowedOrigin } from '../core/hosts.js';

export const CORS_ALLOW_HEADERS =
  'Authorization, Content-Type, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID';

export function corsHeaders(req: IncomingMessage, allowed: readonly string[]): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin || !isAllowedOrigin(origin, allowed)) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    Vary: 'Origin',
    'Access-Control-Expose-Headers': 'WWW-Authenticate',
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string | Buffer | null,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const h: Record<string, string | number> = { 'Cache-Control': 'no-store', ...headers };
  if (body === null) {
    h['Content-Length'] = 0;
    res.writeHead(status, h);
    res.end();
    return;
  }
  h['Content-Type'] = 'application/json';
  // Encode once: Buffer.byteLength and a string write would each walk a large body.
  const bytes = typeof body === 'string' && body.length > 4096 ? Buffer.from(body) : body;
  h['Content-Length'] = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  res.writeHead(status, h);
  res.end(bytes);
}

/** A JSON-RPC error body for transport-level rejections (id unknown = null). */
export function rpcError(code: number, message: string, data?: unknown): string {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return JSON.stringify({ jsonrpc: '2.0', id: null, error });
}
