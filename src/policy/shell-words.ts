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
  const lexer = new Lexer(input.length > MAX_INPUT ? input.slice(0, MAX_INPUT) : input);
  return lexer.run();
}

type Heredoc = { delim: string; strip: boolean };

// The lexer's state in one object: the input and position, the command and word being built, and the
// here-documents whose bodies start after the next newline. `step` reads one token at `i` and moves `i` on.
class Lexer {
  private readonly commands: SimpleCommand[] = [];
  private readonly nested: string[] = [];
  private readonly heredocs: Heredoc[] = [];
  private cmd: SimpleCommand = { words: [], redirects: [] };
  private text = '';
  private dynamic = false;
  private inWord = false;
  private pendingOp: string | null = null;
  private i = 0;

  constructor(private readonly s: string) {}

  run(): Parsed {
    while (this.i < this.s.length) this.step(this.s[this.i] as string);
    this.endCommand();
    return { commands: this.commands, nested: this.nested };
  }

  private step(c: string): void {
    const { s, i } = this;
    const next = s[i + 1];
    if (c === ' ' || c === '\t') {
      this.endWord();
      this.i++;
    } else if (c === '\n') {
      this.endCommand();
      this.i++;
      this.skipHeredocs();
    } else if (c === '#' && !this.inWord) {
      const nl = s.indexOf('\n', i);
      this.i = nl < 0 ? s.length : nl;
    } else if (c === '\\') this.backslash();
    else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      this.append(s.slice(i + 1, end < 0 ? s.length : end), false);
      this.i = end < 0 ? s.length : end + 1;
    } else if (c === '"') {
      this.i = readDouble(s, i + 1, (t, d) => this.append(t, d), this.nested);
      this.inWord = true;
    } else if (c === '$' && next === "'") {
      const end = findAnsiEnd(s, i + 2);
      this.append(unescapeAnsi(s.slice(i + 2, end)), false);
      this.i = end + 1;
    } else if (c === '$' && next === '(') this.substitution(i + 2, matchParen(s, i + 1));
    else if (c === '`') this.substitution(i + 1, findBacktick(s, i + 1));
    else if (c === '$') this.literal(c, true);
    else if ((c === '<' || c === '>') && next === '(' && !this.inWord)
      this.substitution(i + 2, matchParen(s, i + 1));
    else if (c === '<' || c === '>' || (c === '&' && next === '>')) this.redirect(c);
    else if (c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
      this.endCommand();
      this.i++;
    } else this.literal(c, false);
  }

  /** Adds text to the current word (starting one if needed). */
  private append(t: string, dynamic: boolean): void {
    this.text += t;
    this.dynamic ||= dynamic;
    this.inWord = true;
  }

  private literal(c: string, dynamic: boolean): void {
    this.append(c, dynamic);
    this.i++;
  }

  private backslash(): void {
    const next = this.s[this.i + 1];
    if (next !== '\n') this.append(next ?? '', false);
    this.i += 2;
  }

  /** A command or process substitution whose body runs from `bodyStart` to `end` (its closing character). */
  private substitution(bodyStart: number, end: number): void {
    this.nested.push(this.s.slice(bodyStart, end));
    this.append(this.s.slice(this.i, end + 1), true);
    this.i = end + 1;
  }

  private redirect(c: string): void {
    // An all-digit word right before the operator is a file descriptor number, not an argument.
    if (this.inWord && /^\d+$/.test(this.text) && !this.dynamic) {
      this.text = '';
      this.inWord = false;
    } else this.endWord();
    const op = /^(?:&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)/.exec(this.s.slice(this.i))?.[0] ?? c;
    this.i += op.length;
    if (op !== '>&' && op !== '<&') {
      this.pendingOp = op;
      return;
    }
    // `2>&1`, `>&-`: a descriptor duplication; `>& file` (csh style) writes a file.
    const m = /^\s*(\d+|-)(?=[\s;&|)]|$)/.exec(this.s.slice(this.i));
    if (m) this.i += m[0].length;
    else this.pendingOp = '>';
  }

  private endWord(): void {
    if (!this.inWord) return;
    const w = { text: this.text, dynamic: this.dynamic };
    const op = this.pendingOp;
    if (op === '<<' || op === '<<-') this.heredocs.push({ delim: this.text, strip: op === '<<-' });
    else if (op !== null) this.cmd.redirects.push({ op, target: w });
    else this.cmd.words.push(w);
    this.pendingOp = null;
    this.text = '';
    this.dynamic = false;
    this.inWord = false;
  }

  private endCommand(): void {
    this.endWord();
    if (this.cmd.words.length || this.cmd.redirects.length) this.commands.push(this.cmd);
    this.cmd = { words: [], redirects: [] };
    this.pendingOp = null;
  }

  /** `i` is just past a newline: skips each pending here-document body. */
  private skipHeredocs(): void {
    const s = this.s;
    for (let h = this.heredocs.shift(); h; h = this.heredocs.shift()) {
      for (;;) {
        if (this.i >= s.length) return;
        const nl = s.indexOf('\n', this.i);
        const line = s.slice(this.i, nl < 0 ? s.length : nl);
        this.i = nl < 0 ? s.length : nl + 1;
        if ((h.strip ? line.replace(/^\t+/, '') : line) === h.delim) break;
      }
    }
  }
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
