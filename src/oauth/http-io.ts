// Request plumbing shared by the OAuth endpoints: the body bound (8 KiB, read with http/body.ts; a larger
// body is refused without reading the rest), media-type tests, form parsing that reports repeated parameters
// (RFC 6749 §3.1, §3.2: "parameters MUST NOT be included more than once"), and CORS for the endpoints
// browsers call.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest body accepted by /oauth/register, /oauth/token and POST /oauth/authorize. */
export const OAUTH_MAX_BODY_BYTES = 8 * 1024;

/** The media type of Content-Type, lower-cased, without parameters. */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export interface Form {
  /** The single value of each parameter; a repeated parameter keeps its first value here. */
  get(name: string): string | undefined;
  /** Parameters sent more than once. */
  readonly repeated: readonly string[];
  readonly params: URLSearchParams;
}

export function parseForm(text: string): Form {
  const params = new URLSearchParams(text);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const k of params.keys()) {
    if (seen.has(k)) repeated.add(k);
    seen.add(k);
  }
  return {
    // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted."
    get: (name) => {
      const v = params.get(name);
      return v === null || v === '' ? undefined : v;
    },
    repeated: [...repeated],
    params,
  };
}

/** CORS for the metadata documents: public, readable from any origin (they hold nothing secret). */
export const PUBLIC_CORS: Readonly<Record<string, string>> = { 'Access-Control-Allow-Origin': '*' };

/** 204 preflight answer for an OAuth path. */
export function sendPreflight(res: ServerResponse, methods: string, cors: Record<string, string>): void {
  res.writeHead(204, {
    ...cors,
    'Access-Control-Allow-Methods': methods,
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, MCP-Protocol-Version',
    'Access-Control-Max-Age': '600',
    'Cache-Control': 'no-store',
    'Content-Length': 0,
  });
  res.end();
}
