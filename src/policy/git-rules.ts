// Which git invocations destroy work that cannot be recovered from the repository
// (docs/tools.md#permission-modes: git reset --hard, git clean -f, …). Returns the reason for the model, or
// null when the command is not destructive. Global options (-C dir, -c key=value, --git-dir=…) are skipped to
// find the subcommand.

const GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--exec-path',
  '--config-env',
  '--super-prefix',
]);

export function gitSubcommand(args: readonly string[]): { sub: string; rest: string[] } | null {
  let i = 0;
  while (i < args.length && (args[i] as string).startsWith('-')) {
    const a = args[i] as string;
    i += GLOBAL_WITH_VALUE.has(a) ? 2 : 1;
  }
  if (i >= args.length) return null;
  return { sub: args[i] as string, rest: args.slice(i + 1) };
}

function hasShort(rest: readonly string[], letter: string): boolean {
  return rest.some((a) => /^-[a-zA-Z]+$/.test(a) && a.includes(letter));
}

export function gitVerdict(args: readonly string[]): string | null {
  const g = gitSubcommand(args);
  if (!g) return null;
  const { sub, rest } = g;
  const has = (...names: string[]) => rest.some((a) => names.some((n) => a === n || a.startsWith(n + '=')));
  switch (sub) {
    case 'reset':
      return has('--hard') ? '`git reset --hard` discards uncommitted changes' : null;
    case 'clean':
      return hasShort(rest, 'f') || has('--force') ? '`git clean -f` deletes untracked files' : null;
    case 'push':
      if (
        hasShort(rest, 'f') ||
        has('--force', '--force-with-lease', '--force-if-includes', '--mirror', '--delete') ||
        hasShort(rest, 'd')
      ) {
        return '`git push --force` (or --mirror/--delete) rewrites or deletes remote history';
      }
      return rest.some((a) => /^[+:]/.test(a))
        ? '`git push +ref` / `:ref` force-updates or deletes a remote branch'
        : null;
    case 'checkout':
    case 'switch':
      return hasShort(rest, 'f') || has('--force', '--discard-changes')
        ? `\`git ${sub} --force\` discards local changes`
        : null;
    case 'branch':
      return hasShort(rest, 'D') || (has('--delete', '-d') && has('--force', '-f'))
        ? '`git branch -D` deletes a branch with unmerged work'
        : null;
    case 'stash':
      return rest[0] === 'clear' ? '`git stash clear` drops every stash' : null;
    case 'filter-branch':
    case 'filter-repo':
      return `\`git ${sub}\` rewrites the whole history`;
    case 'reflog':
      return rest[0] === 'expire' || rest[0] === 'delete'
        ? '`git reflog expire/delete` removes the safety net of lost commits'
        : null;
    default:
      return null;
  }
}
