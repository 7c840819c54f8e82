// Who is calling, as far as tools and the audit log are concerned. Handlers may log it; they never branch on
// the transport that produced it.
export interface Principal {
  kind: 'bearer' | 'oauth' | 'noauth' | 'stdio' | 'server';
  /** A non-secret label: token index, OAuth client id, "stdio", … */
  id: string;
}

export const STDIO_PRINCIPAL: Principal = { kind: 'stdio', id: 'stdio' };

/** The server itself, warming the command path once after start (cli/main.ts); never a client. */
export const SERVER_PRINCIPAL: Principal = { kind: 'server', id: 'rehearsal' };
