// How text from outside the server — a command line, a file name, output, a model's reason, a client's name, a
// host — is shown to a person (docs/console.md#what-you-see-is-what-runs): nothing in it may hide, reorder or
// cut what is shown without a mark. Control characters (C0, DEL, C1), bidirectional controls, zero-width and
// other invisible format characters, line and paragraph separators and lone surrogates become marks such as
// `\u202E`; a newline becomes `⏎` and a real line break (a command), stays a line break (output, a diff), or
// becomes `\n` (a one-line field: a name, a path, a host); runs of spaces and of line breaks are counted instead
// of drawn; a text longer than its cap (or, a command, than its line cap) keeps its start and its end around a
// mark with the number of characters hidden. One function for every such field: the console page bundles it
// (src/console/page/app.js) and the sign-in pages render with it (src/oauth/html.ts); both draw `mark` parts
// distinctly and isolate each field from the page's own text (`<bdi>`).

/** `line`: one line (newlines escaped); `command`: `⏎` before each line break; `block`: output, diffs. */
export type VisibleMode = 'line' | 'command' | 'block';

export interface VisibleOptions {
  mode: VisibleMode;
  /** The most characters shown; a longer text shows its start and its end (half each). */
  max: number;
  /** The text is already the two ends of a longer one: this many characters were left out at its middle. */
  omitted?: number;
}

/** In order: a `mark` is drawn distinctly (an escape, a count, the cut); other parts are the text as it is. */
export interface VisiblePart {
  mark: boolean;
  text: string;
}

export interface Visible {
  parts: VisiblePart[];
  /** The whole text's length in characters (UTF-16 code units, as JavaScript counts them). */
  length: number;
  /** Characters not shown (the cut in the middle). */
  hidden: number;
}

/** A command shows at most this many lines: the first and the last half. */
export const MAX_COMMAND_LINES = 40;
/** From this many spaces in a row, a count is shown instead. */
const SPACE_RUN = 8;
/** From this many line breaks in a row, a count is shown instead. */
const BREAK_RUN = 3;

// Line breaks, runs of spaces, and every character that is invisible, moves other text or breaks lines: Cc
// (C0, DEL, C1), Cf (bidi controls, zero-width, U+FEFF, U+061C, …), Zl/Zp (U+2028/9), lone surrogates, and the
// Hangul fillers that draw nothing.
const SPECIAL = /\n+| {8,}|[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/gu;
const NAMED: Record<string, string> = { '\t': '\\t', '\r': '\\r', '\n': '\\n' };

/** `1234567` → `1,234,567`. */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function escapeOf(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase();
  return cp > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}

/** The shown lines' breaks: each line break, or a run of BREAK_RUN or more as one (it is shown as one). */
function lineBreaks(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(/\n+/g)) {
    const at = m.index ?? 0;
    if (m[0].length >= BREAK_RUN) out.push([at, at + m[0].length]);
    else for (let i = 0; i < m[0].length; i++) out.push([at + i, at + i + 1]);
  }
  return out;
}

/** Where the shown start ends and the shown end begins, or undefined when the whole text is shown. */
function cutPoints(text: string, o: VisibleOptions): [number, number] | undefined {
  const half = Math.floor(o.max / 2);
  const long = text.length > o.max || (o.omitted ?? 0) > 0;
  let head = long ? Math.min(half, text.length) : text.length;
  let tail = long ? Math.max(head, text.length - half) : 0;
  if (o.mode === 'command') {
    const b = lineBreaks(text);
    const keep = MAX_COMMAND_LINES / 2;
    if (b.length >= MAX_COMMAND_LINES) {
      head = Math.min(head, (b[keep - 1] as [number, number])[0]);
      tail = Math.max(tail, (b[b.length - keep] as [number, number])[1]);
    }
  }
  if (tail < head || (tail === head && !long)) return undefined;
  // Never between the two halves of a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text.charAt(head - 1))) head--;
  if (/[\uDC00-\uDFFF]/.test(text.charAt(tail))) tail++;
  return [head, tail];
}

function push(parts: VisiblePart[], mark: boolean, text: string): void {
  const last = parts[parts.length - 1];
  if (last && last.mark === mark && !mark) last.text += text;
  else parts.push({ mark, text });
}

function breaks(parts: VisiblePart[], n: number, mode: VisibleMode): void {
  if (mode === 'block') return push(parts, false, '\n'.repeat(n));
  const sign = mode === 'command' ? '⏎' : '\\n';
  const mark = n >= BREAK_RUN ? `${sign} ×${grouped(n)}` : sign.repeat(n);
  push(parts, true, mark);
  if (mode === 'command') push(parts, false, '\n');
}

/** One piece of text (no cut inside) into parts. */
function render(parts: VisiblePart[], text: string, mode: VisibleMode): void {
  let at = 0;
  for (const m of text.matchAll(SPECIAL)) {
    const s = m[0];
    const i = m.index ?? 0;
    if (i > at) push(parts, false, text.slice(at, i));
    at = i + s.length;
    if (s[0] === '\n') breaks(parts, s.length, mode);
    else if (s[0] === ' ') {
      if (mode === 'block' || s.length < SPACE_RUN) push(parts, false, s);
      else push(parts, true, `␠ ×${grouped(s.length)}`);
    } else if (s === '\t' && mode === 'block') push(parts, false, s);
    else push(parts, true, escapeOf(s));
  }
  if (at < text.length) push(parts, false, text.slice(at));
}

/** The text as it may be shown: see the header. */
export function visibleText(text: string, o: VisibleOptions): Visible {
  const length = text.length + (o.omitted ?? 0);
  const parts: VisiblePart[] = [];
  const cut = cutPoints(text, o);
  if (!cut) {
    render(parts, text, o.mode);
    return { parts, length, hidden: 0 };
  }
  const [head, tail] = cut;
  const hidden = tail - head + (o.omitted ?? 0);
  render(parts, text.slice(0, head), o.mode);
  push(parts, true, ` … ${grouped(hidden)} characters hidden (${grouped(length)} in all) … `);
  if (o.mode === 'command') push(parts, false, '\n');
  render(parts, text.slice(tail), o.mode);
  return { parts, length, hidden };
}

/** A text kept for showing later: its start and end when longer than `max` (see VisibleOptions.omitted). */
export function keepEnds(text: string, max: number): { text: string; omitted: number } {
  if (text.length <= max) return { text, omitted: 0 };
  const half = Math.floor(max / 2);
  let head = half;
  let tail = text.length - half;
  if (/[\uD800-\uDBFF]/.test(text.charAt(head - 1))) head--;
  if (/[\uDC00-\uDFFF]/.test(text.charAt(tail))) tail++;
  return { text: text.slice(0, head) + text.slice(tail), omitted: tail - head };
}
