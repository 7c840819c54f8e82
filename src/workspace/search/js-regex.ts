// The JS engine's matcher. Regular expressions run on RE2 (`re2js`, a pure-JS port: linear time in the line's
// length, so no pattern can freeze the server the way a backtracking engine does on `(a+)+$`). The query has
// ripgrep's syntax (Rust regex); what RE2 spells differently is translated here (\uXXXX, the Unicode meaning
// of \d \s \w), and what neither engine can do without backtracking (look-around, backreferences, atomic
// groups) is refused by name, as ripgrep refuses it. Literal queries use a native RegExp of the escaped text
// (no backtracking is possible there). \b stays RE2's ASCII word boundary (docs/tools.md#the-tools).
import { RE2JS } from 're2js';
import { invalidRegex, smartCaseSensitive, type SearchRequest } from './types.js';

/** Index (UTF-16 units) of the first match in `line`, or -1. */
export type LineMatcher = (line: string) => number;

/** Rust's Unicode classes in RE2 spelling: outside a class, and as members inside one. */
const CLASSES: Record<string, { alone: string; member?: string }> = {
  d: { alone: '\\p{Nd}', member: '\\p{Nd}' },
  D: { alone: '\\P{Nd}', member: '\\P{Nd}' },
  s: { alone: '[\\t-\\r\\x{85}\\p{Z}]', member: '\\t-\\r\\x{85}\\p{Z}' },
  S: { alone: '[^\\t-\\r\\x{85}\\p{Z}]' },
  w: { alone: '[\\p{L}\\p{M}\\p{Nd}\\p{Pc}]', member: '\\p{L}\\p{M}\\p{Nd}\\p{Pc}' },
  W: { alone: '[^\\p{L}\\p{M}\\p{Nd}\\p{Pc}]' },
};

const UNSUPPORTED: Array<[RegExp, string]> = [
  [/^\(\?<?[=!]/, 'look-around ((?=…), (?!…), (?<=…), (?<!…)) is not supported'],
  [/^\(\?>/, 'atomic groups ((?>…)) are not supported'],
];

function unsupported(what: string): never {
  throw invalidRegex(`${what}; search without it, or narrow with include_globs`, { unsupported: what });
}

/** The pattern in RE2 syntax, or INVALID_ARGUMENT naming the feature RE2 cannot run. */
export function toRe2Syntax(p: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (c === '\\') {
      const e = p[i + 1] ?? '';
      i++;
      if (/[1-9]/.test(e) || (e === 'k' && p[i + 1] === '<'))
        unsupported(`backreferences (\\${e}${e === 'k' ? '<…>' : ''}) are not supported`);
      const cls = CLASSES[e];
      if (cls && (!inClass || cls.member)) out += inClass ? cls.member : cls.alone;
      else if (e === 'u') {
        const m = /^\{([0-9a-fA-F]{1,6})\}|^([0-9a-fA-F]{4})/.exec(p.slice(i + 1));
        if (!m) throw invalidRegex('\\u must be followed by four hex digits or {hex}');
        out += `\\x{${m[1] ?? m[2]}}`;
        i += m[0].length;
      } else out += `\\${e}`;
      continue;
    }
    if (inClass) {
      if (c === '[' && p[i + 1] === ':') {
        const end = p.indexOf(':]', i + 2);
        if (end > 0) {
          out += p.slice(i, end + 2);
          i = end + 1;
          continue;
        }
      }
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // A `]` first in a class (after an optional `^`) is a literal, not the end.
      if (p[i + 1] === '^') out += p[++i];
      if (p[i + 1] === ']') out += p[++i];
      continue;
    }
    if (c === '(' && p[i + 1] === '?')
      for (const [re, what] of UNSUPPORTED) if (re.test(p.slice(i, i + 4))) unsupported(what);
    out += c;
  }
  return out;
}

export function compileQuery(req: SearchRequest): LineMatcher {
  const sensitive = req.caseSensitive ?? smartCaseSensitive(req.query, req.regex);
  if (!req.regex) {
    const re = new RegExp(req.query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), sensitive ? 'u' : 'iu');
    return (line) => {
      const m = re.exec(line);
      return m ? m.index : -1;
    };
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(toRe2Syntax(req.query), sensitive ? 0 : RE2JS.CASE_INSENSITIVE);
  } catch (e) {
    if (e instanceof Error && e.name === 'ToolError') throw e;
    throw invalidRegex((e as Error).message.replace(/^error parsing regexp: /, ''));
  }
  return (line) => {
    const m = re.matcher(line);
    return m.find() ? m.start() : -1;
  };
}
