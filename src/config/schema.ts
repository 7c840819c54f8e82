// Every SERVICE_* variable, once: its flag twin (if it may appear on a command line — secrets never do), its
// type, default and one line of documentation. load.ts validates against this table and the configuration
// table of docs/configuration.md is generated from it (`workbench-mcp --print-config-table`, describe.ts). The
// type of the parsed settings is read from it in settings.ts.

export type Kind =
  | { type: 'string' }
  | { type: 'path' }
  | { type: 'url' }
  | { type: 'int'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'list' }
  | { type: 'hex'; minBytes: number };

export interface Entry {
  /** Key in Config. */
  key: string;
  /** Variable name without the SERVICE_ prefix. */
  env: string;
  /** Command-line flag, absent for secrets (argv is visible to every local user). */
  flag?: string;
  kind: Kind;
  /** Default shown in docs; `undefined` = unset. */
  default: string | number | boolean | undefined;
  defaultDoc?: string;
  doc: string;
  secret?: boolean;
  /** What the setting accepts, when `describeKind` would say too little (docs and --help only). */
  accepts?: string;
  /** Means something only to the HTTP server: as a flag beside `--stdio` it is an error. */
  httpOnly?: boolean;
}

const int = (min: number, max: number) => ({ type: 'int', min, max }) as const;

/** The table, with every literal kept, so that the settings' type is read from it (settings.ts `Settings`). */
export const TABLE = [
  {
    key: 'workspace',
    env: 'WORKSPACE',
    flag: '--workspace',
    kind: { type: 'path' },
    default: undefined,
    defaultDoc: 'current directory (under `npm start`: where npm was run)',
    doc: 'Directory to serve (not `/`, not the home directory).',
  },
  {
    key: 'projects',
    env: 'PROJECTS',
    flag: '--projects',
    kind: { type: 'string' },
    default: undefined,
    accepts: 'directories separated by `:` (the flag may be repeated)',
    doc: 'Project roots: clients may open any directory strictly inside one as a workspace (`open_workspace`, docs/tools.md#several-workspaces). Without `--workspace` there is then no default workspace.',
  },
  {
    key: 'host',
    env: 'HOST',
    flag: '--host',
    kind: { type: 'string' },
    default: '127.0.0.1',
    doc: 'Address to bind. A non-loopback bind needs bearer or OAuth.',
    httpOnly: true,
  },
  {
    key: 'port',
    env: 'PORT',
    flag: '--port',
    kind: int(0, 65535),
    default: 8765,
    doc: 'Port to bind; `0` picks a free port.',
    httpOnly: true,
  },
  {
    key: 'permissionMode',
    env: 'PERMISSION_MODE',
    flag: '--permission-mode',
    kind: { type: 'enum', values: ['safe', 'trusted', 'dangerous'] },
    default: 'safe',
    doc: 'Command policy: `safe`, `trusted` or `dangerous` (file tools stay confined in every mode).',
  },
  {
    key: 'authMode',
    env: 'AUTH_MODE',
    flag: '--auth-mode',
    kind: { type: 'enum', values: ['bearer', 'oauth', 'noauth'] },
    default: 'bearer',
    doc: 'How HTTP callers authenticate. `noauth` serves loopback callers only.',
    httpOnly: true,
  },
  {
    key: 'authTokens',
    env: 'AUTH_TOKEN',
    kind: { type: 'list' },
    default: undefined,
    defaultDoc: 'generated once per workspace and kept (printed when made)',
    doc: 'Static bearer token(s), comma-separated (several allow rotation without downtime); each at least 16 characters of letters, digits and `-._~+/`.',
    secret: true,
  },
  {
    key: 'authTokenFile',
    env: 'AUTH_TOKEN_FILE',
    flag: '--auth-token-file',
    kind: { type: 'path' },
    default: undefined,
    doc: 'File holding bearer token(s), one per line or comma-separated.',
    httpOnly: true,
  },
  {
    key: 'oauthPassword',
    env: 'OAUTH_PASSWORD',
    kind: { type: 'string' },
    default: undefined,
    defaultDoc: 'generated and printed once',
    doc: 'Password the operator types on the OAuth authorization page.',
    secret: true,
  },
  {
    key: 'oauthTokenSecret',
    env: 'OAUTH_TOKEN_SECRET',
    kind: { type: 'hex', minBytes: 32 },
    default: undefined,
    defaultDoc: 'generated once and kept (per process with `SERVICE_STATE_DIR=off`)',
    doc: 'HS256 signing key for access tokens, hex, at least 32 bytes.',
    secret: true,
  },
  {
    key: 'oauthTokenTtl',
    env: 'OAUTH_TOKEN_TTL',
    flag: '--oauth-token-ttl',
    kind: int(60, 31_536_000),
    default: 86400,
    doc: 'Access token lifetime in seconds.',
    httpOnly: true,
  },
  {
    key: 'oauthClientId',
    env: 'OAUTH_CLIENT_ID',
    flag: '--oauth-client-id',
    kind: { type: 'string' },
    default: undefined,
    doc: 'Pre-registered OAuth client id (dynamic registration stays on).',
    httpOnly: true,
  },
  {
    key: 'oauthRedirectUris',
    env: 'OAUTH_REDIRECT_URIS',
    flag: '--oauth-redirect-uris',
    kind: { type: 'list' },
    default: undefined,
    doc: 'Redirect URIs of the pre-registered client, comma-separated.',
    httpOnly: true,
  },
  {
    key: 'oauthClientSecret',
    env: 'OAUTH_CLIENT_SECRET',
    kind: { type: 'string' },
    default: undefined,
    doc: 'Secret of the pre-registered client (makes it confidential).',
    secret: true,
  },
  {
    key: 'oauthClientMetadataDocuments',
    env: 'OAUTH_CLIENT_METADATA_DOCUMENTS',
    flag: '--oauth-client-metadata-documents',
    kind: { type: 'bool' },
    default: true,
    doc: "`0`: neither accept nor advertise Client ID Metadata Documents (https client_id URLs); clients register instead. For servers that cannot reach the clients' document hosts.",
    httpOnly: true,
  },
  {
    key: 'serverUrl',
    env: 'SERVER_URL',
    flag: '--server-url',
    kind: { type: 'url' },
    default: undefined,
    doc: 'Stable public origin without `/mcp`; pins issuer, audience and metadata URLs.',
    httpOnly: true,
  },
  {
    key: 'trustProxyHeaders',
    env: 'TRUST_PROXY_HEADERS',
    flag: '--trust-proxy-headers',
    kind: { type: 'bool' },
    default: false,
    doc: '`1`: take the public origin from `Forwarded`/`X-Forwarded-*` (only behind your own proxy). Never relaxes auth.',
    httpOnly: true,
  },
  {
    key: 'allowedOrigins',
    env: 'ALLOWED_ORIGINS',
    flag: '--allowed-origins',
    kind: { type: 'list' },
    default: undefined,
    defaultDoc: 'loopback only',
    doc: 'Exact browser origins allowed besides loopback, comma-separated.',
    httpOnly: true,
  },
  {
    key: 'externalAuthProxy',
    env: 'EXTERNAL_AUTH_PROXY',
    flag: '--external-auth-proxy',
    kind: { type: 'bool' },
    default: false,
    doc: '`1`: `noauth` sits behind a proxy that authenticates every request, so forwarded requests are served.',
    httpOnly: true,
  },
  {
    key: 'dangerouslyFakeReadonlyAnnotations',
    env: 'DANGEROUSLY_FAKE_READONLY_ANNOTATIONS',
    flag: '--dangerously-fake-readonly-annotations',
    kind: { type: 'bool' },
    default: false,
    doc: '`1`: `tools/list` reports every tool read-only (for clients that refuse writers). Needs auth over HTTP.',
  },
  {
    key: 'enableViewImage',
    env: 'ENABLE_VIEW_IMAGE',
    flag: '--enable-view-image',
    kind: { type: 'bool' },
    default: true,
    doc: '`0` removes `view_image` from the catalog.',
  },
  {
    key: 'maxRequestBytes',
    env: 'MAX_REQUEST_BYTES',
    flag: '--max-request-bytes',
    kind: int(1024, 1 << 30),
    default: 4_194_304,
    doc: 'Largest accepted POST body in bytes.',
    httpOnly: true,
  },
  {
    key: 'execMaxActive',
    env: 'EXEC_MAX_ACTIVE',
    flag: '--exec-max-active',
    kind: int(1, 1024),
    default: 16,
    doc: 'Commands running at once.',
  },
  {
    key: 'execMaxProcesses',
    env: 'EXEC_MAX_PROCESSES',
    flag: '--exec-max-processes',
    kind: int(16, 1 << 20),
    default: 1024,
    doc: 'Processes one command tree may have at once (a pids cgroup where the host allows one, else a watchdog).',
  },
  {
    key: 'execMaxRetained',
    env: 'EXEC_MAX_RETAINED',
    flag: '--exec-max-retained',
    kind: int(0, 4096),
    default: 32,
    doc: 'Finished commands kept for polling.',
  },
  {
    key: 'execRetentionS',
    env: 'EXEC_RETENTION_S',
    flag: '--exec-retention-s',
    kind: int(1, 86400 * 7),
    default: 900,
    doc: 'Seconds a finished command stays readable.',
  },
  {
    key: 'execStreamBufferBytes',
    env: 'EXEC_STREAM_BUFFER_BYTES',
    flag: '--exec-stream-buffer-bytes',
    kind: int(65536 * 2, 1 << 30),
    default: 524_288,
    doc: 'Output retained per stream (first 64 KiB + most recent rest).',
  },
  {
    key: 'execTotalBufferBytes',
    env: 'EXEC_TOTAL_BUFFER_BYTES',
    flag: '--exec-total-buffer-bytes',
    kind: int(1 << 20, 2 ** 31),
    default: 16_777_216,
    doc: 'Output retained over all commands.',
  },
  {
    key: 'sandbox',
    env: 'SANDBOX',
    flag: '--sandbox',
    kind: { type: 'enum', values: ['auto', 'bwrap', 'landlock', 'off'] },
    default: 'auto',
    doc: '`auto`: bubblewrap when usable, else the Landlock helper when built and usable; `bwrap` or `landlock`: that one, required; `off`.',
  },
  {
    key: 'readAllow',
    env: 'READ_ALLOW',
    flag: '--read-allow',
    kind: { type: 'string' },
    default: undefined,
    accepts: 'absolute paths separated by `:`',
    doc: '`safe`: more of the host commands may read (read-only), beside the system, the install prefixes of PATH and the workspace (docs/security-model.md#what-a-command-sees).',
  },
  {
    key: 'networkAllow',
    env: 'NETWORK_ALLOW',
    flag: '--network-allow',
    kind: { type: 'list' },
    default: undefined,
    defaultDoc: 'the package registries (docs/tools.md)',
    accepts: 'host patterns, comma-separated (`example.com`, `*.example.com`, `*`)',
    doc: '`safe`: more hosts commands may reach over HTTP(S) through the filtering proxy, besides the default package registries.',
  },
  {
    key: 'networkDeny',
    env: 'NETWORK_DENY',
    flag: '--network-deny',
    kind: { type: 'list' },
    default: undefined,
    accepts: 'host patterns, comma-separated',
    doc: '`safe`: hosts the proxy refuses even when allowed or granted (`*` turns the network off).',
  },
  {
    key: 'networkAllowPrivate',
    env: 'NETWORK_ALLOW_PRIVATE',
    flag: '--network-allow-private',
    kind: { type: 'list' },
    default: undefined,
    accepts: 'host names, IPs or CIDRs, comma-separated',
    doc:
      '`safe` and `trusted`: allowed hosts that may resolve to loopback, private or link-local addresses (refused ' +
      'otherwise). Addresses compare as numbers, in any spelling; an IPv4 entry also covers the IPv6 forms that ' +
      'carry it (`127.0.0.0/8` covers `::ffff:127.0.0.1`).',
  },
  {
    key: 'runtimeRoot',
    env: 'RUNTIME_ROOT',
    flag: '--runtime-root',
    kind: { type: 'path' },
    default: undefined,
    defaultDoc: '/run as root, else $XDG_RUNTIME_DIR, else the system temp dir',
    doc: 'Parent of `workbench-mcp/`, the per-instance HOME/TMPDIR/cache (outside the workspace; must be ours, not writable by others).',
  },
  {
    key: 'stateDir',
    env: 'STATE_DIR',
    flag: '--state-dir',
    kind: { type: 'path' },
    accepts: 'a path, or `off`',
    default: undefined,
    defaultDoc: '`$XDG_STATE_HOME/workbench-mcp`, else `~/.local/state/workbench-mcp`',
    doc: 'Where a generated bearer token, the OAuth signing key and OAuth grants are kept across restarts: a subdirectory per workspace (mode 0700, files 0600) that must be ours and writable by no one else. `off` keeps nothing: new credentials on every start.',
    httpOnly: true,
  },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    flag: '--log-level',
    kind: { type: 'enum', values: ['debug', 'info', 'warn', 'error'] },
    default: 'info',
    doc: 'stderr log level.',
  },
  {
    key: 'console',
    env: 'CONSOLE',
    flag: '--console',
    kind: { type: 'bool' },
    default: true,
    doc: "`0` turns off the operator's console (a page on its own loopback port, opened with the one-time link the banner prints).",
    httpOnly: true,
  },
  {
    key: 'consolePort',
    env: 'CONSOLE_PORT',
    flag: '--console-port',
    kind: int(0, 65535),
    default: 0,
    doc: "Loopback port of the operator's console; `0` picks a free port. Never the `/mcp` port.",
    httpOnly: true,
  },
  {
    key: 'auditLog',
    env: 'AUDIT_LOG',
    flag: '--audit-log',
    kind: { type: 'path' },
    default: undefined,
    doc: 'JSON-lines file recording every tool call (who, what, result).',
  },
] as const satisfies readonly Entry[];

export const ENTRIES: readonly Entry[] = TABLE;

export const PREFIX = 'SERVICE_';
