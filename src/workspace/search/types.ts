// The search request and result shared by both engines (docs/tools.md#paths).
import { ToolError } from '../../core/tool-error.js';
import type { Matcher } from '../glob.js';
import { comparePaths } from '../path-order.js';

/** Where a page of matches ends: the next page holds the matches after this path and line. */
export interface SearchCursor {
  path: string;
  line: number;
}

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
  /** Continue after this match (from the previous page's next_action). */
  after?: SearchCursor;
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
  /** Matching lines after the cursor; exact unless `totalIsLowerBound`. */
  totalMatches: number;
  totalIsLowerBound: boolean;
  truncated: boolean;
  engine: 'ripgrep' | 'js';
  /** Where the next page starts, when there is one. */
  next?: SearchCursor;
  /** Why the search stopped early (a work budget), for the model. */
  note?: string;
}

/** Beyond this many matching lines the engines stop counting (the total is then a lower bound). */
export function countCap(maxResults: number): number {
  return Math.max(maxResults * 10, 20_000);
}

export function smartCaseSensitive(query: string, regex: boolean): boolean {
  const literal = regex ? query.replace(/\\./g, '') : query;
  return /\p{Lu}/u.test(literal);
}

/** Path order (workspace/path-order.ts), then line: the order of every page and of the cursor. */
export function compareMatches(a: SearchCursor, b: SearchCursor): number {
  return a.path !== b.path ? comparePaths(a.path, b.path) : a.line - b.line;
}

/** The one error both engines give for a pattern their regex engine refuses. */
export function invalidRegex(problem: string, details: Record<string, unknown> = {}): ToolError {
  return new ToolError('INVALID_ARGUMENT', `invalid regular expression: ${problem}`, details, {
    suggestion: 'Fix the pattern, or pass "regex": false to search for the literal text.',
  });
}

/** A line ripgrep reported, to be re-read at its byte offset (verify.ts). */
export interface LineProof {
  rel: string;
  offset: number;
  head: Buffer;
  /**
   * A match past the part of a long line rg printed (its --max-columns preview): the column is `base` code
   * points plus those of the file's bytes [from, to), counted when the line is re-read (verify.ts).
   */
  column?: { from: number; to: number; base: number };
}

/**
 * Bytes (at least) of a line rg prints beyond the preview a page can show: longer lines come as a preview
 * (ripgrep.ts --max-columns), so a minified file's megabyte lines never cross the pipe.
 */
export const RG_LINE_SLACK = 64;
