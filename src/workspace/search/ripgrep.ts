// The ripgrep engine: rg's output parsed into one page of matches (rg-output.ts, match-page.ts). rg runs in
// parallel; only when the matches pass the count cap, so that the page could depend on which files rg happened
// to finish first, is it run again with --sort path and stopped once the page is settled: every page is exact.
// Ignore semantics are pinned so they equal the JS engine's: only .gitignore (+ .git/info/exclude), with or
// without a git repository, no parent/global/.ignore files. Globs run relative to the search base in both.
import path from 'node:path';
import { runArgv } from '../../process/jail/argv.js';
import type { ToolJail } from '../../process/jail/jail.js';
import { closeDir, openDirForTool, type DirRef } from '../confined-fs.js';
import type { WorkspaceRoot } from '../paths.js';
import { DEFAULT_EXCLUDES } from '../ignore-rules.js';
import { MAX_WALK_DEPTH } from '../walk.js';
import { MatchPage, type PageResult } from './match-page.js';
import { RgOutput } from './rg-output.js';
import { invalidRegex, RG_LINE_SLACK, smartCaseSensitive, type SearchRequest } from './types.js';

const RG_TIMEOUT_MS = 60_000;

/**
 * `sorted`: files in path order, one thread (the exact second run of a search with very many matches);
 * `threads`: how many rg uses (engines.ts: one on a small tree, tree-size.ts), else rg's default.
 */
export function rgArgs(req: SearchRequest & { sorted?: boolean; threads?: number }): string[] {
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
    // Raw bytes, no BOM sniffing: a UTF-16 file is binary (NUL bytes) to rg as to the JS engine and read_file,
    // and every offset and byte rg reports is the file's own (as verify.ts compares them).
    '--encoding',
    'none',
    // "\r\n" ends a line as "\n" does, so `$` matches before it, as in the JS engine.
    '--crlf',
    // The walk's depth limit (workspace/walk.ts), so both engines search the same files.
    '--max-depth',
    String(MAX_WALK_DEPTH),
    // A longer line comes as its first characters and a "[... omitted end of long line]" marker: the preview
    // shows no more, and a page of matches on minified files stays kilobytes instead of megabytes of pipe data.
    '--max-columns',
    String(req.maxPreviewBytes + RG_LINE_SLACK),
    '--max-columns-preview',
  ];
  if (req.sorted) a.push('--sort', 'path');
  else if (req.threads) a.push('--threads', String(req.threads));
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

/**
 * Runs rg in the search base. The base is opened and verified first; rg gets that very directory: in its jail
 * (jail.ts wrapAlone) bound from the descriptor and nothing else, so a swap anywhere leads nowhere; without
 * that jail it starts in it through the descriptor (`cwd` /proc/self/fd/N, resolved by the child before exec)
 * and the caller's verification of the page (verify.ts) catches a swap below it.
 */
export async function searchRipgrep(
  rgPath: string,
  root: WorkspaceRoot,
  req: SearchRequest,
  env: Record<string, string>,
  jail?: ToolJail,
  threads?: number,
): Promise<PageResult> {
  const dir = openDirForTool(
    root.real,
    req.baseIsFile ? path.dirname(req.baseReal) : req.baseReal,
    req.baseIsFile ? path.posix.dirname(req.baseRel) : req.baseRel,
  );
  try {
    const first = await runRipgrep(rgPath, dir, { ...req, threads }, env, jail);
    if (!first.capped) return first.result;
    const exact = await runRipgrep(rgPath, dir, { ...req, sorted: true }, env, jail);
    const o = first.result.outcome;
    return {
      page: exact.result.page,
      outcome: {
        ...exact.result.outcome,
        totalMatches: o.totalMatches,
        totalIsLowerBound: true,
        truncated: true,
      },
    };
  } finally {
    closeDir(dir);
  }
}

async function runRipgrep(
  rgPath: string,
  dir: DirRef,
  req: SearchRequest & { sorted?: boolean; threads?: number },
  env: Record<string, string>,
  jail?: ToolJail,
): Promise<{ result: PageResult; capped: boolean }> {
  const prefix = req.baseIsFile ? path.posix.dirname(req.baseRel) : req.baseRel;
  const page = new MatchPage(req);
  const out = new RgOutput(prefix, req, page, !!req.sorted);
  const r = await runArgv(rgPath, rgArgs(req), {
    cwd: dir.at,
    env,
    timeoutMs: RG_TIMEOUT_MS,
    maxStdoutBytes: Number.MAX_SAFE_INTEGER,
    jail,
    aloneIn: dir.fd,
    onStdout: (chunk) => out.feed(chunk),
  });
  if (r.spawnError) throw new Error(`ripgrep could not start: ${r.spawnError}`);
  out.end();
  if (r.code === 2 && page.empty && /regex parse error|error parsing|unclosed|unrecognized/i.test(r.stderr)) {
    // rg names the problem on an "error: …" line, then may suggest --pcre2 (which the server never passes).
    const lines = r.stderr.trim().split('\n');
    const problem = lines.find((l) => l.startsWith('error: '))?.slice(7) ?? lines[lines.length - 1] ?? '';
    throw invalidRegex(problem, { stderr: r.stderr.trim() });
  }
  if (r.timedOut) {
    const note = `ripgrep stopped after ${RG_TIMEOUT_MS / 1000} s; narrow the search with path or include_globs`;
    return { result: page.finish('ripgrep', { incomplete: true, note }), capped: false };
  }
  return { result: page.finish('ripgrep'), capped: page.isCapped && !req.sorted };
}
