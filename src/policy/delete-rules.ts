// Mass deletion that does not spell `rm -rf` (docs/security-model.md): `find … -delete`, `find … -exec rm …` (also
// -execdir, -ok, -okdir), `xargs rm`, and interpreter one-liners that delete trees (python shutil.rmtree, perl
// rmtree/remove_tree, ruby FileUtils.rm_rf, node fs.rmSync(…, {recursive: true}), …). Each returns the
// reason for the refusal, or null. Like the rest of the policy this reads command lines only: a script file
// that does the same is the kernel sandbox's business, not this module's.

/** Commands that delete what they are given. */
const DELETERS = new Set(['rm', 'rmdir', 'unlink', 'shred']);
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

function base(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/**
 * `find` that deletes what it matches. `inner` classifies the command of an -exec (its verdict's reason, or
 * null), so `find … -exec sh -c 'rm -rf x' \;` is judged by what it runs.
 */
export function findDeletes(
  args: readonly string[],
  inner: (words: string[]) => string | null,
): string | null {
  if (args.includes('-delete')) return '`find … -delete` deletes every file it matches';
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (!FIND_EXEC.has(a)) continue;
    let end = i + 1;
    while (end < args.length && args[end] !== ';' && args[end] !== '+') end++;
    const words = args.slice(i + 1, end);
    const name = base(words[0] ?? '');
    if (DELETERS.has(name)) return `\`find … ${a} ${name}\` deletes every file it matches`;
    const why = words.length ? inner(words) : null;
    if (why) return `\`find … ${a}\` runs a command that ${why.replace(/^`[^`]*` /, '')}`;
    i = end;
  }
  return null;
}

/** `xargs rm …`: deletes every path it is fed. */
export function xargsDeletes(command: readonly string[]): string | null {
  const name = base(command[0] ?? '');
  return DELETERS.has(name) ? `\`xargs ${name}\` deletes every path it is fed` : null;
}

interface Interpreter {
  name: RegExp;
  /** Options whose next word is the program text. */
  codeFlags: RegExp;
  /** A subcommand whose next word is the program text (`deno eval CODE`). */
  codeCommand?: string;
}

const INTERPRETERS: Interpreter[] = [
  { name: /^(?:python|pypy)(?:\d+(?:\.\d+)*)?$/, codeFlags: /^-[a-zA-Z]*c$/ },
  { name: /^perl(?:\d+(?:\.\d+)*)?$/, codeFlags: /^-[a-zA-Z]*[eE]$/ },
  { name: /^ruby(?:\d+(?:\.\d+)*)?$/, codeFlags: /^-[a-zA-Z]*e$/ },
  { name: /^(?:node|nodejs|bun)$/, codeFlags: /^(?:-e|-p|--eval|--print)$/ },
  { name: /^deno$/, codeFlags: /^$/, codeCommand: 'eval' },
];

/** Calls that delete a whole tree, in the languages above (or a shell-out to rm -r). */
const TREE_DELETE: Array<[RegExp, string]> = [
  [/\b(?:rmtree|remove_tree)\s*\(/, 'rmtree (shutil.rmtree, File::Path)'],
  [/\b(?:rmtree|remove_tree)\s+["'$@\w]/, 'File::Path rmtree / remove_tree'],
  [/\b(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?)\s*[("'$@\w]/, 'FileUtils.rm_rf'],
  [
    /\b(?:rmSync|rmdirSync|rm|rmdir|remove|removeSync)\s*\((?:[^()]|\([^()]*\))*recursive\s*:\s*true/,
    'a recursive rm (fs.rmSync(…, {recursive: true}))',
  ],
  [/\brimraf\b/, 'rimraf'],
  [/\brm\s+-[a-zA-Z]*[rR]|["']rm["']\s*,\s*["']-[a-zA-Z]*[rR]/, 'rm -r'],
];

/** The program text an interpreter is given on its command line, or null when it runs a file. */
function programText(interp: Interpreter, args: readonly string[]): string | null {
  const parts: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (interp.codeCommand !== undefined && i === 0 && a === interp.codeCommand) {
      if (args[1] !== undefined) parts.push(args[1]);
      break;
    }
    if (interp.codeFlags.test(a) && args[i + 1] !== undefined) {
      parts.push(args[i + 1] as string);
      i++;
    } else if (/^--(?:eval|print)=/.test(a)) parts.push(a.slice(a.indexOf('=') + 1));
    else if (!a.startsWith('-')) break;
  }
  return parts.length ? parts.join('\n') : null;
}

/** An interpreter one-liner that deletes a tree: the reason, or null. */
export function interpreterDeletes(name: string, args: readonly string[]): string | null {
  const interp = INTERPRETERS.find((i) => i.name.test(name));
  if (!interp) return null;
  const code = programText(interp, args);
  if (code === null) return null;
  const hit = TREE_DELETE.find(([re]) => re.test(code));
  return hit ? `\`${name}\` with ${hit[1]} deletes a whole tree` : null;
}
