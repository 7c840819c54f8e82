// The environment a command sees (docs/tools.md#commands, docs/tools.md#permission-modes). Outside
// `dangerous` it is a minimal base taken from the server's environment snapshot (PATH, LANG, LANGUAGE, LC_*,
// TZ) with secret-looking values dropped; in `dangerous` the whole snapshot is passed. In every mode the
// server's own SERVICE_* settings (its tokens and passwords) are withheld, and HOME/TMPDIR/XDG_CACHE_HOME
// point into the per-instance runtime directory. Per-call `env` keys that look secret or change how programs
// load code are refused outside `dangerous`, since a model would otherwise re-inject what the base removed.
// In `safe` with the filtering proxy, the proxy variables every common client reads point at the sandbox's
// bridge, with this command's own credential (net-access.ts); they open nothing but that proxy, so they are
// not secrets.
import type { PermissionMode } from '../../config/load.js';
import type { RuntimeDirs } from '../runtime-dir.js';

const BASE_NAMES = new Set(['PATH', 'LANG', 'LANGUAGE', 'TZ']);
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Name parts that mark a credential: GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, SSH_AUTH_SOCK, … */
const SECRET_NAME =
  /(?:^|_)(?:TOKENS?|SECRETS?|PASSWORD|PASSWD|PASSPHRASE|PASS|CREDENTIALS?|AUTH|COOKIES?|APIKEY|API_KEY|ACCESS_KEY|ACCESS_KEY_ID|PRIVATE_KEY|SIGNING_KEY|ENCRYPTION_KEY|SESSION_KEY|DSN|DATABASE_URL|WEBHOOK_URL|CONNECTION_STRING)(?:$|_)/i;

/** Values that are credentials whatever they are called. */
const SECRET_VALUE =
  /^(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|xox[abprs]-[\w-]{10,}|sk-[\w-]{16,}|sk_live_\w{10,}|rk_live_\w{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[\w-]{30,}|npm_[A-Za-z0-9]{30,}|eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]*|-----BEGIN [A-Z ]*PRIVATE KEY)|:\/\/[^/\s:@]+:[^/\s@]+@/;

/** Variables that make programs load other code (docs/tools.md#permission-modes). */
const LOADER_NAMES = new Set([
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PERL5LIB',
  'PERL5OPT',
  'PERLLIB',
  'RUBYLIB',
  'RUBYOPT',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'BASH_ENV',
  'ENV',
  // Below 1, bash on a socket for input (a command on pipes) believes sshd started it and runs ~/.bashrc.
  'SHLVL',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'GCONV_PATH',
  'GIT_EXEC_PATH',
  'GIT_SSH_COMMAND',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_COUNT',
  'LOCPATH',
  'NLSPATH',
  'HOSTALIASES',
  'RES_OPTIONS',
  'LUA_PATH',
  'LUA_CPATH',
]);
const LOADER_PREFIX = /^(?:LD_|DYLD_|BASH_FUNC_|GIT_CONFIG_KEY_|GIT_CONFIG_VALUE_)/;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export function isSecretValue(value: string): boolean {
  return SECRET_VALUE.test(value);
}

export function isLoaderName(name: string): boolean {
  return LOADER_NAMES.has(name) || LOADER_PREFIX.test(name);
}

function isBaseName(name: string): boolean {
  return BASE_NAMES.has(name) || name.startsWith('LC_');
}

export interface ChildEnvOptions {
  snapshot: Readonly<Record<string, string>>;
  mode: PermissionMode;
  dirs: RuntimeDirs;
  tty: boolean;
  extra: Readonly<Record<string, string>>;
  /** `safe` with the filtering proxy: its URL for this command (`http://wb:<token>@127.0.0.1:3128`). */
  proxy?: string;
}

/**
 * What HTTP clients read to find a proxy: curl, wget, git, Python (pip, requests, uv), Go, Ruby, Deno and bun
 * read HTTP(S)_PROXY / http(s)_proxy; npm, pnpm and yarn their own settings; cargo CARGO_HTTP_PROXY; Node's
 * fetch only with NODE_USE_ENV_PROXY (Node ≥ 24). GOPROXY is left alone (Go reaches it through HTTPS_PROXY).
 */
export function proxyEnv(url: string): Record<string, string> {
  const env: Record<string, string> = {
    NO_PROXY: 'localhost,127.0.0.1,::1',
    no_proxy: 'localhost,127.0.0.1,::1',
  };
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'])
    env[k] = url;
  for (const k of ['npm_config_proxy', 'npm_config_https_proxy', 'YARN_HTTP_PROXY', 'YARN_HTTPS_PROXY'])
    env[k] = url;
  env.PIP_PROXY = url;
  env.CARGO_HTTP_PROXY = url;
  env.NODE_USE_ENV_PROXY = '1';
  return env;
}

export function childEnv(o: ChildEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.snapshot)) {
    if (k.startsWith('SERVICE_')) continue;
    if (o.mode === 'dangerous') env[k] = v;
    else if (isBaseName(k) && !isSecretName(k) && !isSecretValue(v)) env[k] = v;
  }
  env.PATH ||= DEFAULT_PATH;
  env.HOME = o.dirs.home;
  env.TMPDIR = o.dirs.tmp;
  env.XDG_CACHE_HOME = o.dirs.cache;
  env.PAGER = 'cat';
  env.GIT_PAGER = 'cat';
  // A command on pipes reads a socket (libuv's pipes are socket pairs): bash at level 1 takes that for sshd and
  // runs /etc/bash.bashrc and $HOME/.bashrc first, so that a file a command once wrote in HOME would run ahead
  // of every later one. From level 2 on it reads nothing, as for `bash -c` typed in a terminal.
  if (!(Number(env.SHLVL) >= 1)) env.SHLVL = '1';
  if (o.tty) {
    const term = o.snapshot.TERM;
    env.TERM = term && term !== 'dumb' ? term : 'xterm-256color';
    delete env.NO_COLOR;
  } else {
    env.TERM = 'dumb';
    env.NO_COLOR = '1';
    // No terminal to answer a credential prompt: fail instead of hanging until the timeout.
    env.GIT_TERMINAL_PROMPT = '0';
  }
  if (o.proxy) Object.assign(env, proxyEnv(o.proxy));
  Object.assign(env, o.extra);
  return env;
}

/** Variables the server sets itself (the rest is inherited). */
const SET_BY_SERVER = new Set([
  'HOME',
  'SHLVL',
  'TMPDIR',
  'XDG_CACHE_HOME',
  'PAGER',
  'GIT_PAGER',
  'TERM',
  'NO_COLOR',
  'GIT_TERMINAL_PROMPT',
  ...Object.keys(proxyEnv('')),
]);

/** What a command without a tty gets: inherited names (values withheld) and the values the server sets. */
export function envPreview(o: Omit<ChildEnvOptions, 'tty' | 'extra'>): {
  inherited: string[];
  set: Record<string, string>;
} {
  const env = childEnv({ ...o, tty: false, extra: {} });
  const set: Record<string, string> = {};
  const inherited: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (SET_BY_SERVER.has(k)) set[k] = v;
    else inherited.push(k);
  }
  return { inherited: inherited.sort(), set };
}

export type EnvCheck =
  | { ok: true }
  | { ok: false; reason: 'invalid'; key: string; why: string }
  | { ok: false; reason: 'secret' | 'loader'; keys: string[] };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** execve refuses one `NAME=value` string longer than this (Linux MAX_ARG_STRLEN), with E2BIG. */
const MAX_ENV_ENTRY_BYTES = 128 * 1024;
/** All per-call entries together: well inside ARG_MAX with the inherited environment and the command line. */
const MAX_ENV_TOTAL_BYTES = 512 * 1024;

/** Per-call `env`: names must be valid and sizes within what execve takes; secret-looking and loader keys need `dangerous`. */
export function checkCallEnv(extra: Readonly<Record<string, string>>, mode: PermissionMode): EnvCheck {
  let total = 0;
  for (const [k, v] of Object.entries(extra)) {
    const size = Buffer.byteLength(k) + Buffer.byteLength(v) + 2;
    total += size;
    if (size > MAX_ENV_ENTRY_BYTES || total > MAX_ENV_TOTAL_BYTES)
      return {
        ok: false,
        reason: 'invalid',
        key: k.length > 60 ? `${k.slice(0, 60)}…` : k,
        why: `a program can be given at most ${MAX_ENV_ENTRY_BYTES / 1024} KiB per variable and, here, ${MAX_ENV_TOTAL_BYTES / 1024} KiB in all (execve's limits); pass large data through stdin or a file instead`,
      };
    if (!NAME.test(k))
      return {
        ok: false,
        reason: 'invalid',
        key: k,
        why: 'names are letters, digits and _ and do not start with a digit',
      };
    if (v.includes('\0')) return { ok: false, reason: 'invalid', key: k, why: 'values cannot contain NUL' };
  }
  if (mode === 'dangerous') return { ok: true };
  const secret = Object.keys(extra).filter(isSecretName);
  if (secret.length) return { ok: false, reason: 'secret', keys: secret };
  const loader = Object.keys(extra).filter(isLoaderName);
  if (loader.length) return { ok: false, reason: 'loader', keys: loader };
  return { ok: true };
}
