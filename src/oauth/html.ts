// The HTML the operator sees: the password page and the error page (docs/oauth.md#the-authorization-page).
// Owns escaping and the page's security headers: CSP with frame-ancestors 'none' (RFC 9700 §4.16
// clickjacking), X-Frame-Options DENY, no-store, referrer to this origin only (so the form's POST carries a
// real Origin header for the same-origin check; no-referrer would make it `null`). Every value from a client
// (its name, its redirect host, its id, its metadata document's host) is escaped here and nowhere else, through
// shownHtml: what could hide or reorder text is made visible (src/core/text/visible-text.ts), a name is capped with a
// mark and its line breaks shown as `\n`, and each value is isolated from the page's own sentences (`<bdi>`).
// The redirect host has its own labelled field, apart from the name. No script runs on these pages.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { visibleText } from '../core/text/visible-text.js';

const STYLE = `
:root{color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5}
body{margin:0;padding:1rem;display:flex;justify-content:center}
main{width:100%;max-width:28rem}
h1{font-size:1.4rem;margin:.5rem 0 1rem}
p{margin:.5rem 0;font-size:1.05rem}
.who{font-weight:600;word-break:break-word;unicode-bidi:isolate}
.host{font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere;unicode-bidi:isolate}
.esc{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;font-weight:400;background:#fff1c2;color:#5c3b00;border:1px solid #d9b54a;border-radius:3px;padding:0 2px}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:1rem 0}
dl.fields dt{font-weight:600}
dl.fields dd{margin:0;overflow-wrap:anywhere}
.warn{border-left:4px solid #b26b00;padding:.25rem .75rem;margin:1rem 0}
.err{border-left:4px solid #c62828;padding:.25rem .75rem;margin:1rem 0;font-weight:600}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=password]{box-sizing:border-box;width:100%;font-size:1.15rem;padding:.65rem;border-radius:.4rem;border:1px solid #888}
.row{display:flex;gap:.75rem;margin-top:1rem;flex-wrap:wrap}
button{font-size:1.05rem;padding:.65rem 1.25rem;border-radius:.4rem;border:1px solid #888;min-height:2.75rem;cursor:pointer}
button.primary{background:#1f6feb;color:#fff;border-color:#1f6feb}
small{color:GrayText}
.code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:2rem;font-weight:600;letter-spacing:.15em}
`;

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** The most of each kind of value shown (a longer one shows its start and its end around a count). */
export const SHOWN = { who: 100, host: 300, said: 2000 } as const;

/**
 * A value from a client, as HTML: escaped, with what could hide or reorder text drawn as marks (`\u202E`,
 * `\n ×40`, the cut), isolated in a `<bdi>` of the given class.
 */
export function shownHtml(text: string, cls: keyof typeof SHOWN): string {
  const parts = visibleText(text, { mode: 'line', max: SHOWN[cls] }).parts.map((p) =>
    p.mark ? `<span class="esc">${escapeHtml(p.text)}</span>` : escapeHtml(p.text),
  );
  return `<bdi class="${cls}">${parts.join('')}</bdi>`;
}

export interface Page {
  html: string;
  /** Where the form may send the browser, besides this page: the redirect target (Chromium applies
   *  form-action to the redirect that follows a submission). */
  formTargets?: string[];
}

function layout(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">${head}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

export interface AuthorizeView {
  clientName: string;
  clientId: string;
  /** What the operator should recognise: `localhost:33418`, `claude.ai`, `cursor://…`. */
  redirectHost: string;
  /** The CSRF handle that names this pending request (hidden field). */
  handle: string;
  /** Shown above the form, announced to screen readers. */
  message?: string;
  /** For a client identified by a metadata document: the host that served it (the only verified identity). */
  documentHost?: string;
  /** The operator's console is on: offer to approve there instead of typing the password. */
  consoleOn?: boolean;
}

/** The sign-in's two names, each in its own labelled field: who asks, and where the browser goes after. */
function signInFields(v: { clientName: string; redirectHost: string; documentHost?: string }): string {
  const document = v.documentHost
    ? `\n<dt>Identified by</dt><dd>its metadata document at ${shownHtml(v.documentHost, 'host')}</dd>`
    : '';
  return `<dl class="fields">
<dt>Application</dt><dd>${shownHtml(v.clientName, 'who')}</dd>${document}
<dt>Redirect host</dt><dd>${shownHtml(v.redirectHost, 'host')}</dd>
</dl>`;
}

export function authorizePage(v: AuthorizeView, formTargets: string[]): Page {
  const msgId = 'form-message';
  const message = v.message ? `<p class="err" id="${msgId}" role="alert">${escapeHtml(v.message)}</p>` : '';
  const described = v.message ? ` aria-describedby="${msgId}" aria-invalid="true"` : '';
  const body = `<h1>Authorize access to this workspace</h1>
<p>An application wants to connect to this workbench-mcp server. It will be able to read and change files and
run commands in the workspace. After you approve, your browser goes back to its redirect host.</p>
${signInFields(v)}
<p class="warn">Only continue if you started this connection yourself and you recognise the redirect host.</p>
${message}
<form method="post" autocomplete="off">
<input type="hidden" name="request" value="${escapeHtml(v.handle)}">
<label for="password">Server password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus${described}>
<div class="row">
<button class="primary" type="submit" name="action" value="approve">Authorize</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button>
</div>${
    v.consoleOn
      ? `
<p>No password at hand? The operator can approve this sign-in in the server's console.</p>
<div class="row"><button type="submit" name="action" value="console" formnovalidate>Approve from the console</button></div>`
      : ''
  }
</form>
<p><small>Client id: ${shownHtml(v.clientId, 'host')}</small></p>`;
  return { html: layout('Authorize access — workbench-mcp', body), formTargets };
}

/** Waiting for the operator's console (oauth/grants/console-signin.ts): the pairing code, refreshed until decided. */
export function pairingPage(v: {
  clientName: string;
  redirectHost: string;
  code: string;
  waitUrl: string;
}): Page {
  const body = `<h1>Waiting for the operator</h1>
<p>Ask the operator to approve this sign-in in the workbench-mcp console and to type this pairing code there:</p>
<p class="code" aria-label="Pairing code">${escapeHtml(v.code)}</p>
${signInFields(v)}
<p>Once approved, your browser goes back to the redirect host. This page checks again every few seconds.</p>
<p><a href="${escapeHtml(v.waitUrl)}">Check now</a></p>`;
  const refresh = `\n<meta http-equiv="refresh" content="3;url=${escapeHtml(v.waitUrl)}">`;
  return { html: layout('Waiting for the operator — workbench-mcp', body, refresh) };
}

export function errorPage(code: string, description: string): Page {
  const body = `<h1>Authorization failed</h1>
<p class="err" role="alert">${shownHtml(description, 'said')}</p>
<p>Go back to the application you were connecting and start the connection again.</p>
<p><small>Error code: <span class="host">${escapeHtml(code)}</span></small></p>`;
  return { html: layout('Authorization failed — workbench-mcp', body) };
}

/** CSP source expression for a redirect target: its origin (http/https) or its scheme (private-use). */
function sourceFor(uri: string): string | undefined {
  try {
    const u = new URL(uri);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
    return u.protocol; // e.g. `cursor:`
  } catch {
    return undefined;
  }
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  page: Page,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const targets = (page.formTargets ?? []).map(sourceFor).filter((s): s is string => !!s);
  const csp = [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    "base-uri 'none'",
    `form-action 'self'${targets.length ? ' ' + [...new Set(targets)].join(' ') : ''}`,
    "frame-ancestors 'none'",
  ].join('; ');
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(page.html),
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
    ...extra,
  });
  res.end(page.html);
}
