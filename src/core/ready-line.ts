// The line the HTTP server prints on stderr once it accepts requests (docs/configuration.md), and the one
// reader of it that tests and benchmarks share (bench/ loads it from dist/, since bench/ must not import
// test/): what a supervisor waits for before it connects.

/** `workbench-mcp listening on http://HOST:PORT/mcp` and its newline; an IPv6 host is in brackets. */
export function readyLine(host: string, port: number): string {
  return `workbench-mcp listening on http://${host}:${port}/mcp\n`;
}

export interface ReadyLine {
  /** `http://HOST:PORT/mcp` */
  url: string;
  /** `http://HOST:PORT` */
  base: string;
  /** The host as printed, without the brackets of an IPv6 address. */
  host: string;
  port: number;
}

/** The ready line as a pattern; groups: 1 `http://HOST:PORT`, 2 the host as printed, 3 the port. */
export const READY_LINE = /workbench-mcp listening on (http:\/\/([^\s/[\]]+|\[[^\]\s]+\]):(\d+))\/mcp\n/;

/** The ready line in `stderr` so far, once it has arrived whole; undefined before. */
export function parseReadyLine(stderr: string): ReadyLine | undefined {
  const m = READY_LINE.exec(stderr);
  if (!m) return undefined;
  const base = m[1] as string;
  return { url: `${base}/mcp`, base, host: (m[2] as string).replace(/^\[|\]$/g, ''), port: Number(m[3]) };
}
