// The command policy of the permission modes (docs/tools.md#permission-modes,
// docs/design-notes.md#command-arguments). A classifier: it reads a command line and returns a verdict value;
// the caller maps a refusal to PERMISSION_REQUIRED. In `safe` and `trusted` it refuses destructive commands
// (rm -rf, find -delete, interpreter one-liners that delete trees, git reset --hard, git clean -f, sudo, …)
// and writes or deletions aimed outside the workspace and the runtime directory (rm, mv, cp/install
// destinations, chmod/chown, ln, touch, mkdir, tee, dd of=, sed -i, redirections); plain reads anywhere are
// allowed. In `safe` without a kernel sandbox it also refuses commands whose purpose is the network. It is a
// second line, a guard-rail against mistakes: the kernel sandbox is the first and the only boundary (a script
// can always hide intent from a command-line reader).
import path from 'node:path';
import type { PermissionMode } from '../config/load.js';
import { lex, type SimpleCommand, type Word } from './shell-words.js';
import { findDeletes, interpreterDeletes, xargsDeletes } from './delete-rules.js';
import { gitVerdict } from './git-rules.js';
import { networkPurpose } from './network-rules.js';

export type Refusal = {
  ok: false;
  kind: 'destructive' | 'outside_write' | 'network';
  /** The least permission mode that allows the command. */
  needs: 'trusted' | 'dangerous';
  /** What the command would do, for the model: "`rm -rf` deletes recursively without asking". */
  reason: string;
};
export type Verdict = { ok: true } | Refusal;

export interface PolicyContext {
  mode: PermissionMode;
  /** Real path of the directory the command starts in. */
  cwd: string;
  /** Directories writes may go to (workspace lexical and real path, runtime directory, …). */
  writableRoots: readonly string[];
  /** Where `~` and $HOME point for commands. */
  home: string;
  /** The kernel already keeps commands off the network (sandbox with its own network namespace). */
  networkIsolated: boolean;
}

const MAX_DEPTH = 4;
const DEVICE_OK = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$|^\/proc\/self\/fd\/\d+$/;
const EXPANDS_TO_RUNTIME = /^\$\{?(?:HOME|TMPDIR|XDG_CACHE_HOME|PWD|OLDPWD)\}?(?:\/|$)/;

export function classifyCommand(cmd: string, ctx: PolicyContext): Verdict {
  if (ctx.mode === 'dangerous') return { ok: true };
  return classifyText(cmd, ctx, 0);
}

function classifyText(cmd: string, ctx: PolicyContext, depth: number): Verdict {
  if (depth > MAX_DEPTH) return { ok: true };
  const parsed = lex(cmd);
  let cwd: string | null = ctx.cwd;
  for (const sc of parsed.commands) {
    const v = classifySimple(sc, ctx, cwd, depth);
    if (!v.ok) return v;
    cwd = nextCwd(sc, cwd, ctx);
  }
  for (const inner of parsed.nested) {
    const v = classifyText(inner, ctx, depth + 1);
    if (!v.ok) return v;
  }
  return { ok: true };
}

/** `cd DIR` changes where later relative targets point; an unknown directory makes them unknown (null). */
function nextCwd(sc: SimpleCommand, cwd: string | null, ctx: PolicyContext): string | null {
  const w = sc.words;
  if (!w.length || (w[0]?.text !== 'cd' && w[0]?.text !== 'pushd')) return cwd;
  const arg = w.find((x, i) => i > 0 && !x.text.startsWith('-'));
  if (!arg) return ctx.home;
  if (arg.dynamic) return null;
  if (arg.text.startsWith('~'))
    return arg.text === '~' || arg.text.startsWith('~/') ? path.join(ctx.home, arg.text.slice(2)) : null;
  return cwd === null && !path.isAbsolute(arg.text) ? null : path.resolve(cwd ?? '/', arg.text);
}

const WRITE_REDIRECTS = new Set(['>', '>>', '>|', '&>', '&>>', '<>']);
const AS_OTHER_USER = new Set(['sudo', 'doas', 'su', 'pkexec', 'run0']);
const DISK_TOOLS =
  /^(?:mkfs(?:\..+)?|mke2fs|mkswap|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|wipefs|blkdiscard)$/;
const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'busybox-sh']);
const RESERVED = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'while',
  'until',
  'do',
  'done',
  'time',
  '[[',
  ']]',
]);

function classifySimple(sc: SimpleCommand, ctx: PolicyContext, cwd: string | null, depth: number): Verdict {
  for (const r of sc.redirects) {
    if (!WRITE_REDIRECTS.has(r.op)) continue;
    const out = outsideTarget(r.target, ctx, cwd);
    if (out) return outside(`redirects output into ${out}`);
  }
  const argv = unwrap(sc.words);
  if (!argv)
    return refuse(
      'destructive',
      'dangerous',
      `\`${sc.words.find((w) => AS_OTHER_USER.has(base(w.text)))?.text ?? 'sudo'}\` runs a command as another user`,
    );
  if (!argv.length) return { ok: true };
  const name = base((argv[0] as Word).text);
  const args = argv.slice(1);

  if (SHELLS.has(name)) {
    const script = shellScript(args);
    return script === null ? { ok: true } : classifyText(script, ctx, depth + 1);
  }
  if (name === 'eval') return classifyText(args.map((a) => a.text).join(' '), ctx, depth + 1);
  if (name === 'xargs' || name === 'watch') {
    const rest = skipWrapperOptions(name, args);
    const del = name === 'xargs' ? xargsDeletes(rest.map((a) => a.text)) : null;
    if (del) return refuse('destructive', 'dangerous', del);
    return rest.length ? classifySimple({ words: rest, redirects: [] }, ctx, null, depth + 1) : { ok: true };
  }
  if (name === 'find') {
    const del = findDeletes(
      args.map((a) => a.text),
      (words) => {
        const v = classifySimple(
          { words: words.map((text) => ({ text, dynamic: false })), redirects: [] },
          ctx,
          null,
          depth + 1,
        );
        return v.ok ? null : v.reason;
      },
    );
    if (del) return refuse('destructive', 'dangerous', del);
  }
  const tree = interpreterDeletes(
    name,
    args.map((a) => a.text),
  );
  if (tree) return refuse('destructive', 'dangerous', tree);
  if (DISK_TOOLS.test(name))
    return refuse('destructive', 'dangerous', `\`${name}\` rewrites disks or partitions`);
  if (
    POWER.has(name) ||
    (name === 'systemctl' && args.some((a) => /^(?:reboot|poweroff|halt|kexec)$/.test(a.text)))
  ) {
    return refuse('destructive', 'dangerous', `\`${name}\` stops or restarts the machine`);
  }
  if (name === 'kill' && killsEveryProcess(args.map((a) => a.text)))
    return refuse('destructive', 'dangerous', '`kill -1` signals every process the user owns');
  if (name === 'git') {
    const g = gitVerdict(args.map((a) => a.text));
    if (g) return refuse('destructive', 'dangerous', g);
  }
  if (name === 'rm') {
    const f = flags(args);
    const recursive = f.short.has('r') || f.short.has('R') || f.long.has('recursive');
    const force = f.short.has('f') || f.long.has('force');
    if (recursive && force)
      return refuse('destructive', 'dangerous', '`rm -rf` deletes recursively without asking');
  }
  if (name === 'shred')
    return refuse('destructive', 'dangerous', '`shred` destroys file contents beyond recovery');
  if (name === 'dd') {
    const of = args.find((a) => a.text.startsWith('of='));
    if (of && /^\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk|loop|md|dm-)/.test(of.text.slice(3))) {
      return refuse('destructive', 'dangerous', '`dd of=/dev/…` overwrites a block device');
    }
  }
  for (const t of writeTargets(name, args)) {
    const out = outsideTarget(t, ctx, cwd);
    if (out) return outside(`\`${name}\` would write or delete ${out}`);
  }
  if (ctx.mode === 'safe' && !ctx.networkIsolated) {
    const n = networkPurpose(
      name,
      args.map((a) => a.text),
    );
    if (n) return refuse('network', 'trusted', `${n} needs the network, which safe mode denies`);
  }
  return { ok: true };
}

/** `kill -9 -1`, `kill -- -1`: pid -1 is every process the user may signal (the first option is the signal). */
function killsEveryProcess(args: readonly string[]): boolean {
  let i = 0;
  if (args[0] === '-s' || args[0] === '-n') i = 2;
  else if (args[0]?.startsWith('-') && args[0] !== '--') i = 1;
  return args.slice(i).includes('-1');
}

function refuse(kind: Refusal['kind'], needs: Refusal['needs'], reason: string): Refusal {
  return { ok: false, kind, needs, reason };
}

function outside(reason: string): Refusal {
  return refuse('outside_write', 'dangerous', `${reason}, outside the workspace`);
}

function base(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** Strip assignments, reserved words and wrappers (env, nice, timeout, …); null when it runs as another user. */
function unwrap(words: readonly Word[]): Word[] | null {
  let w = [...words];
  for (let guard = 0; guard < 16 && w.length; guard++) {
    const first = w[0] as Word;
    if (RESERVED.has(first.text) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(first.text)) {
      w = w.slice(1);
      continue;
    }
    const name = base(first.text);
    if (AS_OTHER_USER.has(name)) return null;
    const skipped = WRAPPERS[name];
    if (!skipped) return w;
    if (name === 'command' && w.some((x) => x.text === '-v' || x.text === '-V')) return [];
    w = skipped(w.slice(1));
  }
  return w;
}

/** Drop a wrapper's options (and the ones that take a value); what is left starts with the wrapped command. */
function optionsWithValues(takesValue: RegExp, positional = 0) {
  return (w: Word[]): Word[] => {
    let i = 0;
    while (i < w.length && (w[i] as Word).text.startsWith('-') && (w[i] as Word).text !== '-') {
      const t = (w[i] as Word).text;
      i++;
      if (t === '--') break;
      if (takesValue.test(t)) i++;
    }
    // env also takes NAME=value words before the command
    while (i < w.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test((w[i] as Word).text)) i++;
    return w.slice(i + positional);
  };
}

const WRAPPERS: Record<string, (w: Word[]) => Word[]> = {
  env: optionsWithValues(/^(?:-u|-C|-S|--unset|--chdir|--split-string)$/),
  nice: optionsWithValues(/^(?:-n|--adjustment)$/),
  nohup: optionsWithValues(/^$/),
  time: optionsWithValues(/^(?:-f|-o|--format|--output)$/),
  command: optionsWithValues(/^$/),
  builtin: optionsWithValues(/^$/),
  exec: optionsWithValues(/^-a$/),
  stdbuf: optionsWithValues(/^-[ioe]$/),
  ionice: optionsWithValues(/^(?:-c|-n|-p|-P|-u)$/),
  setsid: optionsWithValues(/^$/),
  chrt: optionsWithValues(/^$/, 1),
  taskset: optionsWithValues(/^$/, 1),
  timeout: optionsWithValues(/^(?:-s|-k|--signal|--kill-after)$/, 1),
  busybox: optionsWithValues(/^$/),
  unbuffer: optionsWithValues(/^$/),
};

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

function flags(args: readonly Word[]): { short: Set<string>; long: Set<string>; operands: Word[] } {
  const short = new Set<string>();
  const long = new Set<string>();
  const operands: Word[] = [];
  let ended = false;
  for (const a of args) {
    const t = a.text;
    if (ended || !t.startsWith('-') || t === '-') operands.push(a);
    else if (t === '--') ended = true;
    else if (t.startsWith('--')) long.add(t.slice(2).split('=')[0] as string);
    else for (const ch of t.slice(1)) short.add(ch);
  }
  return { short, long, operands };
}

/** Operands of an option-taking command, skipping the values of the options listed. */
function operandsOf(args: readonly Word[], valueOpts: RegExp): Word[] {
  const out: Word[] = [];
  let ended = false;
  for (let i = 0; i < args.length; i++) {
    const t = (args[i] as Word).text;
    if (ended || !t.startsWith('-') || t === '-') out.push(args[i] as Word);
    else if (t === '--') ended = true;
    else if (valueOpts.test(t)) i++;
  }
  return out;
}

function targetDirOption(args: readonly Word[]): Word | undefined {
  for (let i = 0; i < args.length; i++) {
    const t = (args[i] as Word).text;
    if (t === '-t' || t === '--target-directory') return args[i + 1];
    if (t.startsWith('--target-directory='))
      return { text: t.slice('--target-directory='.length), dynamic: (args[i] as Word).dynamic };
  }
  return undefined;
}

/** Paths a command writes, moves or deletes (docs/design-notes.md#command-arguments). */
function writeTargets(name: string, args: readonly Word[]): Word[] {
  switch (name) {
    case 'rm':
    case 'rmdir':
    case 'unlink':
    case 'tee':
      return operandsOf(args, /^$/);
    case 'touch':
      return operandsOf(args, /^(?:-d|-t|-r)$/);
    case 'mkdir':
      return operandsOf(args, /^-m$/);
    case 'truncate':
      return operandsOf(args, /^(?:-s|-r)$/);
    case 'chmod':
    case 'chown':
    case 'chgrp': {
      const ops = operandsOf(args, /^$/);
      return args.some((a) => a.text.startsWith('--reference=')) ? ops : ops.slice(1);
    }
    case 'mv': {
      const t = targetDirOption(args);
      return [...operandsOf(args, /^(?:-t|-S|--suffix)$/), ...(t ? [t] : [])];
    }
    case 'cp':
    case 'install':
    case 'ln':
    case 'rsync': {
      const t = targetDirOption(args);
      if (t) return [t];
      const ops = operandsOf(args, /^(?:-S|--suffix|-m|-o|-g|-e)$/);
      if (name === 'install' && args.some((a) => a.text === '-d')) return ops;
      return ops.length > 1 || name === 'ln' ? ops.slice(-1) : [];
    }
    case 'dd':
      return args
        .filter((a) => a.text.startsWith('of='))
        .map((a) => ({ text: a.text.slice(3), dynamic: a.dynamic }));
    case 'sed':
    case 'perl': {
      if (!args.some((a) => /^-(?:[a-zA-Z]*i|-in-place)/.test(a.text))) return [];
      const ops = operandsOf(args, /^(?:-e|-f|--expression|--file)$/);
      const scripted = args.some(
        (a) => a.text === '-e' || a.text === '-f' || a.text.startsWith('--expression'),
      );
      return scripted ? ops : ops.slice(1);
    }
    default:
      return [];
  }
}

/** The outside path a write target names, or null when it stays inside (or cannot be known statically). */
function outsideTarget(word: Word, ctx: PolicyContext, cwd: string | null): string | null {
  let t = word.text;
  if (!t || t === '-') return null;
  if (word.dynamic) {
    if (EXPANDS_TO_RUNTIME.test(t)) return null;
    const cut = t.search(/[$`]/);
    t = t.slice(0, cut);
    // `/etc/$x` still writes under /etc; `$X/…` or `pre$x` is unknown.
    if (!t.startsWith('/')) return null;
    t = t.endsWith('/') ? t : path.dirname(t);
  }
  if (t.startsWith('~')) {
    if (t === '~' || t.startsWith('~/')) return null; // HOME is the runtime directory
    return t.split('/')[0] as string;
  }
  const glob = t.search(/[*?[]/);
  if (glob >= 0) t = t.slice(0, glob) || '.';
  if (!path.isAbsolute(t) && cwd === null) return null;
  const abs = path.resolve(cwd ?? '/', t);
  if (DEVICE_OK.test(abs)) return null;
  if (ctx.writableRoots.some((r) => abs === r || abs.startsWith(r.endsWith('/') ? r : r + '/'))) return null;
  return abs;
}
