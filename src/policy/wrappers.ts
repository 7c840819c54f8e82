// Commands that run another command (env, nice, timeout, sudo, …) and shell reserved words: `unwrap` strips
// them so the policy judges the command that really runs (policy/classify.ts).
import type { Word } from './shell-words.js';

const AS_OTHER_USER = new Set(['sudo', 'doas', 'su', 'pkexec', 'run0']);
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

export function base(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** Strip assignments, reserved words and wrappers (env, nice, timeout, …); null when it runs as another user. */
export function unwrap(words: readonly Word[]): Word[] | null {
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
export function optionsWithValues(takesValue: RegExp, positional = 0) {
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

/** The first word that runs the command as another user, for the refusal's text. */
export function otherUserWord(words: readonly Word[]): string {
  return words.find((w) => AS_OTHER_USER.has(base(w.text)))?.text ?? 'sudo';
}
