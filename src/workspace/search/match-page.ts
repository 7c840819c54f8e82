// One page of search results, collected from matches arriving in any order (ripgrep runs in parallel) or in
// path order (the JS engine, ripgrep --sort path): the smallest matches after the cursor, in path-then-line
// order, while their JSON stays under the page's byte ceiling and max_results (docs/tools.md#limits). A
// max-heap holds the candidates and evicts the largest once the page is over either bound, so memory is one
// page whatever the number of matches. Matches are counted up to a cap; past it the engine stops and the
// total is a lower bound.
import { MaxHeap } from '../../core/max-heap.js';
import { PAGE_BYTES, jsonBytes } from '../../core/page.js';
import type { LineProof } from './types.js';
import {
  compareMatches,
  countCap,
  type SearchCursor,
  type SearchMatch,
  type SearchOutcome,
  type SearchRequest,
} from './types.js';

export interface Candidate {
  match: SearchMatch;
  bytes: number;
  /** The lines ripgrep reported for this match (verify.ts re-reads them); none from the JS engine. */
  proofs?: LineProof[];
}

const byMatch = (a: Candidate, b: Candidate) => compareMatches(a.match, b.match);

/** What a match adds to the result's JSON: as lean() shows it (no empty context arrays), without its copy. */
function matchBytes(m: SearchMatch): number {
  const { path, line, column, preview, before, after } = m;
  const shown: Partial<SearchMatch> = { path, line, column, preview };
  if (before.length) shown.before = before;
  if (after.length) shown.after = after;
  return jsonBytes(shown);
}

export class MatchPage {
  private readonly heap = new MaxHeap<Candidate>(byMatch);
  private bytes = 0;
  private total = 0;
  /** A match was left off the page (a later page has it). */
  private more = false;
  private capped = false;
  private readonly cap: number;

  constructor(
    private readonly req: SearchRequest,
    private readonly budget = PAGE_BYTES,
  ) {
    this.cap = countCap(req.maxResults);
  }

  /** Whether a match at (path, line) is after the cursor (earlier ones belong to earlier pages). */
  wanted(path: string, line: number): boolean {
    return !this.req.after || compareMatches({ path, line }, this.req.after) > 0;
  }

  /** Adds a match after the cursor; false once the count passed its cap (the engine should stop). */
  offer(match: SearchMatch, proofs?: LineProof[]): boolean {
    if (++this.total > this.cap) {
      this.total = this.cap;
      this.capped = true;
      return false;
    }
    const max = this.heap.peek();
    if (
      max &&
      (this.heap.size >= this.req.maxResults || this.bytes >= this.budget) &&
      compareMatches(match, max.match) >= 0
    ) {
      this.more = true; // the page is full and this one sorts after all of it: it would be evicted at once
      return true;
    }
    const c: Candidate = { match, bytes: matchBytes(match), proofs };
    this.heap.push(c);
    this.bytes += c.bytes;
    while (this.heap.size > this.req.maxResults || (this.heap.size > 1 && this.bytes > this.budget)) {
      this.bytes -= (this.heap.pop() as Candidate).bytes;
      this.more = true;
    }
    return true;
  }

  /** For engines that deliver in order: the page cannot change any more. */
  get full(): boolean {
    return this.more;
  }

  get isCapped(): boolean {
    return this.capped;
  }

  get empty(): boolean {
    return this.total === 0;
  }

  /**
   * The page (ascending) and its outcome. `stoppedAt`: a work budget ended the search (in path order) after
   * this position, so the next page starts there unless this one is full. `incomplete`: the search was cut
   * short out of order (ripgrep's timeout): the page and total are what was found.
   */
  finish(
    engine: SearchOutcome['engine'],
    end: { stoppedAt?: SearchCursor; incomplete?: boolean; note?: string } = {},
  ): PageResult {
    const page = this.heap.drainAscending();
    const last = page[page.length - 1]?.match;
    const cut = end.stoppedAt !== undefined || !!end.incomplete;
    let next: SearchCursor | undefined;
    if (this.more || this.capped || end.incomplete) next = last && { path: last.path, line: last.line };
    else if (end.stoppedAt) next = end.stoppedAt;
    return {
      page,
      outcome: {
        matches: page.map((c) => c.match),
        totalMatches: this.total,
        totalIsLowerBound: this.capped || cut,
        truncated: this.more || this.capped || cut,
        engine,
        next,
        note: end.note,
      },
    };
  }
}

export interface PageResult {
  page: Candidate[];
  outcome: SearchOutcome;
}
