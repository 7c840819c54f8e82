// git/run: the only place that builds git argv (docs/architecture.md#style, rule 6). Every git process gets
// the hardening below, so a hostile `.git/config`, `.gitattributes` or hook cannot turn a read-only tool into
// code execution (docs/tools.md#git, docs/design-notes.md#git-hardening): fsmonitor, hooks, external diff,
// textconv, every filter driver named in config, pager, credential helpers, signature programs and every
// transport are off; no system or global config is read; optional locks are off, so `.git/index` is never
// written. It must not run anything but `git`, and it never uses a shell: argv only, through process/argv
// (bounded, timed).
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import { runArgv, type ArgvResult } from '../process/jail/argv.js';
import { classifyGitFailure } from './failure.js';
import type { ToolJail } from '../process/jail/jail.js';
import type { WorkspaceRoot } from '../workspace/paths.js';

/** What git/ needs of the server (the composition root hands it over; git/ never sees the rest). */
export interface GitHost {
  readonly root: WorkspaceRoot;
  readonly config: { readonly env: Readonly<Record<string, string>> };
  readonly dirs: { readonly home: string };
  /** Aborted at shutdown. */
  readonly signal: AbortSignal;
  /**
   * Where git runs (process/jail/jail.ts). Required, so that a tool whose narrow context lacks the jail cannot hand
   * it to git (tools/define.ts `uses`): it would run git unconfined.
   */
  readonly jail: ToolJail;
  /** A worktree workspace's source object directory (its alternate), readable in its jail (src/workspaces/). */
  readonly sharedObjects?: readonly string[] | undefined;
}

export const GIT_TIMEOUT_MS = 30_000;
/** Default bound on what one git process may print; tools pass tighter bounds where they have one. */
export const GIT_MAX_STDOUT_BYTES = 16 * 1024 * 1024;

const NEVER_PROTOCOLS = ['file', 'git', 'ssh', 'http', 'https', 'ext', 'fd'];

/** `-c` settings for every git process; later `-c` and repo config cannot undo a command-line setting. */
export const HARDENING_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.sshCommand=false',
  'core.askPass=false',
  'core.quotePath=false',
  'core.alternateRefsCommand=',
  'diff.external=',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.relative=false',
  // Submodules are never entered: their own config would name filters we have not disabled.
  'diff.submodule=short',
  'status.submoduleSummary=false',
  'submodule.recurse=false',
  'color.ui=never',
  'credential.helper=',
  'protocol.allow=never',
  ...NEVER_PROTOCOLS.map((p) => `protocol.${p}.allow=never`),
  'log.showSignature=false',
  'log.follow=false',
  'gpg.program=false',
  'gpg.ssh.program=false',
  'gpg.x509.program=false',
  'i18n.logOutputEncoding=UTF-8',
];

/**
 * The repository a git process must use, as checked by git/confine: real paths inside the workspace. Set as
 * GIT_DIR, GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY and GIT_WORK_TREE, so git does no discovery and reads neither
 * a `.git` file nor `commondir` again: rewriting them after the check cannot redirect it. What stays open is
 * a directory inside the workspace swapped for a symlink (or an alternates file rewritten) between the check
 * and git's own opens; running git inside the bubblewrap sandbox, where only the workspace exists, would
 * close that too and is a cheap follow-up where bubblewrap is in use.
 */
export interface GitPin {
  gitDir: string;
  commonDir: string;
  objectsDir: string;
  workTree: string;
}

/** The environment of every git process: built from nothing, PATH is the only inherited value. */
export function gitEnv(runtime: GitHost, pin: GitPin | null = null): Record<string, string> {
  const pinned: Record<string, string> = pin
    ? {
        GIT_DIR: pin.gitDir,
        GIT_COMMON_DIR: pin.commonDir,
        GIT_OBJECT_DIRECTORY: pin.objectsDir,
        GIT_WORK_TREE: pin.workTree,
      }
    : {};
  return {
    ...pinned,
    // Discovery (the unpinned rev-parse of git/repo) never looks above the workspace root nor across a mount.
    GIT_CEILING_DIRECTORIES: path.dirname(runtime.root.real),
    GIT_DISCOVERY_ACROSS_FILESYSTEM: '0',
    PATH: runtime.config.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: runtime.dirs.home,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    // An empty allow-list overrides any protocol.<name>.allow in repository config (lazy fetches included).
    GIT_ALLOW_PROTOCOL: '',
    GIT_NO_LAZY_FETCH: '1',
    // Paths are confined by us and passed as literal pathspecs: no glob or `:(magic)` reinterpretation.
    GIT_LITERAL_PATHSPECS: '1',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
  };
}

/** `filter.<name>.*` is a key we can override on the command line only when the name has no `=` or control char. */
// eslint-disable-next-line no-control-regex
const SAFE_FILTER_NAME = /^[^=\x00-\x1f\x7f]+$/;

/** `-c` pairs that disable each named filter driver (clean, smudge, process; `required` would make git fail). */
export function filterOverrides(names: Iterable<string>): string[] {
  const out: string[] = [];
  for (const n of names) {
    if (!SAFE_FILTER_NAME.test(n)) {
      throw new ToolError(
        'GIT_ERROR',
        'the repository configuration names a filter driver that cannot be disabled safely, so git was not run',
        { filter: n },
        {
          suggestion:
            'Inspect .git/config with read_file; the git tools refuse to run while it defines this filter.',
        },
      );
    }
    for (const k of ['clean', 'smudge', 'process']) out.push('-c', `filter.${n}.${k}=`);
    out.push('-c', `filter.${n}.required=false`);
  }
  return out;
}

/** Parses `git config -z --get-regexp` output (`key\nvalue\0`…) into filter driver names. */
export function parseFilterNames(out: Buffer): Set<string> {
  const names = new Set<string>();
  for (const rec of out.toString('utf8').split('\0')) {
    if (!rec) continue;
    const nl = rec.indexOf('\n');
    const key = nl < 0 ? rec : rec.slice(0, nl);
    const dot = key.lastIndexOf('.');
    if (key.toLowerCase().startsWith('filter.') && dot > 7) names.add(key.slice(7, dot));
    // include.* / includeif.* records are not filters
  }
  return names;
}

export interface GitRunOptions {
  cwd: string;
  /** The checked repository (git/repo); null only for discovery, which runs under the ceiling alone. */
  pin: GitPin | null;
  /** `-c` pairs for the filter drivers of this repository (from discoverFilters). */
  filterArgs: readonly string[];
  maxStdoutBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Variables on top of gitEnv's (the review points' private repository, git/review-repo.ts). */
  env?: Record<string, string>;
  /** A server-owned directory git may write in its jail (the review points' private repository). */
  writable?: string;
}

/** The full argv after `git`: hardening first, then the caller's subcommand and its arguments. */
export function buildGitArgv(filterArgs: readonly string[], args: readonly string[]): string[] {
  const argv = ['--no-pager', '--no-optional-locks'];
  for (const c of HARDENING_CONFIG) argv.push('-c', c);
  argv.push(...filterArgs, ...args);
  return argv;
}

/**
 * Checks a pinned repository still owes before git's output may count: the walk of its git directories
 * (git/confine `walkGitDirs`), left by git/repo `openRepo` with `walkWithGit` to the first git run of the pin.
 */
const owed = new WeakMap<GitPin, () => void>();

/** `check` must pass before the output of any git run pinned to `pin` is used (runGit does it once). */
export function oweCheck(pin: GitPin, check: () => void): void {
  owed.set(pin, check);
}

/**
 * Runs git pinned to a checked repository. A check the pin still owes (oweCheck) is done while git runs when
 * git runs in a jail (process/jail/jail.ts: it sees only the workspace and system files, read-only) and
 * writes nothing; when it fails, git is stopped and its output never used. A run that writes, or one without
 * a jail, waits for the check before it starts.
 */
export async function runGit(
  runtime: GitHost,
  args: readonly string[],
  opts: GitRunOptions,
): Promise<ArgvResult> {
  const check = opts.pin ? owed.get(opts.pin) : undefined;
  if (!check) return startGit(runtime, args, opts, opts.signal ?? runtime.signal);
  owed.delete(opts.pin as GitPin);
  if (opts.writable !== undefined || !runtime.jail.confining()) {
    check();
    return startGit(runtime, args, opts, opts.signal ?? runtime.signal);
  }
  // The run stops when the call's signal aborts or the check fails. Linked by hand and unlinked when the run
  // ends: in Node 20 a signal made with AbortSignal.any() stays referenced by each signal it follows, and the
  // call's signal lives as long as the server (one more reference for every git call, never freed).
  const parent = opts.signal ?? runtime.signal;
  const stop = new AbortController();
  const follow = () => stop.abort(parent.reason);
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  const run = startGit(runtime, args, opts, stop.signal).finally(() =>
    parent.removeEventListener('abort', follow),
  );
  try {
    check();
  } catch (e) {
    stop.abort();
    await run;
    throw e;
  }
  return run;
}

function startGit(
  runtime: GitHost,
  args: readonly string[],
  opts: GitRunOptions,
  signal: AbortSignal,
): Promise<ArgvResult> {
  return runArgv('git', buildGitArgv(opts.filterArgs, args), {
    cwd: opts.cwd,
    env: opts.env ? { ...gitEnv(runtime, opts.pin), ...opts.env } : gitEnv(runtime, opts.pin),
    ...(opts.writable ? { writable: opts.writable } : {}),
    timeoutMs: opts.timeoutMs ?? GIT_TIMEOUT_MS,
    maxStdoutBytes: opts.maxStdoutBytes ?? GIT_MAX_STDOUT_BYTES,
    signal,
    jail: runtime.jail,
  });
}

export interface FilterConfig {
  /** `-c` pairs disabling every filter driver the configuration defines. */
  filterArgs: string[];
  /** The configuration includes other files (include.path / includeIf): never cached, see git/repo. */
  hasIncludes: boolean;
}

/**
 * Every filter driver the configuration seen from `cwd` defines (repository, worktree and included files;
 * system and global config are off). A driver named only in `.gitattributes` has no command, so the
 * configuration is the complete list of what could run.
 */
export async function discoverFilters(
  runtime: GitHost,
  pin: GitPin,
  signal?: AbortSignal,
): Promise<FilterConfig> {
  const r = await runGit(
    runtime,
    [
      'config',
      '-z',
      '--get-regexp',
      '^(filter\\..+\\.(clean|smudge|process|required)|include\\..+|includeif\\..+)$',
    ],
    {
      cwd: pin.workTree,
      pin,
      filterArgs: [],
      maxStdoutBytes: 1024 * 1024,
      signal,
    },
  );
  if (r.spawnError) throw gitUnavailable(r.spawnError);
  if (r.timedOut) throw gitFailed('config', r);
  if (r.code === 1) return { filterArgs: [], hasIncludes: false }; // no match (also outside a repository)
  if (r.code !== 0 || r.truncated) throw gitFailed('config', r);
  const hasIncludes = r.stdout
    .toString('utf8')
    .split('\0')
    .some((rec) => /^include(if)?\./i.test(rec));
  return { filterArgs: filterOverrides(parseFilterNames(r.stdout)), hasIncludes };
}

export function gitUnavailable(code: string): ToolError {
  return new ToolError(
    'GIT_ERROR',
    `git could not be started (${code})`,
    { errno: code },
    {
      suggestion:
        'Install git and make sure it is on the PATH of the server; check_exec_environment shows the PATH.',
    },
  );
}

/** First lines of git's stderr, for messages. */
export function stderrSummary(stderr: string, maxLines = 4): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l && !l.startsWith('hint:'));
  return lines.slice(0, maxLines).join(' / ').slice(0, 600);
}

/** GIT_ERROR for a git process that failed in a way the calling tool has no better answer for (git/failure.ts). */
export function gitFailed(what: string, r: ArgvResult): ToolError {
  const failure = classifyGitFailure(r).kind;
  if (failure === 'timeout') {
    return new ToolError(
      'GIT_ERROR',
      `git ${what} did not finish within ${GIT_TIMEOUT_MS / 1000} s and was stopped`,
      { timeout_ms: GIT_TIMEOUT_MS },
      {
        suggestion: 'Narrow the call (a smaller path, fewer entries) and try again.',
      },
    );
  }
  const summary = stderrSummary(r.stderr) || `exit code ${r.code ?? r.signal}`;
  const hints =
    failure === 'dubious_ownership'
      ? {
          suggestion:
            'The repository belongs to another user, so git refuses to read it; serve a workspace the server user owns.',
        }
      : {
          suggestion:
            'Read the git message above; correct the arguments, or check the repository with exec_command.',
        };
  return new ToolError(
    'GIT_ERROR',
    `git ${what} failed: ${summary}`,
    { exit_code: r.code, stderr: r.stderr.slice(0, 2000) },
    hints,
  );
}
