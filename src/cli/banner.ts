// What the server writes on stderr at start, besides log lines: the bearer token or OAuth password when it
// was made for this run (docs/design-notes.md#secrets-at-start: once, directly, never through the logger), where a
// kept token lives and how to show it, and the workspace with the commands to check it and to publish it —
// each printed as the user can run it (self.ts).
import path from 'node:path';
import type { Config } from '../config/load.js';
import { commandLine } from './self.js';
import { PROVIDER_IDS } from './tunnel/provider.js';

/**
 * The arguments a subcommand (`doctor`, `token`, `tunnel`) needs to find the same workspace and state
 * directory: `--workspace` unless it is where the user is, `--state-dir` when a flag chose it.
 */
export function scopeArgs(c: Config, o: { stateDir?: boolean } = {}): string[] {
  const out: string[] = [];
  if (c.sources.workspace === '--workspace' || path.resolve(c.workspace) !== path.resolve(c.userCwd))
    out.push('--workspace', path.resolve(c.workspace));
  if (o.stateDir && c.sources.stateDir === '--state-dir' && c.stateDir)
    out.push('--state-dir', c.stateDir.dir);
  return out;
}

export type TokenNews =
  | { kind: 'kept'; token: string; created: true; file: string }
  | { kind: 'kept'; created: false; file: string }
  | { kind: 'run'; token: string; why?: string };

/** The bearer-token banner (the token itself only when it was made now). */
export function tokenBanner(n: TokenNews, c: Config, self: string): string {
  const scope = scopeArgs(c, { stateDir: true });
  const show = commandLine(self, ['token', 'show', ...scope]);
  if (n.kind === 'kept' && !n.created)
    return `workbench-mcp: bearer token: the one kept for this workspace in ${n.file} (show it: ${show})\n`;
  if (n.kind === 'kept')
    return (
      `workbench-mcp: no SERVICE_AUTH_TOKEN set; generated a bearer token and kept it for this workspace (the show command below prints it again):\n\n    ${n.token}\n\n` +
      `  Send it as "Authorization: Bearer <token>". Later starts reuse it, so clients stay configured.\n` +
      `  Kept in ${n.file}\n` +
      `  show it: ${show}\n  replace it: ${commandLine(self, ['token', 'rotate', ...scope])}\n`
    );
  return (
    `workbench-mcp: no SERVICE_AUTH_TOKEN set; generated a bearer token for this run (shown once):\n\n    ${n.token}\n\n` +
    `  Send it as "Authorization: Bearer <token>". Set SERVICE_AUTH_TOKEN or SERVICE_AUTH_TOKEN_FILE to keep one` +
    (n.why ? ` (nothing is kept: ${n.why}).\n` : '.\n')
  );
}

export function passwordBanner(password: string): string {
  return (
    `workbench-mcp: no SERVICE_OAUTH_PASSWORD set; generated an OAuth password for this run (shown once):\n\n    ${password}\n\n` +
    `  Type it on the authorization page when a client connects. Set SERVICE_OAUTH_PASSWORD to keep one.\n`
  );
}

const DEFAULT_PORT = 8765;

/** The line naming the workspace, then how to check the server and how to publish it. */
export function servingBanner(c: Config, self: string, port: number, workspace: string): string {
  const scope = scopeArgs(c, { stateDir: true });
  const doctor = ['doctor'];
  if (port !== DEFAULT_PORT) doctor.push('--port', String(port));
  if (c.host !== '127.0.0.1') doctor.push('--host', c.host);
  const lines = [`workbench-mcp: serving ${workspace} (permission mode ${c.permissionMode})`];
  lines.push(`  check it:                ${commandLine(self, [...doctor, ...scope])}`);
  if (c.authMode === 'noauth') {
    lines.push(
      '  noauth answers callers on this machine only; to publish it, restart with --auth-mode bearer or oauth and use the tunnel command',
    );
  } else if (c.underTunnel) {
    lines.push(
      '  reach it from anywhere:  through the tunnel starting now (its address follows once it answers)',
    );
  } else lines.push(...tunnelLines(c, self, scope));
  return lines.join('\n') + '\n';
}

/**
 * How to publish it: stop this server, then one full command per provider, each pasteable as printed (no
 * `a|b|c` a shell would read as a pipe). devtunnel needs a fixed port, so it is not offered after --port 0.
 */
function tunnelLines(c: Config, self: string, scope: string[]): string[] {
  const args = c.port === DEFAULT_PORT ? [...scope] : ['--port', String(c.port), ...scope];
  if (c.authMode === 'oauth') args.push('--auth-mode', 'oauth');
  if (c.permissionMode !== 'safe') args.push('--permission-mode', c.permissionMode);
  const providers = PROVIDER_IDS.filter((p) => p !== 'devtunnel' || c.port !== 0);
  return [
    '  reach it from anywhere:  stop this server, then run one of:',
    ...providers.map((p) => `${TUNNEL_INDENT}${commandLine(self, ['tunnel', p, ...args])}`),
  ];
}

/** The indent of each tunnel command under "reach it from anywhere:". */
export const TUNNEL_INDENT = ' '.repeat(27);

/** The one warning line of `--permission-mode dangerous`. */
export const DANGEROUS_WARNING =
  'permission mode dangerous: commands run with all of your rights, with no sandbox and no refusals (they can read, change or delete anything you can and reach any network); file tools stay confined to the workspace';
