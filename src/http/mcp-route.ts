// POST /mcp, in the contract's order: Origin → auth → media type → size → JSON → batch → era → headers →
// method (docs/http.md#order-of-checks). Each rejection is decided before any later
// work, so an unauthenticated caller never gets its body read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthResult, Authenticator } from '../auth/authenticate.js';
import { classify, type HeaderView } from '../protocol/classify.js';
import type { Dispatcher } from '../protocol/dispatch.js';
import { errorBody, INVALID_REQUEST } from '../protocol/errors.js';
import { parseMessage } from '../protocol/jsonrpc.js';
import type { ProtocolHost } from '../protocol/host.js';
import { baseUrl } from './base-url.js';
import { isAllowedOrigin } from '../core/hosts.js';
import { yieldToLoop } from '../core/slice.js';
import { lingeringClose, readBody } from './body.js';
import type { ServerMetrics } from './metrics.js';
import { corsHeaders, rpcError, sendJson } from './respond.js';
import { noteRequest } from './request-log.js';
import { systemClock } from '../core/clock.js';

/** Bodies from this size on are parsed in a stretch of their own. */
const LARGE_BODY_CHARS = 256 * 1024;

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

type Reject = (status: number, body: string, extra?: Record<string, string>) => void;
type Principal = Extract<AuthResult, { ok: true }>['principal'];

export async function handleMcpPost(
  req: IncomingMessage,
  res: ServerResponse,
  deps: McpRouteDeps,
): Promise<void> {
  const cors = corsHeaders(req, deps.runtime.config.allowedOrigins);
  const reject: Reject = (status, body, extra = {}) => sendJson(res, status, body, { ...cors, ...extra });
  const admitted = await admit(req, res, deps, reject);
  if (admitted) await answer(req, res, deps, admitted, cors, reject);
}

/** Steps 1–3 up to a whole body: who calls, and the body's text; undefined when refused (answered). */
async function admit(
  req: IncomingMessage,
  res: ServerResponse,
  deps: McpRouteDeps,
  reject: Reject,
): Promise<{ principal: Principal; text: string } | undefined> {
  const { config } = deps.runtime;
  // 1. Origin (DNS rebinding, browsers): present and not allowed → 403.
  const origin = req.headers.origin;
  if (origin !== undefined && !isAllowedOrigin(origin, config.allowedOrigins)) {
    reject(
      403,
      rpcError(
        INVALID_REQUEST,
        `Forbidden: Origin ${origin} is not allowed; add it to SERVICE_ALLOWED_ORIGINS to let that page call this server`,
      ),
    );
    return undefined;
  }
  // 2. Authentication.
  const auth = await deps.authenticator.authenticate(req, baseUrl(req, config));
  if (!auth.ok) {
    reject(
      auth.status,
      JSON.stringify({ error: auth.error, error_description: auth.description }),
      auth.headers,
    );
    return undefined;
  }
  // 3. Media type, size (JSON and batch follow in `answer`).
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    reject(415, rpcError(INVALID_REQUEST, 'Unsupported Media Type: send Content-Type: application/json'));
    return undefined;
  }
  const body = await readBody(req, config.maxRequestBytes);
  if (body.ok) return { principal: auth.principal, text: body.text };
  if (body.reason === 'too_large') {
    lingeringClose(req, res);
    reject(413, rpcError(INVALID_REQUEST, `Payload Too Large: the limit is ${config.maxRequestBytes} bytes`));
  }
  return undefined;
}

/** Step 3's JSON and batch checks, then era, headers and the method; counts the request. */
async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  deps: McpRouteDeps,
  { principal, text }: { principal: Principal; text: string },
  cors: Record<string, string>,
  reject: Reject,
): Promise<void> {
  const parsed = parseMessage(text);
  if (!parsed.ok) return reject(parsed.error.status, errorBody(parsed.id, parsed.error));
  // Reading and parsing a body of megabytes takes tens of milliseconds: let others in before the method runs.
  if (text.length > LARGE_BODY_CHARS) await yieldToLoop();
  const msg = parsed.msg;
  if (msg.kind === 'response') return sendJson(res, 202, null, cors);
  const tool = msg.method === 'tools/call' ? toolName(msg.params) : undefined;
  noteRequest(req, { method: msg.method.slice(0, 64), tool });
  // 4–6. Era, envelope and mirror headers.
  const cls = classify(msg, headerView(req));
  if (!cls.ok) return reject(cls.error.status, errorBody(msg.kind === 'request' ? msg.id : null, cls.error));
  // 7. The method.
  const started = systemClock.monotonic();
  const reply = await deps.dispatcher.handle(msg, cls, principal, deps.runtime.signal);
  if (msg.kind === 'request')
    deps.metrics?.request(
      cls.era,
      msg.method,
      tool,
      reply.outcome ?? 'ok',
      (systemClock.monotonic() - started) / 1000,
    );
  sendJson(res, reply.status, reply.body, cors);
}
