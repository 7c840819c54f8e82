// The ripgrep engine: rg's plain NUL-separated output, parsed as bytes as it arrives (only what a preview shows
// is decoded), stopped early past the collect cap.
// Ignore semantics are pinned so they equal the JS engine's: only .gitignore (+ .git/info/exclude), with or
// without a git repository, no parent/global/.ignore files. Globs run relative to the search base in both.
import path from 'node:path';
import { runArgv } from '../../process/argv.js';
import type { ToolJail } from '../../process/jail.js';
import { closeDir, openDirForTool } from '../confined-fs.js';
import type { LineProof } from './verify.js';
import type { WorkspaceRoot } from '../paths.js';
import { excludedByAncestor } from '../glob.js';
import { DEFAULT_EXCLUDES } from '../ignore-rules.js';
import { codePointLength, truncateUtf8 } from '../text.js';
import {
  collectCap,
  finish,
  invalidRegex,
  smartCaseSensitive,
  type SearchMatch,
  type SearchOutcome,
  type SearchRequest,
} from './types.js';

const RG_TIMEOUT_MS = 60_000;

export function rgArgs(req: SearchRequest): string[] {
  // Plain output with NUL after the path (`path\0LINE:COL:text` for matches, `path\0LINE-text` for context):
  // --json would send every long minified line whole and escaped, several MB for a few hundred matches.
  const a = [
    '--no-config',
    '--no-messages',
    '--no-heading',
    '--with-filename',
    '--null',
    '--line-number',
    '--column',
    // Each line's byte offset in its file: what verify.ts re-reads to prove the line came from inside.
    '--byte-offset',
  ];
  a.push(
    '--no-context-separator',
    '--color',
    'never',
    '--no-require-git',
    '--no-ignore-parent',
    '--no-ignore-global',
    '--no-ignore-dot',
  );
  if (!req.regex) a.push('--fixed-strings');
  a.push('--regexp', req.query);
  const sensitive = req.caseSensitive ?? smartCaseSensitive(req.query, req.regex);
  a.push(sensitive ? '--case-sensitive' : '--ignore-case');
  if (req.contextLines > 0) a.push('--context', String(req.contextLines));
  if (req.includeHidden) a.push('--hidden');
  if (req.includeIgnored) a.push('--no-ignore');
  else for (const d of DEFAULT_EXCLUDES) a.push('--glob', `!${d}/`);
  for (const g of req.includeGlobs) a.push('--glob', g);
  for (const g of req.excludeGlobs) a.push('--glob', `!${g}`);
  a.push('--', req.baseIsFile ? './' + path.basename(req.baseReal) : './');
  return a;
}

/** Reads a decimal number from `b` at `i`; returns [value, index after the digits]. */
function readNumber(b: Buffer, i: number): [number, number] {
  let n = 0;
  while (i < b.length && (b[i] as number) >= 48 && (b[i] as number) <= 57)
    n = n * 10 + ((b[i++] as number) - 48);
  return [n, i];
}

/** Text of a line for a preview: only the bytes a preview can show are decoded. */
function previewOf(text: Buffer, maxBytes: number): string {
  let end = text.length;
  if (end > 0 && text[end - 1] === 13) end--;
  return truncateUtf8(text.toString('utf8', 0, Math.min(end, maxBytes + 4)), maxBytes).text;
}

interface FileState {
  rel: string;
  keep: boolean;
  lines: Map<number, string>;
  matches: Array<{ line: number; column: number; preview: string }>;
}

/**
 * Runs rg in the search base. The base is opened and verified first and rg starts in it through the
 * descriptor (`cwd` /proc/self/fd/N, resolved by the child before exec), so a swap of the base itself is not
 * followed; swaps below it are caught by the caller's verification (verify.ts).
 */
export async function searchRipgrep(
  rgPath: string,
  root: WorkspaceRoot,
  req: SearchRequest,
  env: Record<string, string>,
  jail?: ToolJail,
): Promise<{ outcome: SearchOutcome; proofs: LineProof[] }> {
  const dir = openDirForTool(
    root.real,
    req.baseIsFile ? path.dirname(req.baseReal) : req.baseReal,
    req.baseIsFile ? path.posix.dirname(req.baseRel) : req.baseRel,
  );
  try {
    return await runRipgrep(rgPath, dir.at, req, env, jail);
  } finally {
    closeDir(dir);
  }
}

async function runRipgrep(
  rgPath: string,
  cwd: string,
  req: SearchRequest,
  env: Record<string, string>,
  jail?: ToolJail,
): Promise<{ outcome: SearchOutcome; proofs: LineProof[] }> {
  const prefix = req.baseIsFile ? path.posix.dirname(req.baseRel) : req.baseRel;
  const cap = collectCap(req.maxResults);
  const all: SearchMatch[] = [];
  const proofs: LineProof[] = [];
  let capped = false;
  let file: FileState | undefined;
  const flush = () => {
    if (!file || !file.keep) return;
    const n = req.contextLines;
    for (const m of file.matches) {
      const before: string[] = [];
      const after: string[] = [];
      for (let l = m.line - n; l < m.line; l++)
        if (file.lines.has(l)) before.push(file.lines.get(l) as string);
      for (let l = m.line + 1; l <= m.line + n; l++)
        if (file.lines.has(l)) after.push(file.lines.get(l) as string);
      all.push({ path: file.rel, line: m.line, column: m.column, preview: m.preview, before, after });
    }
  };
  const onLine = (b: Buffer) => {
    const nul = b.indexOf(0);
    if (nul < 0) return;
    const local = b.toString('utf8', b[0] === 46 && b[1] === 47 ? 2 : 0, nul);
    if (!file || file.rel !== (prefix === '.' ? local : `${prefix}/${local}`)) {
      flush();
      const rel = prefix === '.' ? local : `${prefix}/${local}`;
      const keep =
        !(req.include && !req.include(local)) && !(req.exclude && excludedByAncestor(req.exclude, local));
      file = { rel, keep, lines: new Map(), matches: [] };
    }
    if (!file.keep) return;
    const [line, i] = readNumber(b, nul + 1);
    const rel = file.rel;
    const proof = (offset: number, text: Buffer) =>
      proofs.push({ rel, offset, head: Buffer.from(text.subarray(0, req.maxPreviewBytes + 4)) });
    if (b[i] === 58 /* ':' match: LINE:COL:OFFSET:text */) {
      const [byteCol, j] = readNumber(b, i + 1);
      const [offset, k] = readNumber(b, j + 1);
      const text = b.subarray(k + 1);
      const preview = previewOf(text, req.maxPreviewBytes);
      const column = codePointLength(text.toString('utf8', 0, byteCol - 1)) + 1;
      file.lines.set(line, preview);
      file.matches.push({ line, column, preview });
      proof(offset, text);
      if (all.length + file.matches.length > cap) capped = true;
    } else {
      // context: LINE-OFFSET-text
      const [offset, k] = readNumber(b, i + 1);
      const text = b.subarray(k + 1);
      file.lines.set(line, previewOf(text, req.maxPreviewBytes));
      proof(offset, text);
    }
  };
  // A partial line waits as a list of chunks and is joined once, when its newline arrives (long minified lines
  // span many chunks; joining on every chunk would be quadratic).
  let pending: Buffer[] = [];
  const r = await runArgv(rgPath, rgArgs(req), {
    cwd,
    env,
    timeoutMs: RG_TIMEOUT_MS,
    maxStdoutBytes: Number.MAX_SAFE_INTEGER,
    jail,
    onStdout: (chunk) => {
      let start = 0;
      let nl = chunk.indexOf(10);
      if (nl === -1) {
        pending.push(chunk);
        return true;
      }
      if (pending.length) {
        pending.push(chunk.subarray(0, nl));
        onLine(Buffer.concat(pending));
        pending = [];
        start = nl + 1;
        nl = chunk.indexOf(10, start);
      }
      while (nl !== -1 && !capped) {
        onLine(chunk.subarray(start, nl));
        start = nl + 1;
        nl = chunk.indexOf(10, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
      return !capped;
    },
  });
  if (r.spawnError) throw new Error(`ripgrep could not start: ${r.spawnError}`);
  if (pending.length && !capped) onLine(Buffer.concat(pending));
  flush();
  if (
    r.code === 2 &&
    all.length === 0 &&
    /regex parse error|error parsing|unclosed|unrecognized/i.test(r.stderr)
  ) {
    throw invalidRegex(r.stderr.trim().split('\n').slice(-1)[0] ?? '', { stderr: r.stderr.trim() });
  }
  if (r.timedOut) capped = true;
  return { outcome: finish(all.slice(0, cap), req, capped, 'ripgrep'), proofs };
}
