// The operator's console listener (docs/console.md): its own node:http server on loopback, never the /mcp port.
// Every request: Host must name this listener (DNS rebinding), an Origin, when sent, must be this origin.
// Pages and the API need the session cookie a one-time link set; state changes also need the session's CSRF
// token and an Origin. Answers carry a Content-Security-Policy that allows only this origin (respond.ts).
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { readBody } from '../http/body.js';
import { ToolError } from '../core/tool-error.js';
import { ConsoleAccess, SESSION_TTL_MS, type Session } from './access.js';
import { act } from './actions.js';
import { EventStreams } from './events.js';
import type { ConsoleHost } from './host.js';
import { cookieOf, CSP, json, noSessionPage, refuse, send } from './respond.js';
import { snapshot } from './views.js';

const MAX_POST_BYTES = 16 * 1024;
const POINT_DIFF = /^\/api\/points\/([A-Za-z0-9_-]{1,64})\/diff$/;
const ASSETS: Record<string, { file: string; type: string }> = {
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};
const HTML = 'text/html; charset=utf-8';

/**
 * The page's files, read once when the console starts: the server may be installed inside the workspace it
 * serves, where a command could rewrite them, and the page runs with the operator's session
 * (docs/security-model.md, rule B).
 */
function readPage(): { html: string; assets: Map<string, Buffer> } {
  const dir = fileURLToPath(new URL('./page/', import.meta.url));
  const assets = new Map<string, Buffer>();
  for (const a of Object.values(ASSETS)) assets.set(a.file, readFileSync(`${dir}${a.file}`));
  return { html: readFileSync(`${dir}index.html`, 'utf8'), assets };
}

export class ConsoleServer {
  readonly server: http.Server;
  readonly access: ConsoleAccess;
  private readonly streams: EventStreams;
  private readonly page = readPage();
  private port = 0;

  constructor(
    private readonly host: ConsoleHost,
    private readonly o: { freshLinkCommand: string },
  ) {
    this.access = new ConsoleAccess(host.clock);
    this.streams = new EventStreams(host);
    this.server = http.createServer((req, res) => {
      this.route(req, res).catch((e: unknown) => {
        host.log.error('console request failed', { error: String((e as Error)?.stack ?? e) });
        if (!res.headersSent) refuse(res, 500, 'internal', 'The console failed; see the server log.');
        else res.destroy();
      });
    });
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 0; // the event stream stays open
    this.server.on('listening', () => {
      const a = this.server.address();
      this.port = typeof a === 'object' && a ? a.port : 0;
    });
  }

  /** The origin once listening, e.g. http://127.0.0.1:8766. */
  origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A fresh one-time link. */
  link(): string {
    return `${this.origin()}/open?t=${this.access.mintLink()}`;
  }

  close(): Promise<void> {
    return new Promise<void>((r) => {
      this.streams.closeAll();
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  private get cookieName(): string {
    return `wb_console_${this.port}`;
  }

  private hostOk(req: IncomingMessage): boolean {
    const h = req.headers.host;
    const p = this.port;
    return h === `127.0.0.1:${p}` || h === `localhost:${p}` || h === `[::1]:${p}`;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.hostOk(req))
      return refuse(res, 421, 'wrong_host', 'This console answers only at its own loopback address.');
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}`)
      return refuse(res, 403, 'wrong_origin', 'Requests from another origin are refused.');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const method = req.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/open') return this.open(res, url);
    if (method === 'POST' && url.pathname === '/api/link') return this.mintLink(req, res);
    const session = this.access.session(cookieOf(req, this.cookieName));
    if (!session) {
      if (method === 'GET' && !url.pathname.startsWith('/api/'))
        return send(res, 401, HTML, noSessionPage(this.o.freshLinkCommand));
      return refuse(res, 401, 'no_session', `Open the console with a fresh link: ${this.o.freshLinkCommand}`);
    }
    if (method === 'GET') return this.get(req, res, url, session);
    if (method !== 'POST') return refuse(res, 405, 'method_not_allowed', 'Only GET and POST are used here.');
    if (origin === undefined)
      return refuse(res, 403, 'no_origin', 'A state change needs the Origin header a browser sends.');
    const csrf = req.headers['x-csrf-token'];
    if (typeof csrf !== 'string' || !this.access.csrfOk(session, csrf))
      return refuse(res, 403, 'csrf', 'The CSRF token is missing or wrong: reload the console.');
    return this.post(req, res, url);
  }

  private open(res: ServerResponse, url: URL): void {
    const s = this.access.redeem(url.searchParams.get('t') ?? '');
    if (!s) return send(res, 403, HTML, noSessionPage(this.o.freshLinkCommand));
    const cookie = `${this.cookieName}=${s.id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`;
    send(res, 303, 'text/plain; charset=utf-8', 'See /', { location: '/', 'set-cookie': cookie });
  }

  /** `workbench-mcp console` (cli/console-link.ts) presents the link key from the state directory. */
  private mintLink(req: IncomingMessage, res: ServerResponse): void {
    const auth = req.headers.authorization ?? '';
    const key = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!this.access.checkLinkKey(key)) return refuse(res, 401, 'link_key', 'The console link key is wrong.');
    json(res, 200, { link: this.link() });
  }

  private get(req: IncomingMessage, res: ServerResponse, url: URL, session: Session): void | Promise<void> {
    if (url.pathname === '/') {
      return send(res, 200, HTML, this.page.html.replace('__CSRF__', session.csrf));
    }
    const asset = ASSETS[url.pathname];
    if (asset) return send(res, 200, asset.type, this.page.assets.get(asset.file) as Buffer);
    if (url.pathname === '/api/state') return json(res, 200, snapshot(this.host));
    if (url.pathname === '/api/events') return this.streams.open(req, res, CSP);
    const point = POINT_DIFF.exec(url.pathname);
    if (point) return void this.pointDiff(res, point[1] as string);
    const diff = /^\/api\/workspaces\/([A-Za-z0-9_-]{1,64})\/diff$/.exec(url.pathname);
    if (diff) return workspaceDiff(this.host, res, diff[1] as string);
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    refuse(res, 404, 'not_found', 'No such console page.');
  }

  /** A review point's diff, fetched when the operator opens it (docs/console.md#edits). */
  private async pointDiff(res: ServerResponse, id: string): Promise<void> {
    try {
      json(res, 200, { diff: await this.host.pointDiff(id) });
    } catch (e) {
      if (e instanceof ToolError) return refuse(res, 404, e.code, e.message);
      this.host.log.warn('console: a review point diff failed', { error: String(e) });
      refuse(res, 500, 'internal', 'The diff could not be made; see the server log.');
    }
  }

  private async post(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const body = await readBody(req, MAX_POST_BYTES);
    if (!body.ok) return refuse(res, 413, 'body', 'The request body is too large or was cut.');
    let args: unknown;
    try {
      args = body.text ? JSON.parse(body.text) : {};
    } catch {
      return refuse(res, 400, 'json', 'The body is not JSON.');
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      return refuse(res, 400, 'json', 'The body must be a JSON object.');
    return act(this.host, res, url.pathname, args as Record<string, unknown>);
  }
}

/** A worktree's diff against its base, asked for when the operator opens it (docs/console.md#workspaces). */
async function workspaceDiff(host: ConsoleHost, res: ServerResponse, id: string): Promise<void> {
  if (!host.workspaces) return refuse(res, 404, 'not_found', 'This server has no project roots.');
  const r = await host.workspaces.diff(id);
  if (r.ok) return json(res, 200, r.value);
  refuse(res, r.reason === 'not_worktree' ? 404 : 409, r.reason, r.message);
}

export function createConsoleServer(host: ConsoleHost, o: { freshLinkCommand: string }): ConsoleServer {
  return new ConsoleServer(host, o);
}
