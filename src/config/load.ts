// The only reader of process.env and argv. load() returns a frozen Config or a ConfigError whose message is
// the one line the CLI prints before exiting 2. Secrets come only from the environment or a file.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PAUSE_POINTS } from '../core/pause.js';
import { badEntry, isHostPattern, isPrivateEntry, testResolve } from './network.js';
import { ConfigError, parseArgv, parseValue } from './parse.js';
import { ENTRIES, PREFIX } from './schema.js';
import { isSettings, type Settings } from './settings.js';

export type PermissionMode = Settings['permissionMode'];
export type SandboxMode = Settings['sandbox'];

/** What load() works out beside the settings of the table (config/schema.ts), or reads from elsewhere. */
interface Computed {
  /** The directory to serve: the setting, else where the user ran the command. */
  workspace: string;
  stdio: boolean;
  /** Where credentials are kept across restarts (state/), or undefined with `SERVICE_STATE_DIR=off`. */
  stateDir?: StateDirChoice;
  /** Which flag or variable set each key (`--workspace`, `SERVICE_WORKSPACE`); absent for a default. */
  sources: Readonly<Record<string, string>>;
  /** The directory the user ran the command from (npm's INIT_CWD under `npm start`), for printed hints. */
  userCwd: string;
  /** Snapshot of the server's environment; process/ filters it for children. */
  env: Readonly<Record<string, string>>;
  /** Test-only pause points (core/pause.ts), from WB_TEST_PAUSE; not a SERVICE_* setting, never documented. */
  testPause?: TestPause;
  /** Test-only (docs/design-notes.md#nothing-is-downloaded): WB_TEST_CIMD_ALLOW_LOOPBACK=1 lets Client ID Metadata Documents be fetched from
   *  loopback addresses, so tests can serve them locally. Not a SERVICE_* setting, never documented for users. */
  testCimdAllowLoopback?: boolean;
  /** Test-only (process/commands/registry.ts): WB_TEST_PREPARE_ALONE=1 prepares wb-exec alone for commands without a
   *  sandbox even where a command can be born in its cgroup (the path hosts without thread moves take). */
  testPrepareAlone?: boolean;
  /** Test-only (config/network.ts): WB_TEST_RESOLVE maps host names to addresses for the proxy. Never documented
   *  for users, inert when unset. */
  testResolve?: Readonly<Record<string, readonly string[]>>;
  /** SERVICE_READ_ALLOW as absolute paths (empty: none); optional for configurations made in tests. */
  readAllow?: readonly string[];
  /** SERVICE_PROJECTS/--projects as absolute paths (empty: one workspace only, as before). */
  projectRoots?: readonly string[];
  /** --projects without --workspace: no default workspace; workspace tools need `workspace`. */
  noDefaultWorkspace?: boolean;
  /** Set by `workbench-mcp tunnel` for the server it starts (WB_TUNNEL_CHILD=1, src/cli/tunnel/run.ts): the
   *  banner then says the tunnel publishes it instead of how to start one. Not a SERVICE_* setting. */
  underTunnel?: boolean;
}

/**
 * The server's configuration: every setting of config/schema.ts with the type its kind parses to (one source:
 * the table), and what load() computes. Frozen.
 */
export type Config = Omit<Settings, keyof Computed> & Computed;

/**
 * The root of kept state, `<dir>/<workspace id>/` below it (state/state-dir.ts). `from` names the setting it
 * came from; a default one (`XDG_STATE_HOME`, `HOME`) is used only when its base directory exists.
 */
export interface StateDirChoice {
  dir: string;
  from: string;
  /** Chosen by default rather than by SERVICE_STATE_DIR/--state-dir: an unusable default keeps nothing. */
  isDefault: boolean;
  /** The directory whose existence the default needs (HOME): never created by us. XDG_STATE_HOME is
   *  created when missing, as the XDG base directory spec asks. */
  base?: string;
}

export interface TestPause {
  points: readonly string[];
  /** WB_TEST_PAUSE_RESUME: a file whose appearance resumes a paused process. */
  resumeFile?: string;
}

export type CliAction =
  | { kind: 'serve'; config: Config }
  /** `pathVar`: PATH, to name the program as it can be run here (cli/self.ts). */
  | { kind: 'help'; pathVar?: string }
  | { kind: 'version' }
  | { kind: 'print-config-table' };

export { ConfigError };

export function load(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
): CliAction {
  const { flags, stdio, words } = parseArgv(argv);
  if (flags.has('--help')) return { kind: 'help', pathVar: env.PATH };
  if (flags.has('--version')) return { kind: 'version' };
  if (flags.has('--print-config-table')) return { kind: 'print-config-table' };
  if (words.length > 0) throw new ConfigError(`unknown command ${JSON.stringify(words[0])} (see --help)`);

  const out: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const e of ENTRIES) {
    const fromFlag = e.flag ? flags.get(e.flag) : undefined;
    const fromEnv = env[PREFIX + e.env];
    if (fromFlag !== undefined) {
      out[e.key] = parseValue(e, fromFlag, e.flag as string);
      sources[e.key] = e.flag as string;
    } else if (fromEnv !== undefined && fromEnv !== '') {
      out[e.key] = parseValue(e, fromEnv, PREFIX + e.env);
      sources[e.key] = PREFIX + e.env;
    } else out[e.key] = e.kind.type === 'list' ? [] : e.default;
  }
  if (stdio) {
    // Flags only: a variable may be exported for every run of the shell, a flag was typed for this one.
    const http = ENTRIES.find((e) => e.httpOnly && e.flag && flags.has(e.flag));
    if (http)
      throw new ConfigError(
        `${http.flag} applies to the HTTP server only, and --stdio serves stdin/stdout; drop ${http.flag} or --stdio`,
      );
  }
  if (!isSettings(out)) throw new ConfigError('internal error: a setting did not parse to its type');
  // Under `npm --prefix <checkout> start`, npm changes into the checkout; INIT_CWD is where the user ran it.
  const userCwd = env.npm_lifecycle_event === 'start' && env.INIT_CWD ? env.INIT_CWD : cwd;
  const stateDir = stateDirChoice(out.stateDir, sources.stateDir, env);
  const authTokens = checkedTokens(out, sources);
  const snapshot: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string') snapshot[k] = v;
  const pause = testPause(env);
  const resolve = checkNetwork(out, sources, env);
  const config: Config = {
    ...out,
    readAllow: readAllowPaths(out.readAllow, sources.readAllow),
    ...workspaceOf(out, sources, userCwd),
    stateDir,
    authTokens,
    userCwd,
    stdio,
    sources: Object.freeze(sources),
    env: Object.freeze(snapshot),
    testPause: pause,
    ...(env.WB_TEST_CIMD_ALLOW_LOOPBACK === '1' ? { testCimdAllowLoopback: true } : {}),
    ...(env.WB_TEST_PREPARE_ALONE === '1' ? { testPrepareAlone: true } : {}),
    ...(resolve ? { testResolve: resolve } : {}),
    ...(env.WB_TUNNEL_CHILD === '1' ? { underTunnel: true } : {}),
  };
  return { kind: 'serve', config: Object.freeze(config) };
}

/** The bearer tokens: SERVICE_AUTH_TOKEN's and those of the token file, each checked. */
function checkedTokens(out: Settings, sources: Record<string, string>): readonly string[] {
  const tokenSources: Array<[string, readonly string[]]> = [[`${PREFIX}AUTH_TOKEN`, out.authTokens]];
  let all = out.authTokens;
  if (out.authTokenFile !== undefined) {
    const from = `${sources.authTokenFile} ${out.authTokenFile}`;
    let text: string;
    try {
      text = readFileSync(out.authTokenFile, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `${sources.authTokenFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): ${out.authTokenFile}`,
      );
    }
    const fileTokens = text
      .split(/[,\n\r]/)
      .map((s) => s.trim())
      .filter(Boolean);
    if (fileTokens.length === 0)
      throw new ConfigError(
        `${from} holds no token; put one token of at least 16 characters in it (e.g. openssl rand -hex 32 > FILE)`,
      );
    tokenSources.push([from, fileTokens]);
    all = [...all, ...fileTokens];
  }
  for (const [from, tokens] of tokenSources) {
    for (const t of tokens) {
      if (t.length < 16)
        throw new ConfigError(
          `${from}: every token must be at least 16 characters (one has ${t.length}); make one with openssl rand -hex 32`,
        );
      // RFC 6750 b64token: anything else could never arrive in an Authorization header intact.
      if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(t)) {
        throw new ConfigError(
          `${from}: tokens may contain only letters, digits and - . _ ~ + / (then = padding)`,
        );
      }
    }
  }
  return all;
}

/**
 * Where kept credentials live (docs/configuration.md "Kept credentials"): SERVICE_STATE_DIR/--state-dir
 * (`off` keeps nothing), else $XDG_STATE_HOME/workbench-mcp when XDG_STATE_HOME is absolute, else
 * ~/.local/state/workbench-mcp (the XDG default); without a HOME, nothing is kept.
 */
function stateDirChoice(
  configured: string | undefined,
  source: string | undefined,
  env: Record<string, string | undefined>,
): StateDirChoice | undefined {
  if (configured !== undefined) {
    if (configured.trim().toLowerCase() === 'off') return undefined;
    if (!path.isAbsolute(configured))
      throw new ConfigError(`${source} must be an absolute path or off (got ${JSON.stringify(configured)})`);
    return { dir: path.resolve(configured), from: source as string, isDefault: false };
  }
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg))
    return { dir: path.join(xdg, 'workbench-mcp'), from: 'XDG_STATE_HOME', isDefault: true };
  const home = env.HOME;
  if (home && path.isAbsolute(home))
    return {
      dir: path.join(home, '.local', 'state', 'workbench-mcp'),
      from: 'HOME',
      isDefault: true,
      base: home,
    };
  return undefined;
}

/** SERVICE_READ_ALLOW/--read-allow: existing absolute paths, `:`-separated; `/` would undo the allow-list. */
function readAllowPaths(raw: string | undefined, source: string | undefined): readonly string[] {
  const out: string[] = [];
  for (const p of (raw ?? '').split(':')) {
    if (p.trim() === '') continue;
    const what = `${source}: ${JSON.stringify(p)}`;
    if (!path.isAbsolute(p))
      throw new ConfigError(`${what} is not an absolute path; name directories from /`);
    if (path.resolve(p) === '/')
      throw new ConfigError(`${what} would show the whole host; name the directories commands need`);
    if (!existsSync(p)) throw new ConfigError(`${what} does not exist; fix the path or drop it`);
    out.push(path.resolve(p));
  }
  return Object.freeze(out);
}

/**
 * The default workspace and the project roots. With roots and no --workspace there is no default workspace:
 * the server's own directory (what its state and runtime directories are keyed by) is then the first root,
 * which no tool serves (docs/configuration.md#several-projects).
 */
function workspaceOf(
  out: Settings,
  sources: Record<string, string>,
  userCwd: string,
): Pick<Config, 'workspace' | 'projectRoots' | 'noDefaultWorkspace'> {
  const projectRoots = projectPaths(out.projects, sources.projects);
  if (projectRoots.length === 0) return { workspace: out.workspace ?? userCwd };
  if (out.workspace !== undefined) return { workspace: out.workspace, projectRoots };
  return { workspace: projectRoots[0] as string, projectRoots, noDefaultWorkspace: true };
}

/** SERVICE_PROJECTS/--projects: existing absolute directories, `:`-separated (`~/` is the user's home). */
function projectPaths(raw: string | undefined, source: string | undefined): readonly string[] {
  const out: string[] = [];
  for (const p of (raw ?? '').split(':')) {
    if (p.trim() === '') continue;
    const what = `${source}: ${JSON.stringify(p)}`;
    if (!path.isAbsolute(p))
      throw new ConfigError(`${what} is not an absolute path; name project roots from /`);
    if (path.resolve(p) === '/')
      throw new ConfigError(`${what} would open the whole host; name the directory your projects are in`);
    if (!existsSync(p)) throw new ConfigError(`${what} does not exist; fix the path or drop it`);
    if (!out.includes(path.resolve(p))) out.push(path.resolve(p));
  }
  return Object.freeze(out);
}

/**
 * The state root a server of this environment would use by default (XDG_STATE_HOME, else HOME): sealed from
 * commands even when this one keeps its state elsewhere or nothing, since other instances may keep theirs there.
 */
export function defaultStateRoot(env: Readonly<Record<string, string | undefined>>): string | undefined {
  return stateDirChoice(undefined, undefined, env)?.dir;
}

/** The proxy's lists must be well-formed (a typo would silently allow or refuse the wrong hosts); WB_TEST_RESOLVE. */
function checkNetwork(
  out: Settings,
  sources: Record<string, string>,
  env: Record<string, string | undefined>,
): Readonly<Record<string, readonly string[]>> | undefined {
  for (const [key, ok] of [
    ['networkAllow', isHostPattern],
    ['networkDeny', isHostPattern],
    ['networkAllowPrivate', isPrivateEntry],
  ] as const) {
    const bad = badEntry(out[key], ok);
    if (bad !== undefined)
      throw new ConfigError(
        `${sources[key]}: ${JSON.stringify(bad)} is not ${key === 'networkAllowPrivate' ? 'a host name, IP or CIDR' : 'a host pattern (example.com, *.example.com, *)'}`,
      );
  }
  const resolve = testResolve(env.WB_TEST_RESOLVE);
  if (typeof resolve === 'string') throw new ConfigError(resolve);
  return resolve;
}

/** WB_TEST_PAUSE=<point>[,<point>...] (docs/design-notes.md#pause-points): undefined unless set; an unknown point is an error. */
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
