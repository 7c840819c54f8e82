// One stateless dispatcher for both eras and both transports. Given a parsed, classified message it returns
// the HTTP status and the JSON body to send (null body = 202 for notifications). No per-client state exists:
// initialize is optional and idempotent, and every request is answered by the runtime that owns the
// workspace (docs/design-notes.md#one-workspace-one-runtime, docs/http.md#eras).
import type { Principal } from '../core/principal.js';
import type { ProtocolHost } from './host.js';
import { callTool } from './call-tool.js';
import { errorBody, INTERNAL_ERROR, METHOD_NOT_FOUND, ProtocolError } from './errors.js';
import { UiClients } from './ui-clients.js';
import { listResources, readResource } from './ui-resources.js';
import { APP_MIME_TYPE, declaresUi, UI_EXTENSION } from '../tools/apps.js';
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
/** For a client that declared MCP Apps (docs/review-card.md#who-sees-it): the extension and its resources. */
const UI_CAPABILITIES = {
  ...CAPABILITIES,
  resources: { listChanged: false },
  extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } },
};

const HANDSHAKE_METHODS = new Set(['initialize', 'ping', 'tools/list', 'tools/call']);
/** Methods that exist only for a client that declared MCP Apps. */
const UI_METHODS = new Set(['resources/list', 'resources/read']);

export class Dispatcher {
  /** tools/list responses as bytes around the id: [`{"jsonrpc":"2.0","id":`, `,"result":…}`]. */
  private toolsListBytes: Partial<Record<`${Era}:${boolean}`, [Buffer, Buffer]>> = {};
  private readonly uiClients = new UiClients();

  constructor(private readonly runtime: ProtocolHost) {}

  async handle(
    msg: Message,
    cls: Classified & { ok: true },
    principal: Principal,
    signal: AbortSignal,
  ): Promise<Reply> {
    if (msg.kind !== 'request') return ACCEPTED; // notifications (incl. cancelled, which stops nothing) and responses
    const { era } = cls;
    const ui = msg.method !== 'initialize' && this.uiClients.has(cls, principal);
    const unknown = unknownMethod(msg.method, era, ui);
    if (unknown) return this.error(msg, unknown);
    try {
      switch (msg.method) {
        case 'initialize':
          this.hello(msg, era, principal);
          return this.ok(
            msg,
            era,
            this.initialize(msg, this.uiClients.remember(principal, msg.params?.capabilities)),
          );
        case 'ping':
          return this.ok(msg, era, {});
        case 'server/discover':
          this.hello(msg, era, principal);
          return this.ok(msg, era, this.discover(declaresUi(cls.clientCapabilities)));
        case 'tools/list': {
          const [head, tail] = this.toolsList(era, ui);
          return { status: 200, body: Buffer.concat([head, Buffer.from(JSON.stringify(msg.id)), tail]) };
        }
        case 'resources/list':
          return this.ok(msg, era, listResources());
        case 'resources/read':
          return this.ok(msg, era, readResource(msg.params));
        case 'tools/call': {
          const canAsk = era === 'modern' && isObject(cls.clientCapabilities?.elicitation);
          const end = this.runtime.quiet?.begin();
          const result = await callTool(this.runtime, msg.params, principal, signal, { canAsk, ui }).finally(
            end,
          );
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

  private initialize(msg: Request, ui: boolean): Record<string, unknown> {
    const requested = msg.params?.protocolVersion;
    const protocolVersion =
      typeof requested === 'string' && HANDSHAKE_VERSIONS.includes(requested)
        ? requested
        : DEFAULT_HANDSHAKE_VERSION;
    const result: Record<string, unknown> = {
      protocolVersion,
      capabilities: ui ? UI_CAPABILITIES : CAPABILITIES,
      serverInfo: SERVER_INFO,
    };
    const instructions = this.runtime.instructions.text();
    if (instructions) result.instructions = instructions;
    return result;
  }

  private discover(ui: boolean): Record<string, unknown> {
    const result: Record<string, unknown> = {
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: ui ? UI_CAPABILITIES : CAPABILITIES,
      ttlMs: DISCOVER_TTL_MS,
      cacheScope: 'private',
    };
    const instructions = this.runtime.instructions.text();
    if (instructions) result.instructions = instructions;
    return result;
  }

  /**
   * The tools/list response, serialised once per era and kind of client (the catalog never changes at run time):
   * a client that declared MCP Apps sees the card's `_meta.ui` and the app-only tools.
   */
  private toolsList(era: Era, ui: boolean): [Buffer, Buffer] {
    let bytes = this.toolsListBytes[`${era}:${ui}`];
    if (bytes === undefined) {
      const catalog = this.runtime.catalog;
      const result: Record<string, unknown> = { tools: ui ? catalog.uiListPayload : catalog.listPayload };
      if (era === 'modern')
        Object.assign(result, modernFields(), { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'private' });
      bytes = [Buffer.from('{"jsonrpc":"2.0","id":'), Buffer.from(`,"result":${JSON.stringify(result)}}`)];
      this.toolsListBytes[`${era}:${ui}`] = bytes;
    }
    return bytes;
  }

  private ok(msg: Request, era: Era, result: Record<string, unknown>): Reply {
    const r = era === 'modern' ? withModernFields(result) : result;
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

/** The error for a method this era (and this client: `ui`, it declared MCP Apps) does not have, else undefined. */
function unknownMethod(method: string, era: Era, ui: boolean): ProtocolError | undefined {
  const known = era === 'modern' ? MODERN_METHODS : HANDSHAKE_METHODS;
  if (known.has(method) || (ui && UI_METHODS.has(method))) return undefined;
  const why =
    era === 'modern' && (method === 'ping' || method === 'initialize')
      ? `${method} does not exist in protocol 2026-07-28; use server/discover`
      : `Method not found: ${method}`;
  return new ProtocolError(METHOD_NOT_FOUND, why, era === 'modern' ? 404 : 200);
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The result with the era's fields, its own `_meta` (a tool's data for the host) kept beside the server's. */
function withModernFields(result: Record<string, unknown>): Record<string, unknown> {
  const fields = modernFields();
  const own = result._meta;
  if (isObject(own)) fields._meta = { ...(own as Record<string, unknown>), ...(fields._meta as object) };
  return { ...result, ...fields };
}

function modernFields(): Record<string, unknown> {
  return { resultType: 'complete', _meta: { [META_SERVER_INFO]: SERVER_INFO } };
}
