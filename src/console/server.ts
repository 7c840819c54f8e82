// The operator's console listener (docs/console.md): its own node:http server on loopback, never the /mcp port.
// Every request: Host must name this listener (DNS rebinding), an Origin, when sent, must be this origin.
// Pages and the API need the session cookie a one-time link set; state changes also need the session's CSRF
// token and an Origin. Answers carry a Content-Security-Policy that allows only this origin.
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { readBody } from '../http/body.js';
import { ToolError } from '../core/tool-error.js';
import { ConsoleAccess, SESSION_TTL_MS, type Session } from './access.js';
import type { ConsoleHost } from './host.js';
import { EventStreams } from './events.js';
import { snapshot } from './views.js';

const MAX_POST_BYTES = 16 * 1024;
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'none'; frame-ancestors 'none'; base-uri 'none'";
const ASSETS: Record<string, { file: string; type: string }> = {
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

export interface ConsoleServer {
  server: http.Server;
  access: ConsoleAccess;
  /** The origin once listening, e.g. http://127.0.0.1:8766. */
  origin(): string;
  /** A fresh one-time link. */
  link(): string;
  close(): Promise<void>;
}

function pageDir(): string {
  return fileURLToPath(new URL('./page/', import.meta.url));
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'cross-origin-resource-policy': 'same-origin',
    'x-frame-options': 'DENY',
    ...extra,
  });
  res.end(body);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  json(res, status, { error: code, message });
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

const NO_SESSION_PAGE = (cmd: string) =>
  '<!doctype html><meta charset="utf-8"><title>workbench-mcp console</title>' +
  '<main style="font:16px system-ui;max-width:40em;margin:3em auto;padding:0 1em">' +
  '<h1>This link cannot open the console</h1><p>Console links work once and for ten minutes. ' +
  `For a fresh one, run <code>${cmd}</code> on the machine that runs the server.</p></main>`;

export function createConsoleServer(host: ConsoleHost, o: { freshLinkCommand: string }): ConsoleServer {
  const access = new ConsoleAccess(host.clock);
  let port = 0;
  const cookieName = () => `wb_console_${port}`;
  const streams = new EventStreams(host);
  const hostOk = (req: IncomingMessage) => {
    const h = req.headers.host;
    return h === `127.0.0.1:${port}` || h === `localhost:${port}` || h === `[::1]:${port}`;
  };
  const originOk = (req: IncomingMessage) => {
    const origin = req.headers.origin;
    return origin === undefined || origin === `http://${req.headers.host}`;
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostOk(req))
      return refuse(res, 421, 'wrong_host', 'This console answers only at its own loopback address.');
    if (!originOk(req)) return refuse(res, 403, 'wrong_origin', 'Requests from another origin are refused.');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const method = req.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/open') return open(req, res, url);
    if (method === 'POST' && url.pathname === '/api/link') return mintLink(req, res);
    const session = access.session(cookieOf(req, cookieName()));
    if (!session) {
      if (method === 'GET' && !url.pathname.startsWith('/api/'))
        return send(res, 401, 'text/html; charset=utf-8', NO_SESSION_PAGE(o.freshLinkCommand));
      return refuse(res, 401, 'no_session', `Open the console with a fresh link: ${o.freshLinkCommand}`);
    }
    if (method === 'GET') return get(req, res, url, session);
    if (method !== 'POST') return refuse(res, 405, 'method_not_allowed', 'Only GET and POST are used here.');
    if (req.headers.origin === undefined)
      return refuse(res, 403, 'no_origin', 'A state change needs the Origin header a browser sends.');
    const csrf = req.headers['x-csrf-token'];
    if (typeof csrf !== 'string' || !access.csrfOk(session, csrf))
      return refuse(res, 403, 'csrf', 'The CSRF token is missing or wrong: reload the console.');
    return post(req, res, url);
  };

  const open = (_req: IncomingMessage, res: ServerResponse, url: URL) => {
    const s = access.redeem(url.searchParams.get('t') ?? '');
    if (!s) return send(res, 403, 'text/html; charset=utf-8', NO_SESSION_PAGE(o.freshLinkCommand));
    const cookie = `${cookieName()}=${s.id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`;
    send(res, 303, 'text/plain; charset=utf-8', 'See /', { location: '/', 'set-cookie': cookie });
  };

  const mintLink = async (req: IncomingMessage, res: ServerResponse) => {
    const auth = req.headers.authorization ?? '';
    const key = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!access.checkLinkKey(key)) return refuse(res, 401, 'link_key', 'The console link key is wrong.');
    json(res, 200, { link: `${origin()}/open?t=${access.mintLink()}` });
  };

  const get = (req: IncomingMessage, res: ServerResponse, url: URL, session: Session) => {
    if (url.pathname === '/') {
      const html = readFileSync(`${pageDir()}index.html`, 'utf8').replace('__CSRF__', session.csrf);
      return send(res, 200, 'text/html; charset=utf-8', html);
    }
    const asset = ASSETS[url.pathname];
    if (asset) return send(res, 200, asset.type, readFileSync(`${pageDir()}${asset.file}`));
    if (url.pathname === '/api/state') return json(res, 200, snapshot(host));
    if (url.pathname === '/api/events') return streams.open(req, res, CSP);
    refuse(res, 404, 'not_found', 'No such console page.');
  };

  const post = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const body = await readBody(req, MAX_POST_BYTES);
    if (!body.ok) return refuse(res, 413, 'body', 'The request body is too large or was cut.');
    let args: Record<string, unknown> = {};
    try {
      args = body.text ? (JSON.parse(body.text) as Record<string, unknown>) : {};
    } catch {
      return refuse(res, 400, 'json', 'The body is not JSON.');
    }
    if (typeof args !== 'object' || args === null)
      return refuse(res, 400, 'json', 'The body must be an object.');
    const m = /^\/api\/(approvals|commands|edits)\/([A-Za-z0-9_-]{1,64})\/(decide|kill|revert)$/.exec(
      url.pathname,
    );
    if (url.pathname === '/api/credential') {
      host.audit('reveal_credential', {});
      return json(res, 200, { credential: host.credential() ?? null });
    }
    if (!m) return refuse(res, 404, 'not_found', 'No such console action.');
    const [what, id, action] = [m[1], m[2] ?? '', m[3]];
    if (what === 'approvals' && action === 'decide') return decide(res, id, args);
    if (what === 'commands' && action === 'kill') {
      const ok = await host.kill(id);
      return ok
        ? json(res, 200, { ok: true })
        : refuse(res, 409, 'not_running', `Command ${id} is not running.`);
    }
    if (what === 'edits' && action === 'revert') {
      try {
        await host.revert(id);
        return json(res, 200, { ok: true });
      } catch (e) {
        if (e instanceof ToolError) return refuse(res, 409, e.code, e.message);
        throw e;
      }
    }
    refuse(res, 404, 'not_found', 'No such console action.');
  };

  const decide = (res: ServerResponse, id: string, a: Record<string, unknown>) => {
    const action = a.action;
    if (action !== 'approve' && action !== 'deny')
      return refuse(res, 400, 'action', 'action is approve or deny.');
    const note = typeof a.note === 'string' ? a.note : undefined;
    const code = typeof a.code === 'string' ? a.code : undefined;
    const minutes = typeof a.minutes === 'number' && Number.isFinite(a.minutes) ? a.minutes : undefined;
    const r = host.approvals.decide(id, { action, note, code, minutes });
    const subject = host.approvals.get(id)?.subject ?? (r.ok ? r.view.subject : undefined);
    host.audit(`${action}_request`, { request: id, subject, minutes, note }, r.ok ? undefined : r.reason);
    if (r.ok) return json(res, 200, { ok: true, request: r.view });
    const message = {
      unknown: `Request ${id} is not open.`,
      decided: `Request ${id} was already decided.`,
      wrong_code: 'The pairing code is wrong; type the code the sign-in page shows.',
      withdrawn: `Request ${id} was withdrawn (three wrong codes, or the asker gave up).`,
    }[r.reason];
    refuse(res, r.reason === 'wrong_code' ? 403 : 409, r.reason, message);
  };

  const server = http.createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      host.log.error('console request failed', { error: String((e as Error)?.stack ?? e) });
      if (!res.headersSent) refuse(res, 500, 'internal', 'The console failed; see the server log.');
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 0; // the event stream stays open
  server.on('listening', () => {
    const a = server.address();
    port = typeof a === 'object' && a ? a.port : 0;
  });
  const origin = () => `http://127.0.0.1:${port}`;
  return {
    server,
    access,
    origin,
    link: () => `${origin()}/open?t=${access.mintLink()}`,
    close: () =>
      new Promise<void>((r) => {
        streams.closeAll();
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
