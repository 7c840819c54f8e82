// Protocol versions we speak. The handshake era negotiates with initialize; 2026-07-28 names its version in
// every request's _meta (docs/http.md#eras).
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];
export const HANDSHAKE_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18'];
export const DEFAULT_HANDSHAKE_VERSION = '2025-11-25';
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...HANDSHAKE_VERSIONS];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** docs/design-notes.md#cache-hints */
export const TOOLS_LIST_TTL_MS = 300_000;
export const DISCOVER_TTL_MS = 60_000;

/** Request methods that exist in the 2026-07-28 era (notifications aside). */
export const MODERN_METHODS: ReadonlySet<string> = new Set(['server/discover', 'tools/list', 'tools/call']);
