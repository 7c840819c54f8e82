// The closed family of JSON-RPC errors. Each carries the HTTP status it is sent with; the era decides
// (docs/design-notes.md#statuses): transport and envelope rejections keep their 4xx, method-produced errors
// are 200 except an unknown method in the 2026-07-28 era (404).

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** MCP's resources/read of a URI the server does not serve. */
export const RESOURCE_NOT_FOUND = -32002;
/** JSON-RPC's implementation-defined server error: a busy server, a method not allowed on /mcp. */
export const SERVER_ERROR = -32000;
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status: number = 200,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export type JsonRpcId = string | number | null;

export function errorBody(id: JsonRpcId, e: ProtocolError): string {
  const error: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.data !== undefined) error.data = e.data;
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}
