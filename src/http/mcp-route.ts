// POST /mcp, in the contract's order: Origin → auth → media type → size → JSON → batch → era → headers →
// method (docs/http.md#order-of-checks). Each rejection is decided before any later
// work, so an unauthenticated caller never gets its body read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authenticate.js';
import { classify, type HeaderView } from '../protocol/classify.js';
import type { Dispatcher } from '../protocol/dispatch.js';
import { errorBody, INVALID_REQUEST } from '../protocol/errors.js';
import { parseMessage } from '../protocol/jsonrpc.js';
import type { ProtocolHost } from '../protocol/host.js';
import { baseUrl } from './base-url.js';
import { isAllowedOrigin } from '../core/hosts.js';
import { lingeringClose, readBody } from './body.js';
import type { ServerMetrics } from './metrics.js';
import { corsHeaders, rpcError, sendJson } from './respond.js';
import { noteRequest } from './request-log.js';

export interface McpRouteDeps {
  /** Where answered requests are counted (/metrics); absent in servers built without it. */
  metrics?: ServerMetrics;
  runtime: ProtocolHost;
  dispatcher: Dispatcher;
  authenticator: Authenticator;
}

function headerView(req: IncomingMessage): HeaderView {
  const distinct = req.headersDistinct;
  return (name) => distinct[name];
}

function toolName(params: unknown): string | undefined {
  const name = (params as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name.slice(0, 64) : undefined;
}

export async function handleMcpPost(
  req: IncomingMessage,
  res: ServerResponse,
  deps: McpRouteDeps,
): Promise<void> {
  const { config } = deps.runtime;
  const cors = corsHeaders(req, config.allowedOrigins);
  const reject = (status: number, body: string, extra: Record<string, string> = {}) =>
    sendJson(res, status, body, { ...cors, ...extra });

  // 1. Origin (DNS rebinding, browsers): present and not allowed → 403.
  const origin = req.headers.origin;
  if (origin !== undefined && !isAllowedOrigin(origin, config.allowedOrigins)) {
    return reject(
      403,
      rpcError(
        INVALID_REQUEST,
        `Forbidden: Origin ${origin} is not allowed; add it to SERVICE_ALLOWED_ORIGINS to let that page call this server`,
      ),
    );
  }
  // 2. Authentication.
  const auth = await deps.authenticator.authenticate(req, baseUrl(req, config));
  if (!auth.ok) {
    const body = JSON.stringify({ error: auth.error, error_description: auth.description });
    return reject(auth.status, body, auth.headers);
  }
  // 3. Media type, size, JSON, batch.
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    return reject(
      415,
      rpcError(INVALID_REQUEST, 'Unsupported Media Type: send Content-Type: application/json'),
    );
  }
  const body = await readBody(req, config.maxRequestBytes);
  if (!body.ok) {
    if (body.reason === 'too_large') {
      lingeringClose(req, res);
      reject(
        413,
        rpcError(INVALID_REQUEST, `Payload Too Large: the limit is ${config.maxRequestBytes} bytes`),
      );
    }
    return;
  }
  const parsed = parseMessage(body.text);
  if (!parsed.ok) return reject(parsed.error.status, errorBody(parsed.id, parsed.error));
  const msg = parsed.msg;
  if (msg.kind === 'response') return sendJson(res, 202, null, cors);
  noteRequest(req, {
    method: msg.method.slice(0, 64),
    tool: msg.method === 'tools/call' ? toolName(msg.params) : undefined,
  });
  // 4–6. Era, envelope and mirror headers.
  const cls = classify(msg, headerView(req));
  if (!cls.ok) return reject(cls.error.status, errorBody(msg.kind === 'request' ? msg.id : null, cls.error));
  // 7. The method.
  const started = performance.now();
  const reply = await deps.dispatcher.handle(msg, cls, auth.principal, deps.runtime.signal);
  if (msg.kind === 'request')
    deps.metrics?.request(
      cls.era,
      msg.method,
      msg.method === 'tools/call' ? toolName(msg.params) : undefined,
      reply.outcome ?? 'ok',
      (performance.now() - started) / 1000,
    );
  sendJson(res, reply.status, reply.body, cors);
}
