// Minimal raw JSON-RPC over fetch, for tests that check exact statuses and bodies. Real clients (the official
// SDKs) are used in test/e2e; this is for the wire-level rows of the spec's tables.
import { TEST_TOKEN } from './server.js';

export const MODERN = '2026-07-28';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  token: string | null = TEST_TOKEN,
): Promise<RawResponse> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  };
  if (token) h.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: h,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A 2026-07-28 request with the envelope and the mirror headers filled in. */
export function modern(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  extraHeaders: Record<string, string> = {},
) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const headers: Record<string, string> = {
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...extraHeaders,
  };
  if (method === 'tools/call' && typeof params.name === 'string' && !('mcp-name' in extraHeaders))
    headers['mcp-name'] = params.name;
  return post(url, { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }, headers);
}

export function handshake(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return post(url, { jsonrpc: '2.0', id, method, params }, headers);
}

/** Tools whose results are not checked here against their advertised outputSchema (none: every tool is). */
const SCHEMA_CHECK_PENDING = new Set<string>();

type Check = (value: unknown) => { valid: boolean; errorMessage?: string };
const checks = new Map<string, Promise<Map<string, Check>>>();
/** Compiled validators by the catalog's output schemas (their JSON): compiling all of them takes a few hundred
 *  ms of CPU, and the servers a test file starts one after another mostly advertise the same catalog. */
const compiled = new Map<string, Map<string, Check>>();

/** The outputSchema validators of the server at `url` (its own tools/list), compiled as the v1 SDK client
 *  compiles them: once per distinct catalog in this process. */
function outputChecks(url: string): Promise<Map<string, Check>> {
  let p = checks.get(url);
  if (!p) {
    p = (async () => {
      const r = await handshake(url, 1, 'tools/list', {});
      const tools = (r.json?.result?.tools ?? []) as Array<{ name: string; outputSchema?: object }>;
      const withSchema = tools.filter((t) => t.outputSchema);
      const key = JSON.stringify(withSchema.map((t) => [t.name, t.outputSchema]));
      let found = compiled.get(key);
      if (!found) {
        const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/sdk/validation/ajv');
        const ajv = new AjvJsonSchemaValidator();
        found = new Map(
          withSchema.map((t) => [t.name, ajv.getValidator(t.outputSchema as never) as Check] as const),
        );
        compiled.set(key, found);
      }
      return found;
    })();
    checks.set(url, p);
  }
  return p;
}

/**
 * tools/call in the handshake era; returns the CallToolResult. Every result is checked against the
 * outputSchema its tool advertises, as the v1 SDK client checks it
 * (docs/design-notes.md#output-schemas-accept-errors, docs/design-notes.md#lean-results): a field a result
 * leaves out must be optional there, and no field may be `null` unless the schema says so.
 */
export async function callTool(url: string, name: string, args: Record<string, unknown> = {}) {
  const r = await handshake(url, 1, 'tools/call', { name, arguments: args });
  if (r.status !== 200 || !r.json?.result)
    throw new Error(`tools/call ${name} failed: ${r.status} ${r.text}`);
  const result = r.json.result as {
    content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
    structuredContent: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    isError: boolean;
  };
  const check = SCHEMA_CHECK_PENDING.has(name) ? undefined : (await outputChecks(url)).get(name);
  const verdict = check?.(result.structuredContent);
  if (verdict && !verdict.valid)
    throw new Error(
      `${name} result does not match its outputSchema (${verdict.errorMessage}): ${JSON.stringify(result.structuredContent)}`,
    );
  return result;
}

/**
 * What a stdio client of the handshake era writes to list the tools, one JSON message a line: initialize
 * (2025-11-25, as `clientName`), notifications/initialized, then tools/list as request 2.
 */
export function stdioToolsListInput(clientName: string): string {
  return [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: clientName, version: '1' },
      },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
  ]
    .map((m) => JSON.stringify(m) + '\n')
    .join('');
}
