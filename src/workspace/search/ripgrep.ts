// The ripgrep engine: rg --json, streamed and parsed as it arrives, stopped early past the collect cap.
// Ignore semantics are pinned so they equal the JS engine's: only .gitignore (+ .git/info/exclude), with or
// without a git repository, no parent/global/.ignore files. Globs run relative to the search base in both.
import path from 'node:path';
import { runArgv } from '../../process/argv.js';
import { ToolError } from '../../core/tool-error.js';
import { excludedByAncestor } from '../glob.js';
import { DEFAULT_EXCLUDES } from '../ignore-rules.js';
import { truncateUtf8 } from '../text.js';
import { collectCap, finish, smartCaseSensitive, type SearchMatch, type SearchOutcome, type SearchRequest } from './types.js';

const RG_TIMEOUT_MS = 60_000;

export function rgArgs(req: SearchRequest): string[] {
  const a = ['--json', '--no-config', '--no-messages', '--no-require-git', '--no-ignore-parent', '--no-ignore-global', '--no-ignore-dot'];
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
  a.push('--', req.baseIsFile ? './' + path.basename(req.baseAbs) : './');
  return a;
}

interface RgText {
  text?: string;
  bytes?: string;
}
const decodeRg = (t: RgText | undefined): string =>
  t?.text ?? (t?.bytes ? Buffer.from(t.bytes, 'base64').toString('utf8') : '');
const stripEol = (s: string) => s.replace(/\r?\n$/, '');

export async function searchRipgrep(rgPath: string, req: SearchRequest, env: Record<string, string>): Promise<SearchOutcome> {
  const cwd = req.baseIsFile ? path.dirname(req.baseAbs) : req.baseAbs;
  const prefix = req.baseIsFile ? path.posix.dirname(req.baseRel) : req.baseRel;
  const cap = collectCap(req.maxResults);
  const all: SearchMatch[] = [];
  let capped = false;
  // Per file: every line rg printed (matches and context), so before/after can be cut the same way as the JS engine.
  let fileLines = new Map<number, string>();
  let fileMatches: Array<{ line: number; byteCol: number; text: string }> = [];
  let filePath = '';
  const flushFile = () => {
    for (const m of fileMatches) {
      const before: string[] = [];
      const after: string[] = [];
      for (let l = m.line - req.contextLines; l < m.line; l++) if (fileLines.has(l)) before.push(cut(fileLines.get(l) as string));
      for (let l = m.line + 1; l <= m.line + req.contextLines; l++) if (fileLines.has(l)) after.push(cut(fileLines.get(l) as string));
      const column = [...Buffer.from(m.text).subarray(0, m.byteCol).toString('utf8')].length + 1;
      all.push({ path: filePath, line: m.line, column, preview: cut(m.text), before, after });
    }
    fileLines = new Map();
    fileMatches = [];
  };
  const cut = (s: string) => truncateUtf8(s, req.maxPreviewBytes).text;
  const toRel = (p: string) => {
    const local = p.startsWith('./') ? p.slice(2) : p;
    return { rel: prefix === '.' ? local : `${prefix}/${local}`, local };
  };
  let pending = '';
  let keep = true;
  const onLine = (line: string) => {
    if (!line) return;
    const msg = JSON.parse(line) as { type: string; data: Record<string, unknown> };
    if (msg.type === 'begin') {
      const { rel, local } = toRel(decodeRg(msg.data.path as RgText));
      filePath = rel;
      keep = !(req.include && !req.include(local)) && !(req.exclude && excludedByAncestor(req.exclude, local));
    } else if (msg.type === 'end') {
      if (keep) flushFile();
      else fileMatches = [];
      fileLines = new Map();
    } else if ((msg.type === 'match' || msg.type === 'context') && keep) {
      const ln = msg.data.line_number as number;
      const text = stripEol(decodeRg(msg.data.lines as RgText));
      fileLines.set(ln, text);
      if (msg.type === 'match') {
        const sub = (msg.data.submatches as Array<{ start: number }>)[0];
        fileMatches.push({ line: ln, byteCol: sub?.start ?? 0, text });
        if (all.length + fileMatches.length > cap) capped = true;
      }
    }
  };
  const r = await runArgv(rgPath, rgArgs(req), {
    cwd,
    env,
    timeoutMs: RG_TIMEOUT_MS,
    maxStdoutBytes: Number.MAX_SAFE_INTEGER,
    onStdout: (chunk) => {
      const text = pending + chunk.toString('utf8');
      const lines = text.split('\n');
      pending = lines.pop() as string;
      for (const l of lines) onLine(l);
      return !capped;
    },
  });
  if (r.spawnError) throw new Error(`ripgrep could not start: ${r.spawnError}`);
  if (!capped) onLine(pending);
  if (capped) flushFile();
  if (r.code === 2 && !capped && /regex parse error|error parsing|unclosed|unrecognized/i.test(r.stderr)) {
    throw new ToolError('INVALID_ARGUMENT', `invalid regular expression: ${r.stderr.trim().split('\n').slice(-1)[0]}`, { stderr: r.stderr.trim() }, {
      suggestion: 'Fix the pattern, or pass "regex": false to search for the literal text.',
    });
  }
  if (r.timedOut) capped = true;
  return finish(all.slice(0, cap), req, capped, 'ripgrep');
}
