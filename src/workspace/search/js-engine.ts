// The JS engine: the fallback when no ripgrep binary is usable, built to return what the ripgrep engine
// returns (same walker rules, smart case, per-line matching, binary files skipped, sorted output).
import type { WorkspaceRoot } from '../paths.js';
import { codePointLength, truncateUtf8 } from '../text.js';
import { walk } from '../walk.js';
import { readVerified } from './verify.js';
import {
  collectCap,
  finish,
  invalidRegex,
  smartCaseSensitive,
  type SearchMatch,
  type SearchOutcome,
  type SearchRequest,
} from './types.js';

export function compileQuery(req: SearchRequest): RegExp {
  const sensitive = req.caseSensitive ?? smartCaseSensitive(req.query, req.regex);
  const source = req.regex ? req.query : req.query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  try {
    return new RegExp(source, sensitive ? 'u' : 'iu');
  } catch (e) {
    try {
      return new RegExp(source, sensitive ? '' : 'i');
    } catch {
      throw invalidRegex((e as Error).message);
    }
  }
}

function searchText(rel: string, buf: Buffer, re: RegExp, req: SearchRequest, out: SearchMatch[]): void {
  if (buf.includes(0)) return; // binary: skipped, as ripgrep does
  const lines = buf.toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const cut = (s: string) => truncateUtf8(s.endsWith('\r') ? s.slice(0, -1) : s, req.maxPreviewBytes).text;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const m = re.exec(line);
    if (!m) continue;
    const n = req.contextLines;
    out.push({
      path: rel,
      line: i + 1,
      column: codePointLength(line.slice(0, m.index)) + 1,
      preview: cut(line),
      before: lines.slice(Math.max(0, i - n), i).map(cut),
      after: lines.slice(i + 1, i + 1 + n).map(cut),
    });
  }
}

export async function searchJs(root: WorkspaceRoot, req: SearchRequest): Promise<SearchOutcome> {
  const re = compileQuery(req);
  const cap = collectCap(req.maxResults);
  const all: SearchMatch[] = [];
  if (req.baseIsFile) {
    const buf = await readVerified(root, req.baseReal);
    if (buf) searchText(req.baseRel, buf, re, req, all);
    return finish(all, req, false, 'js');
  }
  const files: Array<{ abs: string; rel: string }> = [];
  await walk(
    root,
    { abs: req.baseAbs, real: req.baseReal, rel: req.baseRel },
    { includeHidden: req.includeHidden, includeIgnored: req.includeIgnored, exclude: req.exclude },
    (e) => {
      if (e.type === 'file' && (!req.include || req.include(e.relBase)))
        files.push({ abs: e.abs, rel: e.rel });
    },
  );
  let capped = false;
  for (const f of files) {
    const buf = await readVerified(root, f.abs);
    if (!buf) continue;
    searchText(f.rel, buf, re, req, all);
    if (all.length > cap) {
      capped = true;
      break;
    }
  }
  return finish(all.slice(0, cap), req, capped, 'js');
}
