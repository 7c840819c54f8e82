// The node:http front: routes, limits and timeouts (docs/http.md#other-routes; docs/design-notes.md#statuses,
// docs/design-notes.md#limits). Keep-alive on; 5 s to send a first request, 10 s to receive headers and 30 s
// for a whole request (no slowloris); at most 256 open connections and 64 requests in flight. When full, a
// newcomer takes the slot of an unused, idle or unauthenticated connection (connections.ts,
// docs/security-model.md#under-attack-connections-and-the-password-page); only when every slot holds
// authenticated work does it get 503 with Retry-After: 1.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AuthResult, Authenticator } from '../auth/authenticate.js';
import { Dispatcher } from '../protocol/dispatch.js';
import { INTERNAL_ERROR, SERVER_ERROR } from '../protocol/errors.js';
import type { ProtocolHost } from '../protocol/host.js';
import { baseUrl } from './base-url.js';
import { ConnectionTable } from './connections.js';
import { handleMcpPost } from './mcp-route.js';
import { ServerMetrics } from './metrics.js';
import { OPERATOR_PATHS, OperatorRoutes } from './operator.js';
import { CORS_ALLOW_HEADERS, corsHeaders, rpcError, sendJson } from './respond.js';
import { CARD_PATHS, serverCard } from './server-card.js';
import { answerProof } from './proof.js';
import { isAllowedOrigin } from '../core/hosts.js';
import { noteRequest, RefusalLog, requestSource, traceRequest } from './request-log.js';

export const MAX_CONCURRENT_REQUESTS = 64;
export const MAX_CONNECTIONS = 256;
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** A connection that has not sent a whole first request by then is closed (docs/security-model.md#under-attack-connections-and-the-password-page). */
export const FIRST_REQUEST_TIMEOUT_MS = 5_000;
/** How often node:http sweeps connections for the header and request timeouts. */
export const CHECK_INTERVAL_MS = 1_000;

/** A route another module (OAuth) adds; returns true when it handled the request. */
export type ExtraRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;

export interface HttpDeps {
  runtime: ProtocolHost;
  authenticator: Authenticator;
  extraRoutes?: ExtraRoute[];
  /** The secrets the proof route (proof.ts) proves knowledge of: accepted tokens, the OAuth password (asked
   *  on each request: a kept token may be rotated while the server runs). */
  proofSecrets?: () => readonly string[];
  limits?: {
    maxConcurrent?: number;
    maxConnections?: number;
    headersTimeoutMs?: number;
    requestTimeoutMs?: number;
    firstRequestTimeoutMs?: number;
  };
}

const tables = new WeakMap<http.Server, ConnectionTable>();

/** A server's connection table (tests and diagnostics). */
export function connectionTableOf(server: http.Server): ConnectionTable | undefined {
  return tables.get(server);
}

/**
 * The authenticator, telling the connection table which requests were admitted by credentials, the request log
 * who the client is, and the refusal log about credentials sent and refused (request-log.ts).
 */
function reportingAuthenticator(
  inner: Authenticator,
  accepted: (req: IncomingMessage) => void,
  refusals: RefusalLog,
  metrics: ServerMetrics,
  onRefused?: (source: string, what: string) => void,
): Authenticator {
  const note = (r: AuthResult, req: IncomingMessage) => {
    if (r.ok) {
      accepted(req);
      noteRequest(req, { client: r.principal.id });
    } else {
      metrics.authFailure(r.error);
      if (r.error === 'invalid_token') {
        refusals.note(requestSource(req), r.description);
        onRefused?.(requestSource(req), r.description ?? 'credential refused');
      }
    }
    return r;
  };
  return {
    mode: inner.mode,
    authenticate(req, base) {
      const r = inner.authenticate(req, base);
      return r instanceof Promise ? r.then((v) => note(v, req)) : note(r, req);
    },
  };
}

const BUSY = rpcError(SERVER_ERROR, 'Server busy: too many requests in flight; retry after a second');

/** What the routes of one server use. */
interface Routes {
  deps: HttpDeps;
  runtime: ProtocolHost;
  dispatcher: Dispatcher;
  authenticator: Authenticator;
  metrics: ServerMetrics;
  operator: OperatorRoutes;
}

export function createHttpServer(deps: HttpDeps): http.Server {
  const { runtime } = deps;
  const table = new ConnectionTable({
    maxConnections: deps.limits?.maxConnections ?? MAX_CONNECTIONS,
    maxRequests: deps.limits?.maxConcurrent ?? MAX_CONCURRENT_REQUESTS,
    firstRequestTimeoutMs: deps.limits?.firstRequestTimeoutMs ?? FIRST_REQUEST_TIMEOUT_MS,
  });
  const metrics = serverMetrics(runtime);
  const authenticator = reportingAuthenticator(
    deps.authenticator,
    (req) => table.authenticated(req),
    new RefusalLog(runtime.log, runtime.clock),
    metrics,
    // The operator's console lists refused credentials beside the calls (docs/console.md#activity).
    runtime.activity &&
      ((source, what) =>
        runtime.activity?.publish({ kind: 'refused', time: runtime.clock.now(), client: source, what })),
  );
  // GET /healthz, /readyz (no credentials, a status word) and /metrics (credentials as for /mcp).
  const operator = new OperatorRoutes({
    config: runtime.config,
    authenticator,
    metrics,
    workspace: runtime.root.real,
    commandsReady: () => runtime.commands.ready,
    stopping: () => runtime.signal.aborted,
  });
  const routes: Routes = {
    deps,
    runtime,
    dispatcher: new Dispatcher(runtime),
    authenticator,
    metrics,
    operator,
  };
  const traced = runtime.config.logLevel === 'debug';
  const server = nodeServer(deps, (req, res) => {
    if (traced) traceRequest(req, res, runtime.log);
    if (!table.startRequest(req)) return sendJson(res, 503, BUSY, { 'Retry-After': '1' });
    res.on('close', () => table.endRequest(req));
    route(routes, req, res).catch((e) => {
      runtime.log.error('request failed', { error: String((e as Error)?.stack ?? e) });
      sendJson(res, 500, rpcError(INTERNAL_ERROR, 'Internal error; the failure was logged on the server'));
    });
  });
  server.on('connection', (socket: Socket) => {
    if (table.admit(socket)) return;
    socket.end(
      'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
    );
    socket.destroy();
  });
  server.on('close', () => operator.close());
  tables.set(server, table);
  return server;
}

function serverMetrics(runtime: ProtocolHost): ServerMetrics {
  return new ServerMetrics({
    tools: runtime.catalog.names,
    commands: () => {
      const commands = runtime.commands;
      const all = commands.list();
      const running = all.filter((c) => c.running).length;
      const starts = commands.helper.starts;
      return { running, retained: all.length - running, retainedBytes: commands.retainedBytes(), starts };
    },
  });
}

/** The node:http server with keep-alive and the header and request timeouts. */
function nodeServer(deps: HttpDeps, handle: http.RequestListener): http.Server {
  const headersTimeout = deps.limits?.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const requestTimeout = deps.limits?.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = http.createServer(
    {
      keepAlive: true,
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // node:http enforces both timeouts only when it sweeps its connections, every 30 s by default, which
      // let a slow client hold a slot for 30 s instead of 10 (and 60 s instead of 30 for a body).
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, headersTimeout, requestTimeout),
    },
    handle,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

async function route(r: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const method = req.method ?? 'GET';
  if (path === '/mcp') return mcpRoute(r, req, res, method);
  if (OPERATOR_PATHS.includes(path)) return r.operator.handle(req, res, path);
  const url = new URL(raw, 'http://localhost');
  for (const extra of r.deps.extraRoutes ?? []) if (await extra(req, res, url)) return;
  if (answerProof(req, res, url, r.deps.proofSecrets?.() ?? [])) return;
  if (CARD_PATHS.includes(path)) return cardRoute(r.runtime, req, res, method);
  sendJson(
    res,
    404,
    JSON.stringify({
      error: 'not_found',
      error_description: `No route ${method} ${path}; the MCP endpoint is POST /mcp`,
    }),
  );
}

function mcpRoute(
  r: Routes,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
): void | Promise<void> {
  const { runtime, dispatcher, authenticator, metrics } = r;
  if (method === 'POST') return handleMcpPost(req, res, { runtime, dispatcher, authenticator, metrics });
  if (method === 'OPTIONS') return preflight(runtime, req, res);
  // No SSE stream (docs/http.md#other-routes): GET and DELETE are 405, DELETE with Allow: POST
  // (docs/http.md#other-routes).
  return sendJson(
    res,
    405,
    rpcError(
      SERVER_ERROR,
      `Method Not Allowed: ${method} /mcp; this server answers POST only (no SSE stream, no sessions)`,
    ),
    {
      Allow: 'POST, OPTIONS',
      ...corsHeaders(req, runtime.config.allowedOrigins),
    },
  );
}

function cardRoute(runtime: ProtocolHost, req: IncomingMessage, res: ServerResponse, method: string): void {
  if (method === 'OPTIONS') return preflight(runtime, req, res);
  if (method !== 'GET' && method !== 'HEAD')
    return sendJson(res, 405, JSON.stringify({ error: 'method_not_allowed' }), { Allow: 'GET' });
  return sendJson(res, 200, JSON.stringify(serverCard(runtime, baseUrl(req, runtime.config))), {
    'Access-Control-Allow-Origin': '*',
  });
}

function preflight(runtime: ProtocolHost, req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  if (origin !== undefined && !isAllowedOrigin(origin, runtime.config.allowedOrigins)) {
    return sendJson(
      res,
      403,
      JSON.stringify({ error: 'forbidden', error_description: `Origin ${origin} is not allowed` }),
    );
  }
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  sendJson(res, 204, null, {
    ...corsHeaders(req, runtime.config.allowedOrigins),
    'Access-Control-Allow-Methods': path === '/mcp' ? 'POST, OPTIONS' : 'GET, OPTIONS',
    'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
    'Access-Control-Max-Age': '600',
  });
}
