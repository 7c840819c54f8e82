// Parsers for diff output: `--numstat -z` records (counts and exact paths, renames included) and the
// `diff --git` sections of a patch (one per file, in the same order as numstat), with what each header says
// (added, deleted, renamed, copied, mode change, binary). Pure; paths stay as git printed them.

export interface NumstatEntry {
  path: string;
  /** Source path of a rename or copy. */
  oldPath?: string;
  /** null for binary files (`-`). */
  additions: number | null;
  deletions: number | null;
}

export interface ParsedNumstat {
  entries: NumstatEntry[];
  /** Byte offset just after the last complete record (and the separator NUL, when one follows). */
  end: number;
  /** Output ended inside a record (bound reached). */
  cut: boolean;
}

const COUNT = /^(\d+|-)\t(\d+|-)\t/;

/** Parses NUL-terminated numstat records from `start`, stopping at anything that is not a record. */
export function parseNumstatZ(buf: Buffer | string, start = 0): ParsedNumstat {
  const s = typeof buf === 'string' ? buf : buf.toString('utf8');
  const entries: NumstatEntry[] = [];
  let pos = start;
  let cut = false;
  while (pos < s.length) {
    const m = COUNT.exec(s.slice(pos, pos + 48));
    if (!m) break;
    const num = (v: string) => (v === '-' ? null : Number(v));
    let p = pos + m[0].length;
    const nul = s.indexOf('\0', p);
    if (nul < 0) {
      cut = true;
      break;
    }
    if (nul === p) {
      // rename/copy: an empty path field, then old and new paths each NUL-terminated
      const n1 = s.indexOf('\0', p + 1);
      const n2 = n1 < 0 ? -1 : s.indexOf('\0', n1 + 1);
      if (n2 < 0) {
        cut = true;
        break;
      }
      entries.push({
        oldPath: s.slice(p + 1, n1),
        path: s.slice(n1 + 1, n2),
        additions: num(m[1]!),
        deletions: num(m[2]!),
      });
      p = n2 + 1;
    } else {
      entries.push({ path: s.slice(p, nul), additions: num(m[1]!), deletions: num(m[2]!) });
      p = nul + 1;
    }
    pos = p;
  }
  return { entries, end: pos, cut };
}

/**
 * `git diff --numstat -z --patch` in one run: the numstat records, a NUL, then the patch (at most maxBytes + 1
 * bytes of it, `cut` when there was more). Undefined when the output cannot be split so: the numstat records
 * were cut, or the run's bound cut the output before maxBytes of patch (more names than it left room for).
 */
export function splitNumstatPatch(
  out: Buffer,
  truncated: boolean,
  maxBytes: number,
): { num: Buffer; patch: Buffer; cut: boolean } | undefined {
  const parsed = parseNumstatZ(out.toString('latin1'));
  // latin1 keeps one character per byte, so `end` is a byte offset. No output: nothing changed.
  if (out.length === 0) return { num: out, patch: out, cut: false };
  if (parsed.cut || out[parsed.end] !== 0) return undefined;
  const num = out.subarray(0, parsed.end);
  const patch = out.subarray(parsed.end + 1);
  // Cut by the run's bound: the patch is longer than max_bytes only if what came of it already is.
  if (truncated && patch.length <= maxBytes) return undefined;
  return { num, patch: patch.subarray(0, maxBytes + 1), cut: truncated || patch.length > maxBytes + 1 };
}

export type FileChangeKind = 'added' | 'deleted' | 'modified' | 'renamed' | 'copied';

export interface PatchSection {
  /** The section's text, from its `diff --git` (or `diff --cc`) line through the end of its last hunk. */
  text: string;
  /** Path of the file after the change (as git printed it, unquoted), or null for text before any section. */
  path: string | null;
  kind: FileChangeKind;
  binary: boolean;
  modeChange: boolean;
  /** A combined diff (`diff --cc`) of an unmerged path. */
  combined: boolean;
}

/** Undoes git's C-style quoting of a path (`"a/\303\274.txt"`); returns other strings unchanged. */
export function unquoteC(s: string): string {
  if (!(s.length >= 2 && s.startsWith('"') && s.endsWith('"'))) return s;
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  const esc: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const n = body[i + 1] ?? '';
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(esc[n] ?? n.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `--- a/x` / `+++ b/x` name: unquoted, prefix removed, git's trailing TAB (names with spaces) dropped. */
function fileLineName(rest: string, prefix: string): string | null {
  const name = unquoteC(rest.replace(/\t$/, ''));
  if (name === '/dev/null') return null;
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/** What a section header says about the file: its path (after the change), kind, binary, mode change. */
export function parseDiffHeader(section: string): Omit<PatchSection, 'text'> {
  let kind: FileChangeKind = 'modified';
  let binary = false;
  let modeChange = false;
  let renameTo: string | null = null;
  let plus: string | null = null;
  let minus: string | null = null;
  const lines = section.split('\n');
  const first = lines[0] ?? '';
  const combined = first.startsWith('diff --cc ') || first.startsWith('diff --combined ');
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i] as string;
    if (l.startsWith('@@')) break;
    if (l.startsWith('new file mode')) kind = 'added';
    else if (l.startsWith('deleted file mode')) kind = 'deleted';
    else if (l.startsWith('rename from ')) kind = 'renamed';
    else if (l.startsWith('rename to ')) renameTo = unquoteC(l.slice(10));
    else if (l.startsWith('copy from ')) kind = 'copied';
    else if (l.startsWith('copy to ')) renameTo = unquoteC(l.slice(8));
    else if (l.startsWith('old mode') || l.startsWith('new mode')) modeChange = true;
    else if (l.startsWith('Binary files ') || l === 'GIT binary patch') binary = true;
    else if (l.startsWith('+++ ')) plus = fileLineName(l.slice(4), 'b/');
    else if (l.startsWith('--- ')) minus = fileLineName(l.slice(4), 'a/');
  }
  let path = renameTo ?? plus ?? minus;
  if (path === null && combined) path = unquoteC(first.replace(/^diff --(cc|combined) /, ''));
  if (path === null) path = symmetricGitHeaderPath(first.slice('diff --git '.length));
  return { path, kind, binary, modeChange, combined };
}

/** `a/P b/P` (same P on both sides, as for binary or mode-only changes) → P; null when it is not symmetric. */
function symmetricGitHeaderPath(rest: string): string | null {
  if (rest.startsWith('"')) {
    const m = /^("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")$/.exec(rest);
    if (!m) return null;
    const a = unquoteC(m[1]!);
    const b = unquoteC(m[2]!);
    return b.startsWith('b/') ? b.slice(2) : a.startsWith('a/') ? a.slice(2) : null;
  }
  if ((rest.length - 5) % 2 !== 0) return null;
  const n = (rest.length - 5) / 2;
  const a = rest.slice(2, 2 + n);
  return rest.startsWith('a/') && rest.slice(2 + n) === ` b/${a}` ? a : null;
}

const SECTION_START = /^diff --(git|cc|combined) /;

/** Splits a patch into per-file sections; text before the first section is a section with path null. */
export function splitPatch(patch: string): PatchSection[] {
  const starts: number[] = [];
  let pos = 0;
  while (pos < patch.length) {
    const nl = patch.indexOf('\n', pos);
    const end = nl < 0 ? patch.length : nl + 1;
    if (patch.startsWith('diff --', pos) && SECTION_START.test(patch.slice(pos, pos + 20))) starts.push(pos);
    pos = end;
  }
  const out: PatchSection[] = [];
  if (starts[0] !== 0 && patch.length > 0) {
    out.push({
      text: patch.slice(0, starts[0] ?? patch.length),
      path: null,
      kind: 'modified',
      binary: false,
      modeChange: false,
      combined: false,
    });
  }
  starts.forEach((s, k) => {
    const text = patch.slice(s, starts[k + 1] ?? patch.length);
    out.push({ text, ...parseDiffHeader(text) });
  });
  return out;
}
