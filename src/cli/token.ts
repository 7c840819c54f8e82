// `workbench-mcp token show|rotate` (docs/configuration.md "Kept credentials"): the bearer token kept in the
// state directory of a workspace (state/credentials.ts). `show` prints it alone on stdout (so
// `$(workbench-mcp token show)` can be pasted into a client's settings); `rotate` replaces it and prints the
// new one once — a running server for that workspace accepts only the new one from then on. Settings come
// through config/ like the server's (--workspace, --state-dir and their variables).
import { ConfigError, load, type Config } from '../config/load.js';
import { checkRoot } from '../workspace/paths.js';
import { keptFile, readToken, rotateToken, TOKEN_FILE } from '../state/credentials.js';
import { openStateDir, peekStateDir, StateDirError, type KeptState } from '../state/state-dir.js';
import { scopeArgs } from './banner.js';
import { commandLine, selfCommand } from './self.js';

export const TOKEN_USAGE = `Usage: workbench-mcp token show|rotate [--workspace DIR] [--state-dir DIR]

The bearer token the server generated for a workspace and keeps in its state directory
($XDG_STATE_HOME/workbench-mcp/<workspace id>/, else ~/.local/state/workbench-mcp/…), so that clients stay
configured across restarts.
  show     print it (alone, on stdout)
  rotate   replace it with a new one, printed once; a running server accepts only the new one from then on
A configured SERVICE_AUTH_TOKEN / SERVICE_AUTH_TOKEN_FILE always wins over the kept token.
Exit codes: 0 done, 1 no token kept yet (show), 2 bad options or an unusable state directory.
`;

type Io = { out: (s: string) => void; err: (s: string) => void };

export async function runToken(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
  io: Io,
): Promise<number> {
  const say = (s: string) => io.err(`workbench-mcp token: ${s}\n`);
  const [action, ...rest] = argv;
  if (action === '--help' || argv.includes('--help')) {
    io.out(TOKEN_USAGE);
    return 0;
  }
  if (action !== 'show' && action !== 'rotate') {
    say(
      action === undefined
        ? 'say what to do: show or rotate'
        : `unknown action ${JSON.stringify(action)}; use show or rotate`,
    );
    io.err(TOKEN_USAGE);
    return 2;
  }
  let config: Config;
  try {
    const a = load(rest, env, cwd);
    if (a.kind !== 'serve') {
      io.out(TOKEN_USAGE);
      return 0;
    }
    config = a.config;
  } catch (e) {
    if (e instanceof ConfigError) return (say(e.message), 2);
    throw e;
  }
  const root = checkRoot(config.workspace, config.env.HOME);
  if (!root.ok) return (say(`${config.sources.workspace ?? 'the current directory'}: ${root.reason}`), 2);
  if (!config.stateDir) return (say('SERVICE_STATE_DIR is off: no token is kept'), 2);
  let state: KeptState | undefined;
  try {
    if (action === 'show') {
      // Looking creates nothing.
      state = peekStateDir(config.stateDir, root.root.real);
    } else {
      const opened = openStateDir(config.stateDir, root.root.real);
      if (opened.kind === 'off') return (say('SERVICE_STATE_DIR is off: no token is kept'), 2);
      if (opened.kind === 'unavailable') return (say(`no token can be kept: ${opened.reason}`), 2);
      state = opened.state;
    }
  } catch (e) {
    if (e instanceof StateDirError) return (say(e.message), 2);
    throw e;
  }
  if (config.authTokens.length > 0)
    say(
      'note: SERVICE_AUTH_TOKEN / SERVICE_AUTH_TOKEN_FILE is set, and a server started with it uses that instead',
    );
  return action === 'show' ? show(state, config, io, say) : rotate(state as KeptState, io, say);
}

function show(state: KeptState | undefined, config: Config, io: Io, say: (s: string) => void): number {
  let token: string | undefined;
  try {
    token = state && readToken(state);
  } catch (e) {
    if (e instanceof StateDirError) return (say(e.message), 2);
    throw e;
  }
  if (token === undefined) {
    const again = commandLine(selfCommand(config.env.PATH), ['token', 'rotate', ...scopeArgs(config)]);
    say(
      `no bearer token is kept for ${config.workspace} yet: the server makes one on its first start in bearer mode (or make one now: ${again})`,
    );
    return 1;
  }
  io.out(token + '\n');
  return 0;
}

function rotate(state: KeptState, io: Io, say: (s: string) => void): number {
  let token: string;
  try {
    token = rotateToken(state);
  } catch (e) {
    if (e instanceof StateDirError) return (say(e.message), 2);
    throw e;
  }
  say(
    `a new bearer token is kept in ${keptFile(state, TOKEN_FILE)} (printed below; \`token show\` prints it again); the old one is refused from now on, by a running server too — update your clients`,
  );
  io.out(token + '\n');
  return 0;
}
