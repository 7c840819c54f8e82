// One request to the server's own endpoint during the warm-up (cli/warm-up.ts), as a client's first would be:
// the HTTP path (the request and response objects, the route, the credential check, the body, the JSON-RPC
// dispatch, the answer's write) runs once before any client's first request, which otherwise pays for it
// (docs/benchmarks.md). A `tools/list` in the stateless era with the server's own bearer token (none in
// noauth), over loopback; it counts in the metrics as one tools/list. Under OAuth without a static token it
// fetches the server card instead, since a refused credential would be logged and counted as a refusal.
// Failure is ignored (logged at debug).
import http from 'node:http';
import { CARD_PATHS } from '../http/server-card.js';

/** The server's own endpoint and the credential its console uses (cli/serve.ts). */
export interface SelfEndpoint {
  /** `http://<host>:<port>/mcp`, as the listening banner says. */
  url: string;
  credential: () => string | undefined;
  oauth: boolean;
}

const MODERN = '2026-07-28';
const CEILING_MS = 5_000;

/** Answers the response's status, or the error that stopped the request. */
export function warmHttp(self: SelfEndpoint): Promise<number | string> {
  const token = self.credential();
  if (self.oauth && !token) return request(new URL(CARD_PATHS[0] as string, self.url), 'GET');
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'tools/list',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/list',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  return request(new URL(self.url), 'POST', headers, body);
}

function request(
  url: URL,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers, agent: false, timeout: CEILING_MS }, (res) => {
      res.resume();
      const done = () => resolve(res.statusCode ?? 0);
      res.once('end', done).once('error', done);
    });
    req.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.end(body);
  });
}
