// Small pieces both patch parsers share: the internal failure that carries a 1-based line number (caught and
// turned into a value by parsePatch, never seen by callers), quoting for messages, and blank-line tests.

/** Thrown inside the parsers only; `parsePatch` turns it into `{ok: false, line, message}`. */
export class ParseFailure {
  constructor(
    readonly line: number,
    readonly message: string,
  ) {}
}

/** A line quoted for a message, shortened so one bad line cannot flood the model's context. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 80 ? s.slice(0, 77) + '...' : s);
}

export function isBlank(s: string | undefined): boolean {
  return s !== undefined && s.trim() === '';
}

/** `@@ -l[,n] +l[,n] @@`: groups 1-4 are old start, old count, new start, new count. */
export const UNIFIED_RANGE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** 0-based index where a hunk's old lines start, from its header (a count of 0 means "insert after line l"). */
export function hintFromRange(m: RegExpExecArray): number {
  const oldStart = Number(m[1]);
  const oldCount = m[2] === undefined ? 1 : Number(m[2]);
  return oldCount === 0 ? oldStart : Math.max(oldStart - 1, 0);
}
