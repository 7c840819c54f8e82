// Who is calling, as far as tools and the audit log are concerned. Handlers may log it; they never branch on
// the transport that produced it.
export interface Principal {
  kind: 'bearer' | 'oauth' | 'noauth' | 'stdio' | 'server' | 'operator';
  /** A non-secret label: token index, OAuth client id, "stdio", … */
  id: string;
  /** What a person reads (the operator's console): an OAuth client's name, when it gave one. */
  label?: string;
}

export const STDIO_PRINCIPAL: Principal = { kind: 'stdio', id: 'stdio' };

/** The server itself, warming the command path once after start (cli/serve.ts); never a client. */
export const SERVER_PRINCIPAL: Principal = { kind: 'server', id: 'rehearsal' };

/** The operator acting from the console (docs/console.md): a revert of an edit, a kill. */
export const OPERATOR_PRINCIPAL: Principal = { kind: 'operator', id: 'console' };
