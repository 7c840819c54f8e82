// Where a command writes (docs/design-notes.md#command-arguments): the paths rm, mv, cp, tee, dd of=, sed -i,
// … write, move or delete, and whether such a path lies outside the roots a command may write to.
import path from 'node:path';
import type { Word } from './shell-words.js';
import type { PolicyContext } from './verdict.js';

const DEVICE_OK = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$|^\/proc\/self\/fd\/\d+$/;
const EXPANDS_TO_RUNTIME = /^\$\{?(?:HOME|TMPDIR|XDG_CACHE_HOME|PWD|OLDPWD)\}?(?:\/|$)/;

export function flags(args: readonly Word[]): { short: Set<string>; long: Set<string>; operands: Word[] } {
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
export function writeTargets(name: string, args: readonly Word[]): Word[] {
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
export function outsideTarget(word: Word, ctx: PolicyContext, cwd: string | null): string | null {
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
