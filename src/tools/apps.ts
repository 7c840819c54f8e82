// MCP Apps (docs/review-card.md): the names a client and the server share when the client declared the UI
// extension, and which tools carry the review card. Plain data, free of zod and of the tool modules, like
// tools/catalog.ts, which builds the catalog such a client sees from it.

/** The extension's id in `capabilities.extensions`. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The MIME type of an MCP App page; a client declares it in the extension's `mimeTypes`. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The review card's resource (src/apps/card/). */
export const CARD_URI = 'ui://workbench/changes.html';
/** The key of a result's `_meta` under which the full patch travels for the host (docs/review-card.md#data). */
export const DIFF_META_KEY = 'io.github.workbench-mcp/diff';
/** The tools whose results the card shows. */
export const CARD_TOOLS: ReadonlySet<string> = new Set(['show_changes', 'apply_patch', 'edit_file']);

/**
 * Whether client capabilities declare the UI extension with the MCP App MIME type: the only clients that see
 * `_meta.ui`, the app-only tools and the `ui://` resources (docs/review-card.md#who-sees-it).
 */
export function declaresUi(capabilities: unknown): boolean {
  const ext = field(field(capabilities, 'extensions'), UI_EXTENSION);
  const types = field(ext, 'mimeTypes');
  return Array.isArray(types) && types.includes(APP_MIME_TYPE);
}

function field(v: unknown, key: string): unknown {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)[key]
    : undefined;
}
