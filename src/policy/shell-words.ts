// A small POSIX-shell lexer for the command policy: it splits a command line into simple commands (words and
// redirections) and hands back the text of every nested command ($(…), `…`, <(…), >(…)) so the classifier can
// look inside. It never executes or expands anything; a word that contains an expansion is marked dynamic and
// keeps its literal spelling. Good enough to read what a command means to do, not a full grammar.

export interface Word {
  /** The word with quotes removed; expansions kept as written ($HOME, $(…)). */
  text: string;
  /** Contains an unquoted or double-quoted expansion ($…, `…`). */
  dynamic: boolean;
}

export interface Redirect {
  op: string;
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

export interface Parsed {
  commands: SimpleCommand[];
  /** Text of nested commands: command and process substitutions. */
  nested: string[];
}

const MAX_INPUT = 256 * 1024;

export function lex(input: string): Parsed {
  const s = input.length > MAX_INPUT ? input.slice(0, MAX_INPUT) : input;
  const commands: SimpleCommand[] = [];
  const nested: string[] = [];
  let cmd: SimpleCommand = { words: [], redirects: [] };
  let text = '';
  let dynamic = false;
  let inWord = false;
  let pendingOp: string | null = null;
  const heredocs: Array<{ delim: string; strip: boolean }> = [];
  let i = 0;

  const endWord = () => {
    if (!inWord) return;
    const w = { text, dynamic };
    if (pendingOp !== null) {
      if (pendingOp === '<<' || pendingOp === '<<-')
        heredocs.push({ delim: text, strip: pendingOp === '<<-' });
      else cmd.redirects.push({ op: pendingOp, target: w });
      pendingOp = null;
    } else cmd.words.push(w);
    text = '';
    dynamic = false;
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (cmd.words.length || cmd.redirects.length) commands.push(cmd);
    cmd = { words: [], redirects: [] };
    pendingOp = null;
  };
  const skipHeredocs = () => {
    // i is just past a newline: skip each pending here-document body.
    while (heredocs.length) {
      const h = heredocs.shift() as { delim: string; strip: boolean };
      for (;;) {
        if (i >= s.length) return;
        const nl = s.indexOf('\n', i);
        const line = s.slice(i, nl < 0 ? s.length : nl);
        i = nl < 0 ? s.length : nl + 1;
        if ((h.strip ? line.replace(/^\t+/, '') : line) === h.delim) break;
      }
    }
  };

  while (i < s.length) {
    const c = s[i] as string;
    if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else if (c === '\n') {
      endCommand();
      i++;
      skipHeredocs();
    } else if (c === '#' && !inWord) {
      const nl = s.indexOf('\n', i);
      i = nl < 0 ? s.length : nl;
    } else if (c === '\\') {
      if (s[i + 1] === '\n') i += 2;
      else {
        text += s[i + 1] ?? '';
        inWord = true;
        i += 2;
      }
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      text += s.slice(i + 1, end < 0 ? s.length : end);
      inWord = true;
      i = end < 0 ? s.length : end + 1;
    } else if (c === '"') {
      i = readDouble(
        s,
        i + 1,
        (t, d) => {
          text += t;
          dynamic ||= d;
        },
        nested,
      );
      inWord = true;
    } else if (c === '$' && s[i + 1] === "'") {
      const end = findAnsiEnd(s, i + 2);
      text += unescapeAnsi(s.slice(i + 2, end));
      inWord = true;
      i = end + 1;
    } else if (c === '$' && s[i + 1] === '(') {
      const end = matchParen(s, i + 1);
      nested.push(s.slice(i + 2, end));
      text += s.slice(i, end + 1);
      dynamic = true;
      inWord = true;
      i = end + 1;
    } else if (c === '`') {
      const end = findBacktick(s, i + 1);
      nested.push(s.slice(i + 1, end));
      text += s.slice(i, end + 1);
      dynamic = true;
      inWord = true;
      i = end + 1;
    } else if (c === '$') {
      text += c;
      dynamic = true;
      inWord = true;
      i++;
    } else if ((c === '<' || c === '>') && s[i + 1] === '(' && !inWord) {
      const end = matchParen(s, i + 1);
      nested.push(s.slice(i + 2, end));
      text += s.slice(i, end + 1);
      dynamic = true;
      inWord = true;
      i = end + 1;
    } else if (c === '<' || c === '>' || (c === '&' && s[i + 1] === '>')) {
      // An all-digit word right before the operator is a file descriptor number, not an argument.
      if (inWord && /^\d+$/.test(text) && !dynamic) {
        text = '';
        inWord = false;
      } else endWord();
      const op = /^(?:&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)/.exec(s.slice(i))?.[0] ?? c;
      i += op.length;
      if (op === '>&' || op === '<&') {
        // `2>&1`, `>&-`: a descriptor duplication; `>& file` (csh style) writes a file.
        const m = /^\s*(\d+|-)(?=[\s;&|)]|$)/.exec(s.slice(i));
        if (m) {
          i += m[0].length;
          continue;
        }
        pendingOp = '>';
        continue;
      }
      pendingOp = op;
    } else if (c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
      endCommand();
      i++;
    } else {
      text += c;
      inWord = true;
      i++;
    }
  }
  endCommand();
  return { commands, nested };
}

function readDouble(
  s: string,
  start: number,
  emit: (text: string, dynamic: boolean) => void,
  nested: string[],
): number {
  let i = start;
  let buf = '';
  let dyn = false;
  while (i < s.length && s[i] !== '"') {
    const c = s[i] as string;
    if (c === '\\' && i + 1 < s.length && '"\\$`\n'.includes(s[i + 1] as string)) {
      if (s[i + 1] !== '\n') buf += s[i + 1];
      i += 2;
    } else if (c === '$' && s[i + 1] === '(') {
      const end = matchParen(s, i + 1);
      nested.push(s.slice(i + 2, end));
      buf += s.slice(i, end + 1);
      dyn = true;
      i = end + 1;
    } else if (c === '`') {
      const end = findBacktick(s, i + 1);
      nested.push(s.slice(i + 1, end));
      buf += s.slice(i, end + 1);
      dyn = true;
      i = end + 1;
    } else {
      if (c === '$') dyn = true;
      buf += c;
      i++;
    }
  }
  emit(buf, dyn);
  return Math.min(i + 1, s.length);
}

/** Index of the `)` matching the `(` at `open`, honouring quotes and nesting; s.length when unmatched. */
function matchParen(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === "'") {
      const e = s.indexOf("'", i + 1);
      i = e < 0 ? s.length : e;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return s.length;
}

function findBacktick(s: string, start: number): number {
  for (let i = start; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '`') return i;
  }
  return s.length;
}

function findAnsiEnd(s: string, start: number): number {
  for (let i = start; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === "'") return i;
  }
  return s.length;
}

function unescapeAnsi(body: string): string {
  const map: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    '\\': '\\',
    "'": "'",
    '"': '"',
    a: '\x07',
    e: '\x1b',
    E: '\x1b',
  };
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_m, e: string) => {
    if (e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^[0-7]+$/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return map[e] ?? e;
  });
}
