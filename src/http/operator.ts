// The operator's routes on the server's own port (docs/operations.md): GET /healthz (the process answers) and
// GET /readyz (the workspace is there, the sandbox probe is done and the command helper is up) without
// credentials, answering one status word and nothing else — a probe learns no detail a stranger should not;
// GET /metrics (Prometheus text) behind the same authentication as /mcp, refused with the same 401 challenge.
// Checks are synchronous and cheap: a probe every few seconds must not cost the request path anything.
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config/load.js';
import { baseUrl } from './base-url.js';
import { Exposition } from './metrics-exposition.js';
import type { ServerMetrics } from './metrics.js';
import { sendJson } from './respond.js';

export const OPERATOR_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

export interface OperatorDeps {
  config: Config;
  authenticator: Authenticator;
  metrics: ServerMetrics;
  /** The workspace root's real path (readiness: it must still be a directory). */
  workspace: string;
  /** Whether the sandbox probe is done and the command helper is up (or none will come). */
  commandsReady: () => boolean;
  /** The server is shutting down. */
  stopping: () => boolean;
}

function word(res: ServerResponse, status: number, text: string, head: boolean): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text) + 1,
    'Cache-Control': 'no-store',
  });
  res.end(head ? undefined : `${text}\n`);
}

/** The one word /readyz answers, with its status. */
export function readiness(deps: OperatorDeps): { status: number; word: string } {
  if (deps.stopping()) return { status: 503, word: 'stopping' };
  let workspace = false;
  try {
    workspace = statSync(deps.workspace).isDirectory();
  } catch {
    workspace = false;
  }
  if (!workspace) return { status: 503, word: 'unavailable' };
  return deps.commandsReady() ? { status: 200, word: 'ok' } : { status: 503, word: 'starting' };
}

export class OperatorRoutes {
  private exposition: Exposition | undefined;

  constructor(private readonly deps: OperatorDeps) {}

  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': 0 });
      return void res.end();
    }
    const head = method === 'HEAD';
    if (path === '/healthz') return word(res, 200, 'ok', head);
    if (path === '/readyz') {
      const r = readiness(this.deps);
      return word(res, r.status, r.word, head);
    }
    const auth = await this.deps.authenticator.authenticate(req, baseUrl(req, this.deps.config));
    if (!auth.ok) {
      const body = JSON.stringify({ error: auth.error, error_description: auth.description });
      return sendJson(res, auth.status, body, auth.headers);
    }
    this.exposition ??= new Exposition(this.deps.metrics);
    const text = await this.exposition.text();
    res.writeHead(200, {
      'Content-Type': this.exposition.contentType,
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
    });
    res.end(head ? undefined : text);
  }

  close(): void {
    this.exposition?.close();
  }
}
