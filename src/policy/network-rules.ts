// Commands whose purpose is the network, used only in `safe` mode when no kernel sandbox keeps commands off
// the network (docs/tools.md#permission-modes: "denied by the kernel where a sandbox is available, else by
// policy"). Word-level, so it catches `npm install` (the weakness of string matching on whole lines), but a
// program can still open sockets on its own — which is why the sandbox is the real answer.
import { gitSubcommand } from './git-rules.js';

const ALWAYS = new Set([
  'curl',
  'wget',
  'ssh',
  'scp',
  'sftp',
  'nc',
  'ncat',
  'netcat',
  'telnet',
  'ftp',
  'socat',
  'aria2c',
  'http',
  'https',
  'xh',
  'npx',
  'pnpx',
  'bunx',
]);

/** Subcommands that download or upload, per tool. */
const SUBCOMMANDS: Record<string, RegExp> = {
  npm: /^(?:install|i|in|add|ci|update|up|upgrade|publish|exec|x|create|init|dlx|audit|outdated|view|info|login)$/,
  pnpm: /^(?:install|i|add|update|up|upgrade|publish|dlx|create|fetch|audit|outdated)$/,
  yarn: /^(?:install|add|upgrade|up|dlx|create|publish|npm)$/,
  bun: /^(?:install|i|add|update|upgrade|x|create|publish)$/,
  pip: /^(?:install|download|wheel|search)$/,
  pip3: /^(?:install|download|wheel|search)$/,
  pipx: /^(?:install|run|upgrade|inject)$/,
  uv: /^(?:pip|add|sync|lock|tool|run|python|venv)$/,
  poetry: /^(?:install|add|update|lock|publish)$/,
  cargo: /^(?:install|fetch|update|add|publish|search|login)$/,
  go: /^(?:get|install|mod)$/,
  gem: /^(?:install|update|fetch|push)$/,
  bundle: /^(?:install|update)$/,
  composer: /^(?:install|require|update|create-project)$/,
  'apt-get': /^(?:install|update|upgrade|dist-upgrade|download|source)$/,
  apt: /^(?:install|update|upgrade|full-upgrade|download)$/,
  dnf: /^(?:install|update|upgrade|download)$/,
  yum: /^(?:install|update|upgrade)$/,
  apk: /^(?:add|update|upgrade|fetch)$/,
  brew: /^(?:install|update|upgrade|fetch|tap)$/,
  conda: /^(?:install|update|create)$/,
  mamba: /^(?:install|update|create)$/,
  docker: /^(?:pull|push|login|run|build|search)$/,
  podman: /^(?:pull|push|login|run|build|search)$/,
  rsync: /:/,
};

const GIT_NETWORK = new Set([
  'clone',
  'fetch',
  'pull',
  'push',
  'ls-remote',
  'archive',
  'request-pull',
  'send-email',
]);

/** A description of the network use (`npm install`), or null. */
export function networkPurpose(name: string, args: readonly string[]): string | null {
  if (ALWAYS.has(name)) return `\`${name}\``;
  if (name === 'git') {
    const g = gitSubcommand(args);
    if (!g) return null;
    if (
      GIT_NETWORK.has(g.sub) ||
      (g.sub === 'submodule' && /^(?:update|add|sync)$/.test(g.rest[0] ?? '')) ||
      (g.sub === 'remote' && g.rest[0] === 'update')
    ) {
      return `\`git ${g.sub}\``;
    }
    return null;
  }
  if (/^python[0-9.]*$/.test(name)) {
    const m = args.indexOf('-m');
    if (m >= 0 && /^pip3?$/.test(args[m + 1] ?? '') && SUBCOMMANDS.pip?.test(args[m + 2] ?? ''))
      return `\`${name} -m pip ${args[m + 2]}\``;
    return null;
  }
  const re = SUBCOMMANDS[name];
  if (!re) return null;
  if (name === 'rsync')
    return args.some((a) => !a.startsWith('-') && /^[^/]*:/.test(a)) ? '`rsync` to a remote host' : null;
  const sub = args.find((a) => !a.startsWith('-'));
  return sub !== undefined && re.test(sub) ? `\`${name} ${sub}\`` : null;
}
