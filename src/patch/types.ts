// The parsed form of a patch, shared by the parser (which builds it), the matcher (which places hunks) and the
// engine (which turns operations into writes). Plain data only: no file access, no error classes.

/** ' ' context, '-' removed, '+' added. */
export type LineKind = ' ' | '-' | '+';

export interface HunkLine {
  kind: LineKind;
  text: string;
}

export interface Hunk {
  /** 1-based line of the patch where this hunk starts (its `@@` line, or its first line when `@@` was omitted). */
  line: number;
  /** Text after `@@ ` in the envelope: a line above the hunk that restricts where it may match. */
  anchor?: string;
  lines: HunkLine[];
  /** `*** End of File`, or a `\ No newline` marker on the old side: the old lines must end the file. */
  eof: boolean;
  /** `\ No newline at end of file` after the last old-side line. */
  oldNoEol: boolean;
  /** `\ No newline at end of file` after the last new-side line: the result has no final newline. */
  newNoEol: boolean;
  /** Unified diffs: 0-based index in the old file where the old lines start (or where an insertion goes). */
  hint?: number;
}

export interface AddOp {
  kind: 'add';
  path: string;
  line: number;
  lines: string[];
  /** The content has no final newline (`\ No newline at end of file` after the last `+` line). */
  noEol: boolean;
}

export interface DeleteOp {
  kind: 'delete';
  path: string;
  line: number;
}

export interface UpdateOp {
  kind: 'update';
  path: string;
  line: number;
  moveTo?: string;
  /** 1-based patch line of `*** Move to:` (or `rename to`), for errors about the destination. */
  moveLine?: number;
  hunks: Hunk[];
}

export type PatchOp = AddOp | DeleteOp | UpdateOp;

export type PatchFormat = 'envelope' | 'unified';

export type ParseResult =
  { ok: true; ops: PatchOp[]; format: PatchFormat } | { ok: false; line: number; message: string };

export function oldLines(h: Hunk): string[] {
  return h.lines.filter((l) => l.kind !== '+').map((l) => l.text);
}

export function newLines(h: Hunk): string[] {
  return h.lines.filter((l) => l.kind !== '-').map((l) => l.text);
}

/** `\ No newline at end of file`, as diff prints it (any text after the backslash is accepted). */
export function isNoEolMarker(raw: string): boolean {
  return raw.startsWith('\\');
}
