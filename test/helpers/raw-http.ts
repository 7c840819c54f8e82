// Raw HTTP/1.1 requests for the wire-level tests: node:http on a fresh connection each time, so tests can send
// what fetch will not (a foreign Host, duplicated headers, chunked bodies, a body that stops half-way) and
// read exactly what came back. Every reply is recorded in `seen` so a suite can assert a property of all of
// them (no response ever carries Mcp-Session-Id, docs/http.md#other-routes).
import http from 'node:http';
import net from 'node:net';
import { TEST_TOKEN } from './server.js';

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface RawOptions {
  method?: string;
  /** Path and query; default /mcp. */
  path?: string;
  headers?: Record<string, string | string[]>;
  /** Sent with Content-Length. */
  body?: string | Buffer;
  /** Sent with Transfer-Encoding: chunked, one write per chunk. */
  chunks?: Array<string | Buffer>;
  /** Only ends a hung request (default 60 s). */
  timeoutMs?: number;
}

export const seen: RawReply[] = [];

/** A response's status, headers, text and JSON (undefined when the text is not JSON), once it has ended. */
export function replyOf(res: http.IncomingMessage, done: (reply: RawReply) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    done({ status: res.statusCode ?? 0, headers: res.headers, text, json });
  });
}

export function raw(baseOrUrl: string, opts: RawOptions = {}): Promise<RawReply> {
  const u = new URL(baseOrUrl);
  const path = opts.path ?? (u.pathname === '/' ? '/mcp' : u.pathname);
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (f: () => void) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        f();
      }
    };
    const req = http.request({
      host: u.hostname,
      port: u.port,
      method: opts.method ?? 'POST',
      path,
      headers: opts.headers,
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      done(() => reject(new Error(`no response within ${opts.timeoutMs ?? 60_000} ms`)));
    }, opts.timeoutMs ?? 60_000);
    req.on('response', (res) => {
      res.on('error', () => undefined);
      replyOf(res, (reply) => {
        seen.push(reply);
        done(() => resolve(reply));
      });
    });
    // The server may close early (413): a write error after or before the response is not the test's verdict.
    req.on('error', (e) => setTimeout(() => done(() => reject(e)), 200));
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else if (opts.body !== undefined) {
      req.setHeader('Content-Length', Buffer.byteLength(opts.body));
      req.end(opts.body);
    } else req.end();
  });
}

export const MODERN = '2026-07-28';
export const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** META of a 2026-07-28 client that declares elicitation (it can ask its user). */
export const ELICIT_META = {
  ...META,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

export type Era = 'handshake' | 'modern';

/** Body and headers of a well-formed request in either era (mirror headers filled in for modern). */
export function request(
  era: Era,
  method: string,
  params: Record<string, unknown> = {},
  id: number | string = 1,
) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (era === 'handshake')
    return { headers, body: { jsonrpc: '2.0', id, method, params } as Record<string, unknown> };
  headers['mcp-protocol-version'] = MODERN;
  headers['mcp-method'] = method;
  const nameField = method === 'resources/read' ? 'uri' : 'name';
  if (
    ['tools/call', 'prompts/get', 'resources/read'].includes(method) &&
    typeof params[nameField] === 'string'
  ) {
    headers['mcp-name'] = params[nameField] as string;
  }
  return {
    headers,
    body: { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } } as Record<string, unknown>,
  };
}

/** A notification in either era. */
export function notification(era: Era, method: string, params: Record<string, unknown> = {}) {
  const r = request(era, method, params);
  delete r.body.id;
  return r;
}

export const bearer = (token = TEST_TOKEN) => ({ authorization: `Bearer ${token}` });

/** POST a JSON-RPC message with the given extra headers (undefined values drop a header). */
export function send(
  url: string,
  msg: { headers: Record<string, string>; body: unknown },
  extra: Record<string, string | string[] | undefined> = {},
  opts: Omit<RawOptions, 'headers' | 'body'> = {},
) {
  const headers: Record<string, string | string[]> = { ...msg.headers };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return raw(url, {
    ...opts,
    headers,
    body: typeof msg.body === 'string' ? msg.body : JSON.stringify(msg.body),
  });
}

/**
 * Repeat `attempt` until `ok` holds, `delayMs` apart; returns the last value. The ceiling (60 s) only ends a
 * hung test: a passing run stops at the first value that holds.
 */
export async function until<T>(
  attempt: () => Promise<T>,
  ok: (v: T) => boolean,
  ceilingMs = 60_000,
  delayMs = 20,
): Promise<T> {
  const end = Date.now() + ceilingMs;
  let v = await attempt();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, delayMs));
    v = await attempt();
  }
  return v;
}

/**
 * One exchange with the filtering proxy over its unix socket: `head` is sent (the connect itself is made before
 * this returns), then `after` once a `200` opened a tunnel; resolves with everything that came back when the
 * proxy ends the connection, rejects on a socket error.
 */
export function proxyExchange(sock: string, head: string, after?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(sock);
    let got = '';
    let sent = false;
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (after !== undefined && !sent && got.startsWith('HTTP/1.1 200')) {
        sent = true;
        s.write(after);
      }
    });
    s.on('end', () => resolve(got));
    s.on('error', reject);
    s.write(head);
  });
}
