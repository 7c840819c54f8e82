// The search request and result shared by both engines (tool-contract "Files and search").
import { ToolError } from '../../core/tool-error.js';
import type { Matcher } from '../glob.js';

export interface SearchRequest {
  query: string;
  regex: boolean;
  /** undefined = smart case: sensitive iff the query has an upper-case letter. */
  caseSensitive: boolean | undefined;
  /** Absolute directory or file to search, and its path relative to the root. */
  baseAbs: string;
  /** Real path of the base (from resolvePath): what is opened and verified. */
  baseReal: string;
  baseRel: string;
  baseIsFile: boolean;
  includeGlobs: readonly string[];
  excludeGlobs: readonly string[];
  include?: Matcher;
  exclude?: Matcher;
  contextLines: number;
  maxResults: number;
  maxPreviewBytes: number;
  includeHidden: boolean;
  includeIgnored: boolean;
}

export interface SearchMatch {
  path: string;
  line: number;
  /** 1-based, in characters (code points). */
  column: number;
  preview: string;
  before: string[];
  after: string[];
}

export interface SearchOutcome {
  matches: SearchMatch[];
  /** Matching lines found; exact unless `total_is_lower_bound`. */
  totalMatches: number;
  totalIsLowerBound: boolean;
  truncated: boolean;
  engine: 'ripgrep' | 'js';
}

/** Beyond this many matching lines the engines stop collecting (the total is then a lower bound). */
export function collectCap(maxResults: number): number {
  return Math.max(maxResults * 10, 20_000);
}

export function smartCaseSensitive(query: string, regex: boolean): boolean {
  const literal = regex ? query.replace(/\\./g, '') : query;
  return /\p{Lu}/u.test(literal);
}

export function compareMatches(a: SearchMatch, b: SearchMatch): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return a.line - b.line;
}

/** Sorted, truncated, previews cut — the same final step for both engines. */
export function finish(
  all: SearchMatch[],
  req: SearchRequest,
  capped: boolean,
  engine: SearchOutcome['engine'],
): SearchOutcome {
  all.sort(compareMatches);
  return {
    matches: all.slice(0, req.maxResults),
    totalMatches: all.length,
    totalIsLowerBound: capped,
    truncated: capped || all.length > req.maxResults,
    engine,
  };
}

/** The one error both engines give for a pattern their regex engine refuses. */
export function invalidRegex(problem: string, details: Record<string, unknown> = {}): ToolError {
  return new ToolError('INVALID_ARGUMENT', `invalid regular expression: ${problem}`, details, {
    suggestion: 'Fix the pattern, or pass "regex": false to search for the literal text.',
  });
}
