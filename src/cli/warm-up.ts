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
  // Through tools/call's own path (the lookup, the arguments, the result's shape and its JSON), with no audit
  // line and no console entry: what a client's first call runs besides the socket and the credential check.
  const unseen: ProtocolHost = {
    ...runtime,
    signal: runtime.signal,
    sandboxStatus: () => runtime.sandboxStatus(),
    audit: undefined,
    activity: undefined,
  };
  const r = await callTool(
    unseen,
    { name: 'exec_command', arguments: { cmd: 'echo rehearsal' } },
    SERVER_PRINCIPAL,
    new AbortController().signal,
  );
  JSON.stringify(r);
  const id = 'structuredContent' in r ? r.structuredContent.command_id : undefined;
  if (typeof id === 'string') runtime.commands.forget(id);
  runtime.log.debug('first-command rehearsal done', { forgotten: typeof id === 'string' });
}
