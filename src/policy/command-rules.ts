// The command rules of the policy (policy/classify.ts), one function each, run in the order of `COMMAND_RULES`
// (as oauth/checks/ lists its checks): a rule returns the verdict it reaches about one simple command, or
// undefined to hand it to the next. Rules that look inside another command (sh -c, eval, xargs, find -exec)
// judge it through the `judge` callbacks, so the recursion depth stays with the classifier.
import { findDeletes, interpreterDeletes, xargsDeletes } from './delete-rules.js';
import { gitVerdict } from './git-rules.js';
import { networkPurpose } from './network-rules.js';
import type { Word } from './shell-words.js';
import { refuse, outside, type PolicyContext, type Verdict } from './verdict.js';
import { optionsWithValues } from './wrappers.js';
import { flags, outsideTarget, writeTargets } from './write-targets.js';

/** One simple command after its wrappers are stripped, with what the rules need to judge it. */
export interface Invocation {
  name: string;
  args: Word[];
  /** The arguments' texts. */
  texts: string[];
  ctx: PolicyContext;
  cwd: string | null;
  judge: {
    /** A nested command line (sh -c, eval): one level deeper. */
    text(cmd: string): Verdict;
    /** A command made of these words (xargs, find -exec): one level deeper, where it starts unknown. */
    words(words: Word[]): Verdict;
  };
}

export type CommandRule = (inv: Invocation) => Verdict | undefined;

const DISK_TOOLS =
  /^(?:mkfs(?:\..+)?|mke2fs|mkswap|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|wipefs|blkdiscard)$/;
const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'busybox-sh']);
const OK: Verdict = { ok: true };

const nestedShell: CommandRule = ({ name, args, judge }) => {
  if (!SHELLS.has(name)) return undefined;
  const script = shellScript(args);
  return script === null ? OK : judge.text(script);
};

const evalText: CommandRule = ({ name, texts, judge }) =>
  name === 'eval' ? judge.text(texts.join(' ')) : undefined;

const wrappedCommand: CommandRule = ({ name, args, judge }) => {
  if (name !== 'xargs' && name !== 'watch') return undefined;
  const rest = skipWrapperOptions(name, args);
  const del = name === 'xargs' ? xargsDeletes(rest.map((a) => a.text)) : null;
  if (del) return refuse('destructive', 'dangerous', del);
  return rest.length ? judge.words(rest) : OK;
};

const findDelete: CommandRule = ({ name, texts, judge }) => {
  if (name !== 'find') return undefined;
  const del = findDeletes(texts, (words) => {
    const v = judge.words(words.map((text) => ({ text, dynamic: false })));
    return v.ok ? null : v.reason;
  });
  return del ? refuse('destructive', 'dangerous', del) : undefined;
};

const interpreterTree: CommandRule = ({ name, texts }) => {
  const tree = interpreterDeletes(name, texts);
  return tree ? refuse('destructive', 'dangerous', tree) : undefined;
};

const diskTool: CommandRule = ({ name }) =>
  DISK_TOOLS.test(name)
    ? refuse('destructive', 'dangerous', `\`${name}\` rewrites disks or partitions`)
    : undefined;

const power: CommandRule = ({ name, texts }) =>
  POWER.has(name) || (name === 'systemctl' && texts.some((t) => /^(?:reboot|poweroff|halt|kexec)$/.test(t)))
    ? refuse('destructive', 'dangerous', `\`${name}\` stops or restarts the machine`)
    : undefined;

const killAll: CommandRule = ({ name, texts }) =>
  name === 'kill' && killsEveryProcess(texts)
    ? refuse('destructive', 'dangerous', '`kill -1` signals every process the user owns')
    : undefined;

const gitDestructive: CommandRule = ({ name, texts }) => {
  const g = name === 'git' ? gitVerdict(texts) : null;
  return g ? refuse('destructive', 'dangerous', g) : undefined;
};

const rmRecursiveForce: CommandRule = ({ name, args }) => {
  if (name !== 'rm') return undefined;
  const f = flags(args);
  const recursive = f.short.has('r') || f.short.has('R') || f.long.has('recursive');
  const force = f.short.has('f') || f.long.has('force');
  return recursive && force
    ? refuse('destructive', 'dangerous', '`rm -rf` deletes recursively without asking')
    : undefined;
};

const shred: CommandRule = ({ name }) =>
  name === 'shred'
    ? refuse('destructive', 'dangerous', '`shred` destroys file contents beyond recovery')
    : undefined;

const ddBlockDevice: CommandRule = ({ name, texts }) => {
  const of = name === 'dd' ? texts.find((t) => t.startsWith('of=')) : undefined;
  return of && /^\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk|loop|md|dm-)/.test(of.slice(3))
    ? refuse('destructive', 'dangerous', '`dd of=/dev/…` overwrites a block device')
    : undefined;
};

const writesOutside: CommandRule = ({ name, args, ctx, cwd }) => {
  for (const t of writeTargets(name, args)) {
    const out = outsideTarget(t, ctx, cwd);
    if (out) return outside(`\`${name}\` would write or delete ${out}`);
  }
  return undefined;
};

const network: CommandRule = ({ name, texts, ctx }) => {
  if (ctx.mode !== 'safe' || ctx.networkIsolated) return undefined;
  const n = networkPurpose(name, texts);
  return n ? refuse('network', 'trusted', `${n} needs the network, which safe mode denies`) : undefined;
};

/** The rules in the order they are asked; the first verdict wins, and none means allowed. */
export const COMMAND_RULES: readonly CommandRule[] = [
  nestedShell,
  evalText,
  wrappedCommand,
  findDelete,
  interpreterTree,
  diskTool,
  power,
  killAll,
  gitDestructive,
  rmRecursiveForce,
  shred,
  ddBlockDevice,
  writesOutside,
  network,
];

function skipWrapperOptions(name: string, args: Word[]): Word[] {
  if (name === 'watch') return optionsWithValues(/^(?:-n|-d|--interval|--differences)$/)(args);
  return optionsWithValues(
    /^(?:-I|-n|-P|-d|-E|-L|-s|-a|--max-args|--max-procs|--delimiter|--arg-file|--max-lines|--max-chars|--replace|--eof)$/,
  )(args);
}

/** The script of `sh -c SCRIPT` (also -lc, -ec, …); null when the shell runs a file or reads stdin. */
function shellScript(args: readonly Word[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const t = (args[i] as Word).text;
    if (t === '--' || !t.startsWith('-')) return null;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) {
      const next = args.slice(i + 1).find((a) => !/^-[a-zA-Z]+$/.test(a.text));
      return next ? next.text : null;
    }
    if (t === '-o' || t === '-O') i++;
  }
  return null;
}

/** `kill -9 -1`, `kill -- -1`: pid -1 is every process the user may signal (the first option is the signal). */
function killsEveryProcess(args: readonly string[]): boolean {
  let i = 0;
  if (args[0] === '-s' || args[0] === '-n') i = 2;
  else if (args[0]?.startsWith('-') && args[0] !== '--') i = 1;
  return args.slice(i).includes('-1');
}
