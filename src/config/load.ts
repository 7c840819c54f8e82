// The only reader of process.env and argv. load() returns a frozen Config or a ConfigError whose message is
// the one line the CLI prints before exiting 2. Secrets come only from the environment or a file.
import { readFileSync } from 'node:fs';
import { PAUSE_POINTS } from '../core/pause.js';
import { ENTRIES, PREFIX, describeKind, type Entry } from './schema.js';

export type PermissionMode = 'safe' | 'trusted' | 'dangerous';
export type AuthMode = 'bearer' | 'oauth' | 'noauth';
export type SandboxMode = 'auto' | 'bwrap' | 'off';

export interface Config {
  workspace: string;
  host: string;
  port: number;
  stdio: boolean;
  permissionMode: PermissionMode;
  authMode: AuthMode;
  authTokens: readonly string[];
  authTokenFile?: string;
  oauthPassword?: string;
  oauthTokenSecret?: string;
  oauthTokenTtl: number;
  oauthClientId?: string;
  oauthRedirectUris: readonly string[];
  oauthClientSecret?: string;
  serverUrl?: string;
  trustProxyHeaders: boolean;
  allowedOrigins: readonly string[];
  externalAuthProxy: boolean;
  dangerouslyFakeReadonlyAnnotations: boolean;
  enableViewImage: boolean;
  maxRequestBytes: number;
  execMaxActive: number;
  execMaxProcesses: number;
  execMaxRetained: number;
  execRetentionS: number;
  execStreamBufferBytes: number;
  execTotalBufferBytes: number;
  sandbox: SandboxMode;
  runtimeRoot?: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  auditLog?: string;
  /** Snapshot of the server's environment; process/ filters it for children. */
  env: Readonly<Record<string, string>>;
  /** Test-only pause points (core/pause.ts), from WB_TEST_PAUSE; not a SERVICE_* setting, never documented. */
  testPause?: TestPause;
  /** Test-only (decisions.md 42): WB_TEST_CIMD_ALLOW_LOOPBACK=1 lets Client ID Metadata Documents be fetched from
   *  loopback addresses, so tests can serve them locally. Not a SERVICE_* setting, never documented for users. */
  testCimdAllowLoopback?: boolean;
  oauthClientMetadataDocuments: boolean;
}

export interface TestPause {
  points: readonly string[];
  /** WB_TEST_PAUSE_RESUME: a file whose appearance resumes a paused process. */
  resumeFile?: string;
}

export type CliAction =
  { kind: 'serve'; config: Config } | { kind: 'help' } | { kind: 'version' } | { kind: 'print-config-table' };

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const BOOL_TRUE = new Set(['1', 'true']);
const BOOL_FALSE = new Set(['0', 'false']);

function parseValue(e: Entry, raw: string, source: string): unknown {
  const bad = () => new ConfigError(`${source} must be ${describeKind(e.kind)} (got ${JSON.stringify(raw)})`);
  const k = e.kind;
  switch (k.type) {
    case 'int': {
      if (!/^\d+$/.test(raw.trim())) throw bad();
      const n = Number(raw.trim());
      if (n < k.min || n > k.max) throw bad();
      return n;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (BOOL_TRUE.has(v)) return true;
      if (BOOL_FALSE.has(v)) return false;
      throw bad();
    }
    case 'enum':
      if (!k.values.includes(raw.trim())) throw bad();
      return raw.trim();
    case 'list':
      return raw
        .split(/[,\n]/)
        .map((s) => s.trim())
        .filter(Boolean);
    case 'hex': {
      const v = raw.trim();
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(v) || v.length / 2 < k.minBytes) {
        throw new ConfigError(`${source} must be ${describeKind(k)} (got ${(v.length / 2) | 0} bytes)`);
      }
      return v.toLowerCase();
    }
    case 'url': {
      let u: URL;
      try {
        u = new URL(raw.trim());
      } catch {
        throw bad();
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad();
      return u.origin + u.pathname.replace(/\/+$/, '');
    }
    default:
      if (raw.length === 0) throw new ConfigError(`${source} must not be empty`);
      return raw;
  }
}

/** `--name value`, `--name=value`; a bare boolean flag means true. */
function parseArgv(argv: readonly string[]): { flags: Map<string, string>; stdio: boolean; words: string[] } {
  const flags = new Map<string, string>();
  const words: string[] = [];
  let stdio = false;
  const byFlag = new Map(ENTRIES.filter((e) => e.flag).map((e) => [e.flag as string, e]));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('--')) {
      words.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (name === '--stdio') {
      stdio = eq >= 0 ? BOOL_TRUE.has(a.slice(eq + 1)) : true;
      continue;
    }
    if (name === '--help' || name === '--version' || name === '--print-config-table') {
      flags.set(name, '1');
      continue;
    }
    const entry = byFlag.get(name);
    if (!entry) {
      const secret = ENTRIES.find((e) => e.secret && name === '--' + e.env.toLowerCase().replace(/_/g, '-'));
      if (secret) {
        throw new ConfigError(
          `${name} is not accepted on the command line (argv is visible to other users); set ${PREFIX}${secret.env} in the environment instead`,
        );
      }
      throw new ConfigError(`unknown option ${name} (see --help)`);
    }
    if (eq >= 0) flags.set(name, a.slice(eq + 1));
    else if (
      entry.kind.type === 'bool' &&
      (argv[i + 1] === undefined ||
        (argv[i + 1] as string).startsWith('--') ||
        !/^(1|0|true|false)$/i.test(argv[i + 1] as string))
    )
      flags.set(name, '1');
    else {
      const v = argv[i + 1];
      if (v === undefined) throw new ConfigError(`${name} needs a value (${describeKind(entry.kind)})`);
      flags.set(name, v);
      i++;
    }
  }
  return { flags, stdio, words };
}

export function load(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
): CliAction {
  const { flags, stdio, words } = parseArgv(argv);
  if (flags.has('--help')) return { kind: 'help' };
  if (flags.has('--version')) return { kind: 'version' };
  if (flags.has('--print-config-table')) return { kind: 'print-config-table' };
  if (words.length > 0) throw new ConfigError(`unknown command ${JSON.stringify(words[0])} (see --help)`);

  const out: Record<string, unknown> = {};
  for (const e of ENTRIES) {
    const fromFlag = e.flag ? flags.get(e.flag) : undefined;
    const fromEnv = env[PREFIX + e.env];
    if (fromFlag !== undefined) out[e.key] = parseValue(e, fromFlag, e.flag as string);
    else if (fromEnv !== undefined && fromEnv !== '') out[e.key] = parseValue(e, fromEnv, PREFIX + e.env);
    else out[e.key] = e.kind.type === 'list' ? [] : e.default;
  }
  // Under `npm --prefix <checkout> start`, npm changes into the checkout; INIT_CWD is where the user ran it.
  out.workspace ??= env.npm_lifecycle_event === 'start' && env.INIT_CWD ? env.INIT_CWD : cwd;
  out.stdio = stdio;

  if (typeof out.authTokenFile === 'string') {
    let text: string;
    try {
      text = readFileSync(out.authTokenFile, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `${PREFIX}AUTH_TOKEN_FILE cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): ${out.authTokenFile}`,
      );
    }
    const fileTokens = text
      .split(/[,\n\r]/)
      .map((s) => s.trim())
      .filter(Boolean);
    if (fileTokens.length === 0)
      throw new ConfigError(`${PREFIX}AUTH_TOKEN_FILE holds no token: ${out.authTokenFile}`);
    out.authTokens = [...(out.authTokens as string[]), ...fileTokens];
  }
  for (const t of out.authTokens as string[]) {
    if (t.length < 16)
      throw new ConfigError(`${PREFIX}AUTH_TOKEN: every token must be at least 16 characters`);
    // RFC 6750 b64token: anything else could never arrive in an Authorization header intact.
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(t)) {
      throw new ConfigError(
        `${PREFIX}AUTH_TOKEN: tokens may contain only letters, digits and - . _ ~ + / (then = padding)`,
      );
    }
  }
  const snapshot: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string') snapshot[k] = v;
  out.env = Object.freeze(snapshot);
  out.testPause = testPause(env);
  if (env.WB_TEST_CIMD_ALLOW_LOOPBACK === '1') out.testCimdAllowLoopback = true;
  return { kind: 'serve', config: Object.freeze(out) as unknown as Config };
}

/** WB_TEST_PAUSE=<point>[,<point>...] (decisions.md 41): undefined unless set; an unknown point is an error. */
export function testPause(env: Record<string, string | undefined>): TestPause | undefined {
  const raw = env.WB_TEST_PAUSE;
  if (!raw) return undefined;
  const points = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const known: readonly string[] = PAUSE_POINTS;
  const unknown = points.find((p) => !known.includes(p));
  if (unknown !== undefined)
    throw new ConfigError(`WB_TEST_PAUSE: unknown pause point ${unknown} (known: ${known.join(', ')})`);
  return Object.freeze({ points: Object.freeze(points), resumeFile: env.WB_TEST_PAUSE_RESUME || undefined });
}
