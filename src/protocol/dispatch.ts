// One stateless dispatcher for both eras and both transports. Given a parsed, classified message it returns
// the HTTP status and the JSON body to send (null body = 202 for notifications). No per-client state exists:
// initialize is optional and idempotent, and every request is answered by the runtime that owns the
// workspace (docs/design-notes.md#one-workspace-one-runtime, docs/http.md#eras).
import type { Principal } from '../core/principal.js';
import type { ProtocolHost } from './host.js';
import { callTool } from './call-tool.js';
import { errorBody, INTERNAL_ERROR, METHOD_NOT_FOUND, ProtocolError } from './errors.js';
import type { Classified, Era } from './classify.js';
import type { Message, Request } from './jsonrpc.js';
import {
  DEFAULT_HANDSHAKE_VERSION,
  DISCOVER_TTL_MS,
  HANDSHAKE_VERSIONS,
  META_SERVER_INFO,
  MODERN_METHODS,
  SUPPORTED_VERSIONS,
  TOOLS_LIST_TTL_MS,
} from '../core/versions.js';
import { SERVER_NAME, SERVER_TITLE, SERVER_VERSION } from '../core/version.js';

export interface Reply {
  status: number;
  /** JSON text (or its bytes), or null for 202 Accepted with an empty body. */
  body: string | Buffer | null;
  /** For the metrics: a JSON-RPC error (`rpc_error`), a tool's error code, `input_required`; absent: ok. */
  outcome?: string;
}

const ACCEPTED: Reply = { status: 202, body: null };
const SERVER_INFO = { name: SERVER_NAME, title: SERVER_TITLE, version: SERVER_VERSION };
const CAPABILITIES = { tools: { listChanged: false } };

const HANDSHAKE_METHODS = new Set(['initialize', 'ping', 'tools/list', 'tools/call']);

export class Dispatcher {
  /** tools/list responses as bytes around the id: [`{"jsonrpc":"2.0","id":`, `,"result":…}`]. */
  private toolsListBytes: Partial<Record<Era, [Buffer, Buffer]>> = {};

  constructor(private readonly runtime: ProtocolHost) {}

  async handle(
    msg: Message,
    cls: Classified & { ok: true },
    principal: Principal,
    signal: AbortSignal,
  ): Promise<Reply> {
    if (msg.kind !== 'request') return ACCEPTED; // notifications (incl. cancelled, which stops nothing) and responses
    const { era } = cls;
    const known = era === 'modern' ? MODERN_METHODS : HANDSHAKE_METHODS;
    if (!known.has(msg.method)) {
      const why =
        era === 'modern' && (msg.method === 'ping' || msg.method === 'initialize')
          ? `${msg.method} does not exist in protocol 2026-07-28; use server/discover`
          : `Method not found: ${msg.method}`;
      return this.error(msg, new ProtocolError(METHOD_NOT_FOUND, why, era === 'modern' ? 404 : 200));
    }
    try {
      switch (msg.method) {
        case 'initialize':
          this.hello(msg, era, principal);
          return this.ok(msg, era, this.initialize(msg));
        case 'ping':
          return this.ok(msg, era, {});
        case 'server/discover':
          this.hello(msg, era, principal);
          return this.ok(msg, era, this.discover());
        case 'tools/list': {
          const [head, tail] = this.toolsList(era);
          return { status: 200, body: Buffer.concat([head, Buffer.from(JSON.stringify(msg.id)), tail]) };
        }
        case 'tools/call': {
          const canAsk = era === 'modern' && isObject(cls.clientCapabilities?.elicitation);
          const result = await callTool(this.runtime, msg.params, principal, signal, canAsk);
          if ('inputRequired' in result) return this.inputRequired(msg, result.inputRequired);
          const reply = this.ok(msg, era, result);
          if (result.isError) reply.outcome = (result.structuredContent.error as { code: string }).code;
          return reply;
        }
      }
    } catch (e) {
      if (e instanceof ProtocolError) return this.error(msg, e);
      this.runtime.log.error('request failed', {
        method: msg.method,
        error: String((e as Error)?.stack ?? e),
      });
      return this.error(
        msg,
        new ProtocolError(INTERNAL_ERROR, 'Internal error; the failure was logged on the server'),
      );
    }
    return this.error(msg, new ProtocolError(METHOD_NOT_FOUND, `Method not found: ${msg.method}`, 200));
  }

  /** A client that only connects still shows in the console's activity (docs/console.md#what-it-shows). */
  private hello(msg: Request, era: Era, principal: Principal): void {
    const activity = this.runtime.activity;
    if (!activity) return;
    const info = msg.params?.clientInfo;
    const text = (k: string) => {
      const v = isObject(info) ? (info as Record<string, unknown>)[k] : undefined;
      return typeof v === 'string' && v ? { [k]: v.slice(0, 100) } : {};
    };
    activity.publish({
      kind: 'connected',
      time: this.runtime.clock.now(),
      client: principal.label ?? `${principal.kind}:${principal.id}`,
      era: era === 'modern' ? '2026-07-28' : 'handshake',
      ...text('name'),
      ...text('version'),
    });
  }

  private initialize(msg: Request): Record<string, unknown> {
    const requested = msg.params?.protocolVersion;
    const protocolVersion =
      typeof requested === 'string' && HANDSHAKE_VERSIONS.includes(requested)
        ? requested
        : DEFAULT_HANDSHAKE_VERSION;
    const result: Record<string, unknown> = {
      protocolVersion,
      capabilities: CAPABILITIES,
      serverInfo: SERVER_INFO,
    };
    const instructions = this.runtime.instructions.text();
    if (instructions) result.instructions = instructions;
    return result;
  }

  private discover(): Record<string, unknown> {
    const result: Record<string, unknown> = {
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: CAPABILITIES,
      ttlMs: DISCOVER_TTL_MS,
      cacheScope: 'private',
    };
    const instructions = this.runtime.instructions.text();
    if (instructions) result.instructions = instructions;
    return result;
  }

  /** The tools/list response, serialised once per era (the catalog never changes at run time). */
  private toolsList(era: Era): [Buffer, Buffer] {
    let bytes = this.toolsListBytes[era];
    if (bytes === undefined) {
      const result: Record<string, unknown> = { tools: this.runtime.catalog.listPayload };
      if (era === 'modern')
        Object.assign(result, modernFields(), { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'private' });
      bytes = [Buffer.from('{"jsonrpc":"2.0","id":'), Buffer.from(`,"result":${JSON.stringify(result)}}`)];
      this.toolsListBytes[era] = bytes;
    }
    return bytes;
  }

  private ok(msg: Request, era: Era, result: Record<string, unknown>): Reply {
    const r = era === 'modern' ? { ...result, ...modernFields() } : result;
    return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: r }) };
  }

  /** docs/design-notes.md#permission-grants: a refusal the user may lift, asked through the client (2026-07-28 only). */
  private inputRequired(msg: Request, payload: Record<string, unknown> | object): Reply {
    const r = { ...payload, resultType: 'input_required', _meta: { [META_SERVER_INFO]: SERVER_INFO } };
    return {
      status: 200,
      body: JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: r }),
      outcome: 'input_required',
    };
  }

  private error(msg: Request, e: ProtocolError): Reply {
    return { status: e.status, body: errorBody(msg.id, e), outcome: 'rpc_error' };
  }
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function modernFields(): Record<string, unknown> {
  return { resultType: 'complete', _meta: { [META_SERVER_INFO]: SERVER_INFO } };
}
