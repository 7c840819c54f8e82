// The block `workbench-mcp tunnel` prints once the public URL answers (docs/remote-access.md): the URL, the
// header or the OAuth password, ready-to-paste settings for each client people use, and a QR code of the URL
// when stdout is a terminal. A secret is shown only when it was made now (docs/design-notes.md#secrets-at-start):
// a kept token is named by the command that prints it — in shell snippets as `$(… token show)`, so they still
// paste — and a configured one by its variable.
import { commandLine } from '../self.js';

export interface BlockInfo {
  /** `https://<host>/mcp`. */
  url: string;
  describe: string;
  workspace: string;
  /** The server's loopback port (for the doctor hint). */
  port: number;
  authMode: 'bearer' | 'oauth';
  /** The bearer token to show (made now), or undefined when it is kept or configured (never printed). */
  token?: string;
  /** The command that prints the kept token, when the token is kept for the workspace. */
  keptShow?: string;
  /** The token was made for this run only (nothing is kept). */
  forRun?: boolean;
  /** How this program is run here (cli/self.ts), and the arguments naming the workspace. */
  self: string;
  scope: readonly string[];
  /** The OAuth password to show, or undefined when configured. */
  password?: string;
  /** Rendered QR code lines, or undefined (not a terminal, or no encoder). */
  qr?: string;
}

const NAME = 'workbench';

function clientRows(i: BlockInfo): Array<[string, string]> {
  const u = i.url;
  if (i.authMode === 'oauth') {
    return [
      ['claude.ai', 'Settings → Connectors → Add custom connector → paste the URL'],
      ['ChatGPT', 'Settings → Apps & Connectors → Advanced → Developer mode → Create → the URL, OAuth'],
      ['Claude Code', `claude mcp add --transport http ${NAME} ${u}   (then /mcp → Authenticate)`],
      ['Codex', `codex mcp add ${NAME} --url ${u} && codex mcp login ${NAME}`],
      ['Cursor', `~/.cursor/mcp.json: {"mcpServers":{"${NAME}":{"url":"${u}"}}}`],
      ['VS Code', `.vscode/mcp.json: {"servers":{"${NAME}":{"type":"http","url":"${u}"}}}`],
      ['Gemini CLI', `gemini mcp add -s user -t http ${NAME} ${u}   (then /mcp auth ${NAME})`],
    ];
  }
  // In a shell line: the token itself, or the command that prints the kept one; in a JSON file: a placeholder.
  const sh = i.token ?? (i.keptShow ? `$(${i.keptShow})` : '<your SERVICE_AUTH_TOKEN>');
  const t = i.token ?? (i.keptShow ? '<the kept token>' : '<your SERVICE_AUTH_TOKEN>');
  const h = `Authorization: Bearer ${sh}`;
  return [
    ['claude.ai, ChatGPT', 'these sign in with OAuth only: run the tunnel with --auth-mode oauth'],
    ['Claude Code', `claude mcp add --transport http ${NAME} ${u} --header "${h}"`],
    [
      'Codex',
      `export WORKBENCH_TOKEN="${sh}"; codex mcp add ${NAME} --url ${u} --bearer-token-env-var WORKBENCH_TOKEN`,
    ],
    [
      'Cursor',
      `~/.cursor/mcp.json: {"mcpServers":{"${NAME}":{"url":"${u}","headers":{"Authorization":"Bearer ${t}"}}}}`,
    ],
    [
      'VS Code',
      `.vscode/mcp.json: {"servers":{"${NAME}":{"type":"http","url":"${u}","headers":{"Authorization":"Bearer ${t}"}}}}`,
    ],
    ['Gemini CLI', `gemini mcp add -s user -t http -H "${h}" ${NAME} ${u}`],
  ];
}

export function renderBlock(i: BlockInfo): string {
  const rule = '─'.repeat(78);
  const out = [rule, `workbench-mcp is reachable from anywhere through ${i.describe}.`, ''];
  out.push(`  URL        ${i.url}`);
  if (i.authMode === 'oauth') {
    out.push(
      i.password
        ? `  Password   ${i.password}   (generated for this run; type it on the authorization page)`
        : '  Password   the one in SERVICE_OAUTH_PASSWORD (type it on the authorization page)',
    );
  } else if (i.token && i.forRun) {
    out.push(
      `  Header     Authorization: Bearer ${i.token}   (generated for this run; set SERVICE_AUTH_TOKEN to keep one)`,
    );
  } else if (i.token) {
    out.push(
      `  Header     Authorization: Bearer ${i.token}   (generated and kept for this workspace; later runs reuse it, and \`token show\` prints it again)`,
    );
  } else if (i.keptShow) {
    out.push(
      `  Header     Authorization: Bearer <the token kept for this workspace; show it: ${i.keptShow}>`,
    );
  } else {
    out.push('  Header     Authorization: Bearer <your SERVICE_AUTH_TOKEN>');
  }
  out.push(`  Workspace  ${i.workspace}`, '', 'Client settings, ready to paste:');
  const rows = clientRows(i);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  for (const [k, v] of rows) out.push(`  ${k.padEnd(width)}${v}`);
  if (i.qr) out.push('', 'The URL as a QR code (for a phone):', i.qr.replace(/\n+$/, ''));
  // doctor finds a kept token itself (same workspace); a token for this run or a password it must be given.
  const env =
    i.authMode === 'bearer' && i.token && i.forRun
      ? `SERVICE_AUTH_TOKEN='${i.token}' `
      : i.password
        ? `SERVICE_OAUTH_PASSWORD='${i.password}' `
        : '';
  const doctor = commandLine(i.self, ['doctor', i.url, '--port', String(i.port), ...i.scope]);
  out.push('', `Check it any time: ${env}${doctor}`, 'Ctrl-C stops the tunnel and the server.', rule, '');
  return out.join('\n');
}

/**
 * The URL as a QR code in Unicode half blocks (`uqr`, a dependency-free encoder of 80 kB), loaded only when a
 * terminal will show it.
 */
export async function qrCode(url: string): Promise<string> {
  const { renderUnicodeCompact } = await import('uqr');
  return renderUnicodeCompact(url, { border: 2 });
}
