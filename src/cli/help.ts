// --help text, generated from the configuration schema (config/schema.ts) like docs/configuration.md: each flag
// with its variable, what it accepts, its default and its meaning, so the two can never disagree. The usage
// lines name the program as it can be run here (self.ts).
import { describeKind } from '../config/describe.js';
import { ENTRIES, PREFIX, type Entry } from '../config/schema.js';

const WIDTH = 100;

function wrap(text: string, indent: string): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && indent.length + line.length + 1 + word.length > WIDTH) {
      out.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(indent + line);
  return out.join('\n');
}

const plain = (s: string) => s.replace(/`/g, '');

function defaultText(e: Entry): string {
  if (e.defaultDoc) return plain(e.defaultDoc);
  return e.default === undefined ? 'unset' : String(e.default);
}

function option(e: Entry): string {
  const head = `  ${e.flag} <${plain(e.accepts ?? describeKind(e.kind))}>   (${PREFIX}${e.env}; default: ${defaultText(e)})`;
  return `${head}\n${wrap(plain(e.doc), '      ')}`;
}

export function helpText(version: string, self = 'workbench-mcp'): string {
  const flags = ENTRIES.filter((e) => e.flag).map(option);
  const secrets = ENTRIES.filter((e) => !e.flag).map(
    (e) => `  ${PREFIX}${e.env} (default: ${defaultText(e)})\n${wrap(plain(e.doc), '      ')}`,
  );
  return `workbench-mcp ${version} — an MCP server for one local code workspace

Usage (as installed here, workbench-mcp is: ${self}):
  workbench-mcp [options]            serve the workspace over HTTP (POST /mcp)
  workbench-mcp --stdio [options]    serve over stdin/stdout (newline-delimited JSON-RPC)
  workbench-mcp tunnel cloudflared|ngrok|devtunnel [--wait SECONDS] [options]
                                     publish it through an HTTPS tunnel and print the client settings
  workbench-mcp doctor [URL]         check a running server (local and public), one line per check
  workbench-mcp token show|rotate    the bearer token kept for the workspace across restarts
  workbench-mcp console              a fresh one-time link to the operator's console of the running server

Options (each also settable by its variable; a flag wins over its variable):
${flags.join('\n')}
  --stdio
      Serve on stdin/stdout instead of HTTP (no authentication: the parent process is the client).
  --help, --version

Secrets, never taken from the command line (argv is visible to every local user) — set them in the
environment (or SERVICE_AUTH_TOKEN_FILE):
${secrets.join('\n')}
Without a token, bearer mode generates one, keeps it in the state directory (--state-dir) and prints it
once on stderr; later starts for the same workspace reuse it.
`;
}
