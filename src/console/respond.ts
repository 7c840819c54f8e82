// How the console answers (docs/console.md#access): every answer carries the Content-Security-Policy that
// allows only the console's own origin, no framing, no caching and no referrer.
import type { IncomingMessage, ServerResponse } from 'node:http';

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export function send(
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

export function json(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

export function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  json(res, status, { error: code, message });
}

export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** What a browser without a session sees: how to get a fresh link. */
export function noSessionPage(freshLinkCommand: string): string {
  return (
    '<!doctype html><html lang="en"><meta charset="utf-8"><title>workbench-mcp console</title>' +
    '<h1>This link cannot open the console</h1><p>Console links work once and for ten minutes. ' +
    `For a fresh one, run <code>${escapeHtml(freshLinkCommand)}</code> on the machine that runs the server.</p></html>`
  );
}
