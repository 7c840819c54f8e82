// --help text. The configuration table itself lives in config/schema.ts.
import { ENTRIES, PREFIX } from '../config/schema.js';

export function helpText(version: string): string {
  const flags = ENTRIES.filter((e) => e.flag).map(
    (e) => `  ${(e.flag as string).padEnd(42)} ${PREFIX}${e.env}`,
  );
  return `workbench-mcp ${version} — an MCP server for one local code workspace

Usage:
  workbench-mcp [options]            serve the workspace over HTTP (POST /mcp)
  workbench-mcp --stdio [options]    serve over stdin/stdout (newline-delimited JSON-RPC)

Options (each also settable by its variable; a flag wins over its variable):
${flags.join('\n')}
  --stdio                                    serve on stdin/stdout instead of HTTP
  --help, --version

Secrets are never taken from the command line: set ${PREFIX}AUTH_TOKEN (or ${PREFIX}AUTH_TOKEN_FILE),
${PREFIX}OAUTH_PASSWORD, ${PREFIX}OAUTH_TOKEN_SECRET and ${PREFIX}OAUTH_CLIENT_SECRET in the environment.
Without a token, bearer mode generates one and prints it once on stderr.
`;
}
