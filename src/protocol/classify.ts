// Era classification and the 2026-07-28 envelope and mirror-header checks (docs/http.md#order-of-checks,
// steps 4–6). Pure: takes the parsed message and a header view (null on stdio, which has no headers) and
// returns the era or the rejection, never throws.
import {
  HEADER_MISMATCH,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  ProtocolError,
  UNSUPPORTED_PROTOCOL_VERSION,
} from './errors.js';
import type { Notification, Request } from './jsonrpc.js';
import {
  HANDSHAKE_VERSIONS,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  MODERN_METHODS,
  MODERN_VERSIONS,
  SUPPORTED_VERSIONS,
} from '../core/versions.js';

/** Distinct values of a header (lower-case name); undefined when absent. */
export type HeaderView = (name: string) => readonly string[] | undefined;

export type Era = 'handshake' | 'modern';
export type Classified =
  | { ok: true; era: Era; version?: string; clientCapabilities?: Record<string, unknown> }
  | { ok: false; error: ProtocolError };

/** Methods whose Mcp-Name header mirrors a body field. */
const NAME_SOURCE: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

const bad = (code: number, message: string, status = 400, data?: unknown): Classified => ({
  ok: false,
  error: new ProtocolError(code, message, status, data),
});

/** `=?base64?…?=` encodes a non-ASCII Mcp-Name (SEP-2243). */
export function decodeHeaderValue(v: string): string | undefined {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(v);
  if (!m) return v;
  const b = Buffer.from(m[1] as string, 'base64');
  if (b.toString('base64').replace(/=+$/, '') !== (m[1] as string).replace(/=+$/, '')) return undefined;
  return b.toString('utf8');
}

function mirror(headers: HeaderView, name: string, expected: string, required: boolean): string | undefined {
  const vals = headers(name);
  if (!vals || vals.length === 0)
    return required ? `missing ${name} header (must be ${JSON.stringify(expected)})` : undefined;
  if (vals.length > 1) return `${name} header sent more than once`;
  const decoded = decodeHeaderValue(vals[0] as string);
  if (decoded !== expected)
    return `${name} header ${JSON.stringify(vals[0])} does not match the body (${JSON.stringify(expected)})`;
  return undefined;
}

function classifyModern(
  msg: Request | Notification,
  meta: Record<string, unknown>,
  headers: HeaderView | null,
): Classified {
  const version = meta[META_PROTOCOL_VERSION];
  if (typeof version !== 'string')
    return bad(INVALID_PARAMS, `Invalid params: _meta["${META_PROTOCOL_VERSION}"] must be a string`);
  const caps = meta[META_CLIENT_CAPABILITIES];
  if (typeof caps !== 'object' || caps === null || Array.isArray(caps)) {
    return bad(
      INVALID_PARAMS,
      `Invalid params: _meta["${META_CLIENT_CAPABILITIES}"] must be an object (it may be empty)`,
    );
  }
  // The header contradicting the body is -32020 even when the body's version is one we do not speak
  // (docs/design-notes.md#stateless-era-order, as the conformance suite's server-stateless scenario checks).
  if (headers) {
    const problem = mirror(headers, 'mcp-protocol-version', version, false);
    if (problem) return bad(HEADER_MISMATCH, `Header mismatch: ${problem}`);
  }
  if (!MODERN_VERSIONS.includes(version)) {
    return bad(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version ${JSON.stringify(version)}`, 400, {
      supported: SUPPORTED_VERSIONS,
      requested: version,
    });
  }
  if (headers) {
    const isRequest = msg.kind === 'request';
    const problem =
      mirror(headers, 'mcp-protocol-version', version, isRequest) ??
      mirror(headers, 'mcp-method', msg.method, isRequest) ??
      (NAME_SOURCE[msg.method] !== undefined
        ? mirror(
            headers,
            'mcp-name',
            String(msg.params?.[NAME_SOURCE[msg.method] as string] ?? ''),
            isRequest,
          )
        : undefined);
    if (problem) return bad(HEADER_MISMATCH, `Header mismatch: ${problem}`);
  }
  return { ok: true, era: 'modern', version, clientCapabilities: caps as Record<string, unknown> };
}

export function classify(msg: Request | Notification, headers: HeaderView | null): Classified {
  const meta = msg.params?._meta;
  const hasEnvelope =
    msg.method !== 'initialize' && typeof meta === 'object' && meta !== null && META_PROTOCOL_VERSION in meta;
  if (hasEnvelope) return classifyModern(msg, meta as Record<string, unknown>, headers);
  if (headers) {
    const vals = headers('mcp-protocol-version');
    if (vals && vals.length > 0) {
      if (vals.length > 1)
        return bad(INVALID_REQUEST, 'Invalid Request: MCP-Protocol-Version header sent more than once');
      const v = vals[0] as string;
      if (MODERN_VERSIONS.includes(v)) return modernHeaderWithoutMeta(msg, v);
      if (!HANDSHAKE_VERSIONS.includes(v)) {
        return bad(
          INVALID_REQUEST,
          `Invalid Request: unsupported MCP-Protocol-Version ${JSON.stringify(v)}; supported: ${SUPPORTED_VERSIONS.join(', ')}`,
          400,
          {
            supported: SUPPORTED_VERSIONS,
            requested: v,
          },
        );
      }
    }
  }
  return { ok: true, era: 'handshake' };
}

/**
 * A 2026-07-28 header on a body without the era's `_meta` (docs/design-notes.md#stateless-era-order, the
 * conformance suite's server-stateless scenario): a method that does not exist in that era (`initialize`,
 * `ping`, …) is 404/-32601; any other request lacks its required `_meta` params, 400/-32602.
 */
function modernHeaderWithoutMeta(msg: Request | Notification, v: string): Classified {
  if (msg.kind === 'request' && !MODERN_METHODS.has(msg.method) && !(msg.method in NAME_SOURCE)) {
    const why =
      msg.method === 'initialize' || msg.method === 'ping'
        ? `${msg.method} does not exist in protocol ${v}; use server/discover`
        : `Method not found: ${msg.method}`;
    return bad(METHOD_NOT_FOUND, why, 404);
  }
  return bad(
    INVALID_PARAMS,
    `Invalid params: MCP-Protocol-Version ${v} needs params._meta["${META_PROTOCOL_VERSION}"] and ` +
      `params._meta["${META_CLIENT_CAPABILITIES}"] in the body`,
  );
}
