// How the CLI refuses to start: one line on stderr naming the setting and what to do, exit status 2.

export function fail(message: string): never {
  process.stderr.write(`workbench-mcp: ${message}\n`);
  process.exit(2);
}
