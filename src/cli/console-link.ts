// `workbench-mcp console` (docs/console.md#access): prints a fresh one-time link to the operator's console of
// the server running on this workspace. It reads the console's port and link key from the workspace's state
// directory (written by the running server, private to the operator) and asks the console, on loopback, for a
// link. The key travels in a header, never in argv.
import { ConfigError, load, type Config } from '../config/load.js';
import { checkRoot, type WorkspaceRoot } from '../workspace/paths.js';
import { peekStateDir, readKept, StateDirError } from '../state/state-dir.js';
import { CONSOLE_FILE } from './console-start.js';

export const CONSOLE_USAGE = `Usage: workbench-mcp console [--workspace DIR] [--state-dir DIR]

Prints a fresh one-time link to the operator's console of the server running on this workspace (the link in
the server's banner works once). Open it in a browser on this machine.
Exit codes: 0 printed, 1 no running server with a console found, 2 bad options or an unusable state directory.
`;

type Io = { out: (s: string) => void; err: (s: string) => void };

export async function runConsoleLink(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
  io: Io,
): Promise<number> {
  const say = (s: string) => io.err(`workbench-mcp console: ${s}\n`);
  if (argv.includes('--help')) return (io.out(CONSOLE_USAGE), 0);
  let a;
  try {
    a = load(argv, env, cwd);
  } catch (e) {
    if (e instanceof ConfigError) return (say(e.message), 2);
    throw e;
  }
  if (a.kind !== 'serve') return (io.out(CONSOLE_USAGE), 0);
  const config = a.config;
  const root = checkRoot(config.workspace, config.env.HOME);
  if (!root.ok) return (say(`${config.sources.workspace ?? 'the current directory'}: ${root.reason}`), 2);
  const info = consoleInfo(config.stateDir, root.root);
  if ('exit' in info) return (say(info.message), info.exit);
  try {
    const r = await fetch(`http://127.0.0.1:${info.port}/api/link`, {
      method: 'POST',
      headers: { authorization: `Bearer ${info.key}` },
      signal: AbortSignal.timeout(5000),
    });
    const body = (await r.json()) as { link?: string; message?: string };
    if (!r.ok || typeof body.link !== 'string')
      return (
        say(`the console refused: ${body.message ?? r.status}; restart the server if this persists`),
        1
      );
    io.out(`${body.link}\n`);
    io.err('  one-time link, valid 10 minutes: open it in a browser on this machine\n');
    return 0;
  } catch (e) {
    return (
      say(
        `no console answers on 127.0.0.1:${info.port} (${(e as Error).message}): is the server still running?`,
      ),
      1
    );
  }
}

/** The running console's port and link key, from the workspace's state directory. */
function consoleInfo(
  choice: Config['stateDir'],
  root: WorkspaceRoot,
): { port: number; key: string } | { exit: number; message: string } {
  if (!choice)
    return {
      exit: 1,
      message:
        'SERVICE_STATE_DIR is off, so a running server cannot be found: use the link its banner printed',
    };
  let text: string | undefined;
  try {
    const state = peekStateDir(choice, root.real);
    text = state ? readKept(state, CONSOLE_FILE) : undefined;
  } catch (e) {
    if (e instanceof StateDirError) return { exit: 2, message: e.message };
    throw e;
  }
  if (!text)
    return {
      exit: 1,
      message: `no server with a console is running on ${root.lexical} (start one: workbench-mcp)`,
    };
  const damaged = {
    exit: 1,
    message: `${CONSOLE_FILE} in the state directory is damaged; restart the server`,
  };
  try {
    const info = JSON.parse(text) as { port?: unknown; key?: unknown };
    return typeof info.port === 'number' && typeof info.key === 'string'
      ? { port: info.port, key: info.key }
      : damaged;
  } catch {
    return damaged;
  }
}
