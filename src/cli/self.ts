// How to run this very program again, for every command line the server prints (the start-up banner, the
// tunnel's block, doctor's fixes, `token` hints): `workbench-mcp` when that name on PATH is this installation
// (npm link, npm install -g), `npx workbench-mcp` when this is a package installed from the npm registry, and
// otherwise `node <absolute path of dist/cli/main.js>`, which works from any directory. A hint that names a
// command the user does not have is worse than none (docs/design-notes.md#printed-commands).
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findOnPath } from './tunnel/provider.js';

/** dist/cli/main.js, the bin (bundled modules keep their tsc twin's import.meta.url: scripts/bundle.mjs). */
export const MAIN_JS = fileURLToPath(new URL('./main.js', import.meta.url));

/** The V8 flags the server runs with (heap-flags.ts). */
export { NODE_FLAGS } from './heap-flags.js';

/** One shell word: as is when it is plain, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** True when `mainReal` lies in node_modules/workbench-mcp of an install whose lock file says it came from a registry. */
function installedFromRegistry(mainReal: string): boolean {
  const m = /^(.*)[/\\]node_modules[/\\]workbench-mcp[/\\]dist[/\\]cli[/\\]main\.js$/.exec(mainReal);
  if (!m) return false;
  try {
    const lock = JSON.parse(
      readFileSync(path.join(m[1] as string, 'node_modules', '.package-lock.json'), 'utf8'),
    ) as {
      packages?: Record<string, { resolved?: unknown }>;
    };
    const resolved = lock.packages?.['node_modules/workbench-mcp']?.resolved;
    return typeof resolved === 'string' && /^https?:\/\//.test(resolved);
  } catch {
    return false;
  }
}

/**
 * The command prefix that runs this program for a user whose PATH is `pathVar`. The node_modules/.bin entries
 * that `npm start` and `npx` put on PATH only for their own run are not the user's PATH, so a workbench-mcp
 * found there does not count.
 */
export function selfCommand(pathVar: string | undefined, main = MAIN_JS): string {
  const mainReal = real(main) ?? main;
  const userPath = (pathVar ?? '')
    .split(path.delimiter)
    .filter((d) => !/[/\\]node_modules[/\\]\.bin[/\\]?$/.test(d))
    .join(path.delimiter);
  const onPath = findOnPath('workbench-mcp', userPath);
  if (onPath && real(onPath) === mainReal) return 'workbench-mcp';
  if (installedFromRegistry(mainReal)) return 'npx workbench-mcp';
  return `node ${shellWord(mainReal)}`;
}

/** `<self> <args…>` with each argument quoted for a POSIX shell. */
export function commandLine(self: string, args: readonly string[]): string {
  return [self, ...args.map(shellWord)].join(' ');
}
