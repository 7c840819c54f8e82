// JSON-RPC 2.0 message parsing. Returns a value, never throws. Batches are rejected
// (docs/http.md#order-of-checks, docs/http.md#other-routes), and so is a message nesting deeper or holding
// more values than json-shape.ts allows, before it is parsed (parsing it would hold the event loop).
import { INVALID_REQUEST, PARSE_ERROR, ProtocolError, type JsonRpcId } from './errors.js';
import { jsonShape, MAX_JSON_DEPTH, MAX_JSON_VALUES } from './json-shape.js';

export interface Request {
  kind: 'request';
  id: string | number;
  method: string;
  params: Record<string, unknown> | undefined;
}
export interface Notification {
  kind: 'notification';
  method: string;
  params: Record<string, unknown> | undefined;
}
/** A response posted by the client (we never send requests, so it is acknowledged and dropped). */
export interface ClientResponse {
  kind: 'response';
}
export type Message = Request | Notification | ClientResponse;

export type ParseResult = { ok: true; msg: Message } | { ok: false; id: JsonRpcId; error: ProtocolError };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How messages arrive, so that errors speak of what the client sent: a POST body, or a line on stdin. */
export type Framing = 'http' | 'stdio';

const WORDS: Record<Framing, { unit: string; batch: string }> = {
  http: { unit: 'the body', batch: 'send one message per POST' },
  stdio: { unit: 'the line', batch: 'send one message per line' },
};

export function parseMessage(text: string, framing: Framing = 'http'): ParseResult {
  const shape = jsonShape(text);
  if (!shape.ok) return { ok: false, id: null, error: tooComplex(shape.reason, framing) };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    const msg = `Parse error: ${WORDS[framing].unit} is not valid JSON`;
    return { ok: false, id: null, error: new ProtocolError(PARSE_ERROR, msg, 400) };
  }
  return classifyValue(v, framing);
}

function tooComplex(reason: 'depth' | 'values', framing: Framing): ProtocolError {
  const unit = WORDS[framing].unit;
  const msg =
    reason === 'depth'
      ? `Invalid Request: ${unit} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; ` +
        'no tool takes arguments nested that deep: send them flat'
      : `Invalid Request: ${unit} holds more than ${MAX_JSON_VALUES} JSON values; ` +
        "send large content as one string argument (e.g. a patch or a file's text), not as arrays or objects";
  return new ProtocolError(INVALID_REQUEST, msg, 400, {
    reason: reason === 'depth' ? 'too_deep' : 'too_many_values',
    max: reason === 'depth' ? MAX_JSON_DEPTH : MAX_JSON_VALUES,
  });
}

export function classifyValue(v: unknown, framing: Framing = 'http'): ParseResult {
  const w = WORDS[framing];
  if (Array.isArray(v)) {
    const msg = `Invalid Request: JSON-RPC batches are not supported; ${w.batch}`;
    return { ok: false, id: null, error: new ProtocolError(INVALID_REQUEST, msg, 400) };
  }
  if (!isObject(v)) {
    const msg = `Invalid Request: ${w.unit} must be a JSON-RPC object`;
    return { ok: false, id: null, error: new ProtocolError(INVALID_REQUEST, msg, 400) };
  }
  const rawId = v.id;
  const id: JsonRpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  const invalid = (why: string) => ({
    ok: false as const,
    id,
    error: new ProtocolError(INVALID_REQUEST, `Invalid Request: ${why}`, 400),
  });
  if (v.jsonrpc !== '2.0') return invalid('"jsonrpc" must be "2.0"');
  if (v.method === undefined && ('result' in v || 'error' in v))
    return { ok: true, msg: { kind: 'response' } };
  if (typeof v.method !== 'string' || v.method === '') return invalid('"method" must be a non-empty string');
  if (v.params !== undefined && !isObject(v.params)) return invalid('"params" must be an object');
  const params = v.params as Record<string, unknown> | undefined;
  if (!('id' in v)) return { ok: true, msg: { kind: 'notification', method: v.method, params } };
  if (id === null) return invalid('"id" must be a string or a number');
  return { ok: true, msg: { kind: 'request', id, method: v.method, params } };
}
