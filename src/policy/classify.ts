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
import { COMMAND_RULES, type Invocation } from './command-rules.js';
import { lex, type SimpleCommand, type Word } from './shell-words.js';
import { outside, refuse, type PolicyContext, type Verdict } from './verdict.js';
import { base, otherUserWord, unwrap } from './wrappers.js';
import { outsideTarget } from './write-targets.js';

export type { PolicyContext, Refusal, Verdict } from './verdict.js';

const MAX_DEPTH = 4;

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
      `\`${otherUserWord(sc.words)}\` runs a command as another user`,
    );
  if (!argv.length) return { ok: true };
  const args = argv.slice(1);
  const inv: Invocation = {
    name: base((argv[0] as Word).text),
    args,
    texts: args.map((a) => a.text),
    ctx,
    cwd,
    judge: {
      text: (cmd) => classifyText(cmd, ctx, depth + 1),
      words: (words) => classifySimple({ words, redirects: [] }, ctx, null, depth + 1),
    },
  };
  for (const rule of COMMAND_RULES) {
    const v = rule(inv);
    if (v) return v;
  }
  return { ok: true };
}
