// What the server advertises and calls, built from one summary per tool (docs/tools.md#the-tools, in its
// order): names, the real annotations, the tools/list payload, and each tool's definition for tools/call.
// Permission modes never change it; SERVICE_ENABLE_VIEW_IMAGE=0 removes view_image. The definitions (zod
// schemas, handlers, and through them patch/, git/, process/ …) come from `load`, called on first use: a
// summary is plain data, so the bundled bin answers initialize and tools/list without loading them
// (docs/architecture.md). This module must stay free of zod and of the tool modules.
import type { AnyToolDef, ToolAnnotations } from './define.js';
import { CARD_TOOLS, CARD_URI } from './apps.js';

/** One tool as tools/list describes it, with its real annotations. */
export interface ToolSummary {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  /** What the tool's definition adds to `_meta` (an app-only tool's `ui.visibility`). */
  _meta?: Record<string, unknown>;
  /** `workspace`: the tool acts on one workspace (tools/define.ts). */
  scope?: 'workspace';
}

export interface CatalogOptions {
  enableViewImage: boolean;
  fakeReadonly: boolean;
  /** Project roots are configured: open_workspace and close_workspace are listed and the tools acting on a
   *  workspace take an optional `workspace` (docs/tools.md#several-workspaces). Otherwise both are absent. */
  workspaces?: boolean;
  /** Code the server would otherwise load on first use, loaded with the tools (lazy-catalog.ts). */
  alsoLoad?: () => Promise<unknown>;
}

/** What tools/call needs of a tool: its definition, whose `call` checks the arguments (INVALID_ARGUMENT) and runs it. */
export type ToolEntry = AnyToolDef;

export interface Catalog {
  /** The tools' names, in the contract's order. */
  names: readonly string[];
  /** The `tools` array of tools/list, as sent. */
  listPayload: ReadonlyArray<Record<string, unknown>>;
  /**
   * The `tools` array for a client that declared the UI extension (tools/apps.ts): the same tools, those with a
   * card carrying `_meta.ui.resourceUri`, then the app-only tools (docs/review-card.md#who-sees-it).
   */
  uiListPayload: ReadonlyArray<Record<string, unknown>>;
  /** The real annotations, whatever tools/list says (server card, server_info). */
  realAnnotations: ReadonlyMap<string, ToolAnnotations>;
  /**
   * A tool of this catalog (its definitions are loaded on first use), or undefined for an unknown name; the
   * app-only tools are known only to a client that declared the UI extension (`ui`).
   */
  lookup(name: string, ui?: boolean): Promise<ToolEntry | undefined>;
  /** Loads the definitions now, so that the first tools/call does not wait for them. */
  preload(): Promise<void>;
}

const FAKE_READONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/**
 * Every tool states readOnlyHint, destructiveHint and openWorldHint, true or false: the MCP defaults of a
 * missing hint (not read-only, destructive, open world) are wrong for most of these tools, and clients and
 * app directories treat a tool without all three as a write that needs confirmation or refuse it
 * (docs/tools.md#annotations). idempotentHint is stated only on a writing tool where it is true: its default
 * is false, and for a read-only tool it means nothing (MCP tool annotations). The title is the tool's `title`.
 */
function advertised(a: ToolAnnotations): Partial<ToolAnnotations> {
  return {
    readOnlyHint: a.readOnlyHint,
    destructiveHint: a.destructiveHint,
    ...(a.idempotentHint && !a.readOnlyHint ? { idempotentHint: true } : {}),
    openWorldHint: a.openWorldHint,
  };
}

/** Listed only when project roots are configured. */
export const WORKSPACE_TOOLS: ReadonlySet<string> = new Set(['open_workspace', 'close_workspace']);

/** The argument the dispatcher takes off a call and resolves (protocol/call-tool.ts). */
export const WORKSPACE_ARG = 'workspace';

/** An input schema with the optional `workspace` id added (a copy; the summary stays as built). */
function withWorkspace(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  return {
    ...schema,
    properties: {
      ...props,
      // Its meaning is said once, in open_workspace's description: the catalog stays under 24 KB.
      [WORKSPACE_ARG]: { type: 'string' },
    },
  };
}

/** server_info's output schema with its `workspaces` section (present only with project roots). */
function withWorkspaces(schema: Record<string, unknown>): Record<string, unknown> {
  const [success, ...rest] = schema.anyOf as Array<Record<string, unknown>>;
  const props = (success?.properties ?? {}) as Record<string, unknown>;
  return {
    ...schema,
    anyOf: [{ ...success, properties: { ...props, workspaces: { type: 'object' } } }, ...rest],
  };
}

/**
 * A catalog of `summaries` (and the app-only `appSummaries`) whose entries `load` gives (by name; names not shown
 * here are ignored).
 */
export function catalogOf(
  summaries: readonly ToolSummary[],
  opts: CatalogOptions,
  load: () => Promise<ReadonlyMap<string, ToolEntry>>,
  appSummaries: readonly ToolSummary[] = [],
): Catalog {
  const shown = summaries.filter(
    (t) =>
      (opts.enableViewImage || t.name !== 'view_image') && (opts.workspaces || !WORKSPACE_TOOLS.has(t.name)),
  );
  const names = shown.map((t) => t.name);
  const known = new Set(names);
  const appKnown = new Set(appSummaries.map((t) => t.name));
  const listPayload = shown.map((t) => listed(t, opts));
  const uiListPayload = [
    ...listPayload.map((t) => (CARD_TOOLS.has(t.name) ? withUi(t, {}) : t)),
    ...appSummaries.map((t) => withUi(listed(t, opts), { visibility: ['app'] })),
  ];
  let entries: Promise<ReadonlyMap<string, ToolEntry>> | undefined;
  const loaded = () =>
    (entries ??= load().catch((e: unknown) => {
      entries = undefined;
      throw new Error(
        `cannot load the tools (${String((e as Error)?.message ?? e)}); the installation is incomplete or ` +
          'damaged: reinstall workbench-mcp (or run `npm run build` in a checkout)',
      );
    }));
  return {
    names,
    listPayload,
    uiListPayload,
    realAnnotations: new Map(shown.map((t) => [t.name, t.annotations])),
    lookup: async (name, ui = false) =>
      known.has(name) || (ui && appKnown.has(name)) ? (await loaded()).get(name) : undefined,
    preload: async () => void (await loaded()),
  };
}

/** One tool as tools/list sends it. */
function listed(t: ToolSummary, opts: CatalogOptions): Record<string, unknown> & { name: string } {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: opts.workspaces && t.scope ? withWorkspace(t.inputSchema) : t.inputSchema,
    outputSchema:
      opts.workspaces && t.name === 'server_info' ? withWorkspaces(t.outputSchema) : t.outputSchema,
    annotations: opts.fakeReadonly
      ? { ...FAKE_READONLY, openWorldHint: t.annotations.openWorldHint }
      : advertised(t.annotations),
    ...(t._meta ? { _meta: t._meta } : {}),
  };
}

/** The tool with `_meta.ui` naming the card (and `more`, e.g. an app-only tool's visibility), its own `_meta` kept. */
function withUi(t: Record<string, unknown>, more: Record<string, unknown>): Record<string, unknown> {
  const meta = (t._meta ?? {}) as Record<string, unknown>;
  const ui = (meta.ui ?? {}) as Record<string, unknown>;
  return { ...t, _meta: { ...meta, ui: { resourceUri: CARD_URI, ...more, ...ui } } };
}
