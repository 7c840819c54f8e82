// The warm-up right after the server is ready (cli/serve.ts): the first command's helper, the tool modules,
// a rehearsal of one command and one request to its own endpoint (warm-http.ts), so the first real call does
// not wait for them.
import { SERVER_PRINCIPAL } from '../core/principal.js';
import type { Logger } from '../core/log.js';
import { openRepo } from '../git/repo.js';
import { callTool } from '../protocol/call-tool.js';
import type { ProtocolHost } from '../protocol/host.js';
import type { Runtime } from '../runtime/runtime.js';
import { warmHttp, type SelfEndpoint } from './warm-http.js';

/**
 * Right after the server is ready: start what the first command needs (sandbox probe, spawner helper, the
 * tool modules) so it does not wait for them (docs/tools.md#commands, docs/architecture.md), and without a
 * sandbox say what `safe`/`trusted` then cannot stop, or without a network path that they have no network
 * (docs/security-model.md).
 */
export function afterReady(runtime: Runtime, log: Logger, self?: SelfEndpoint): void {
  const started = runtime.clock.monotonic();
  runtime.commands.warm();
  const loaded = runtime.catalog.preload();
  loaded.catch((e: unknown) => log.error(String((e as Error)?.message ?? e)));
  // The jails' probes block this thread for a few spawns: after the command path is warm, not beside it.
  void rehearse(runtime, loaded)
    .catch(() => {})
    .then(() => rehearseTools(runtime, loaded))
    .catch(() => {})
    .then(async () => {
      if (self) log.debug('warm-up request to its own endpoint', { answer: await warmHttp(self) });
    })
    .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    .then(() => warmGit(runtime, log))
    .finally(() => {
      warmJails(runtime, log);
      // What a client that calls from now on meets prepared (bench/loop-bench.mjs waits for this line).
      log.debug('warm-up done', { ms: Math.round(runtime.clock.monotonic() - started) });
    });
  const s = runtime.commands.sandboxStatus();
  if (runtime.config.permissionMode === 'dangerous') return;
  // Fail closed (docs/security-model.md#network-per-mode): said at start, not only when a command fails.
  if (s.network_unavailable)
    log.warn(
      `permission mode ${runtime.config.permissionMode}: commands have NO network at all: ${s.network_unavailable}`,
    );
  if (s.in_use !== null) return;
  log.warn(
    `permission mode ${runtime.config.permissionMode} without an OS sandbox cannot stop a script: ${s.reason}`,
  );
}

/**
 * The workspace's repository found and checked once (git/repo), so the first git call of a client finds the
 * discovery cached (when the configuration has stood still long enough, git/settle) and runs git only once.
 */
async function warmGit(runtime: Runtime, log: Logger): Promise<void> {
  if (runtime.config.testPause) return;
  try {
    await openRepo(runtime, runtime.root.real);
  } catch (e) {
    log.debug('repository not looked up at start', { error: String(e) });
  }
}

/**
 * The jails of git and ripgrep prepared for the workspace's root (process/jail/prepared-jail.ts), so the first
 * git call and the first search find theirs ready; after the first-command rehearsal.
 */
function warmJails(runtime: Runtime, log: Logger): void {
  try {
    const rg = runtime.search.engine();
    runtime.jail.warm(['git', ...(rg.kind === 'ripgrep' ? [rg.path] : [])]);
  } catch (e) {
    log.debug('tool jails not prepared at start', { error: String(e) });
  }
}

/**
 * Once the tools are loaded and the command helper is up, one `echo` through exec_command's whole path, then
 * forgotten: the first real command finds its code compiled and the helper's first fork done
 * (docs/architecture.md: the first command within 1.5× of later ones). Not a tool call of any client: no
 * audit line, never listed.
 */
async function rehearse(runtime: Runtime, loaded: Promise<unknown>): Promise<void> {
  // A test that stops the server at a pause point aims at its own tool call, not at this one.
  if (runtime.config.testPause) return;
  await loaded;
  if (!(await runtime.commands.whenUp())) return;
  // Not beside a client's call (core/quiet.ts): once none is being answered.
  await new Promise<void>((resolve) => runtime.quiet.later(resolve));
  // A client's own command already went down this path: a rehearsal now would warm nothing.
  if (runtime.commands.asked > 0)
    return runtime.log.debug('first-command rehearsal left out: a client ran a command first');
  const r = await unseenCall(runtime)('exec_command', { cmd: 'echo rehearsal' });
  const id = r?.command_id;
  if (typeof id === 'string') runtime.commands.forget(id);
  runtime.log.debug('first-command rehearsal done', { forgotten: typeof id === 'string' });
}

type UnseenCall = (
  name: string,
  args: Record<string, unknown>,
) => Promise<Record<string, unknown> | undefined>;

/**
 * A tool call through tools/call's own path (the lookup, the arguments, the result's shape and its JSON), with
 * no audit line and no console entry: what a client's first call runs besides the socket and the credential
 * check. Resolves the structured result.
 */
function unseenCall(runtime: Runtime): UnseenCall {
  const unseen: ProtocolHost = {
    ...runtime,
    signal: runtime.signal,
    sandboxStatus: () => runtime.sandboxStatus(),
    audit: undefined,
    activity: undefined,
  };
  return async (name, args) => {
    const r = await callTool(
      unseen,
      { name, arguments: args },
      SERVER_PRINCIPAL,
      new AbortController().signal,
    );
    JSON.stringify(r);
    return 'structuredContent' in r ? r.structuredContent : undefined;
  };
}

/**
 * The tools a coding loop calls first, each once on one small file of the workspace, so that a client's first
 * call of each finds its code compiled instead of paying 4–9 ms for it (docs/benchmarks.md, the coding loop):
 * list_dir of the root, read_file of its smallest file's first line, search_text for that line's first word in
 * that file, apply_patch as a dry run that puts the line back as it is (nothing is written), git_status,
 * git_diff and git_log on that file. Only reads: errors (no file, not a repository) are as good a rehearsal.
 * Each waits for a quiet moment, and the rest is left out once a client has called a tool.
 */
async function rehearseTools(runtime: Runtime, loaded: Promise<unknown>): Promise<void> {
  if (runtime.config.testPause) return;
  await loaded;
  const call = unseenCall(runtime);
  const leftOut = () => runtime.log.debug('tool rehearsal left out: a client called a tool first');
  const listing = await step(runtime, () => call('list_dir', { path: '.', max_entries: 100 }));
  if (listing === null) return leftOut();
  const files = Object.entries((listing?.files ?? {}) as Record<string, number>).filter(
    ([, size]) => size > 0,
  );
  const file = files.sort((a, b) => a[1] - b[1])[0]?.[0];
  if (file === undefined) return;
  const read = await step(runtime, () => call('read_file', { path: file, end_line: 1 }));
  const line = String(read?.content ?? '').replace(/\n$/, '');
  const word = /[A-Za-z0-9_]+/.exec(line)?.[0] ?? 'a';
  const patch = [
    '*** Begin Patch',
    `*** Update File: ${file}`,
    '@@',
    `-${line}`,
    `+${line}`,
    '*** End Patch',
  ];
  const rest: Array<[string, Record<string, unknown>]> = [
    ['search_text', { query: word, path: file, max_results: 1 }],
    ['apply_patch', { patch: patch.join('\n'), dry_run: true }],
    ['git_status', { path: file }],
    ['git_diff', { path: file }],
    ['git_log', { path: file, max_count: 1 }],
  ];
  for (const [name, args] of rest)
    if ((await step(runtime, () => call(name, args))) === null) return leftOut();
  runtime.log.debug('tool rehearsal done', { tools: 2 + rest.length });
}

/** One rehearsal once no call is being answered; null (none run) once a client has called a tool. */
async function step<T>(runtime: Runtime, run: () => Promise<T>): Promise<T | undefined | null> {
  await new Promise<void>((resolve) => runtime.quiet.later(resolve));
  if (runtime.quiet.begun > 0) return null;
  return run().catch(() => undefined);
}
