// The warm-up right after the server is ready (cli/serve.ts): the first command's helper, the tool modules,
// three rehearsals of a command, one of the tools (rehearsal.ts) and one request to its own endpoint (warm-http.ts),
// so the first real call does not wait for them; then node:path's helpers, hot enough for V8 to optimize them.
import type { Logger } from '../core/log.js';
import { openRepo } from '../git/repo.js';
import { warmPathHelpers } from '../process/compile-tier.js';
import type { Runtime } from '../runtime/runtime.js';
import { rehearseCommand, rehearseTools } from './rehearsal.js';
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
  void rehearseCommand(runtime, loaded)
    .catch(() => {})
    .then(() => rehearseTools(runtime, loaded))
    .catch(() => {})
    .then(async () => {
      if (self) log.debug('warm-up request to its own endpoint', { answer: await warmHttp(self) });
    })
    .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    .then(() => warmGit(runtime, log))
    // How many threads the root's first search uses (workspace/search/tree-size.ts): a bounded walk.
    .then(() => runtime.search.warm(runtime.root))
    .catch(() => {})
    // A few milliseconds of this thread: in a quiet moment, as the rehearsals.
    .then(() => new Promise<void>((resolve) => runtime.quiet.later(resolve)))
    .then(() => warmPathHelpers(runtime.root.real))
    .finally(() => {
      warmJails(runtime, log);
      // What a client that calls from now on meets prepared (bench/loop-bench.mjs waits for this line).
      log.info('warm-up done', { ms: Math.round(runtime.clock.monotonic() - started) });
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
