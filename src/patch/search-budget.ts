// The limits of the searches that run when a text is not found (edit_file's EDIT_NOT_FOUND, apply_patch's
// PATCH_CONTEXT_NOT_FOUND; docs/tools.md#limits): the near miss under looser tiers and the most similar region.
// Both yield to the event loop as they go (core/slice.ts) and stop at a time budget; neither compares more than
// MAX_COMPARED_CHARS of the text that was not found, so a 3 MB old_string costs what 64 KiB of it does. What
// they found by then is answered, saying the search was cut and how to narrow it. One such search runs at a
// time in the process (the others wait their turn, without holding the loop), so parallel calls cannot add
// up their memory.
import { systemClock, type Clock } from '../core/clock.js';
import { TimeSlicer } from '../core/slice.js';
import { FileLocks } from './locks.js';

/** Most characters of the missing text (old_string, a hunk's old lines) the searches compare. */
export const MAX_COMPARED_CHARS = 64 * 1024;
/** How long the near-miss search and the similar-region search may each take. */
export const SEARCH_BUDGET_MS = 1500;

/** Why a search stopped before it was complete: the text was longer than it compares, or time ran out. */
export type SearchCut = 'size' | 'time';

export interface SearchBudgets {
  nearMiss: TimeSlicer;
  region: TimeSlicer;
}

export function searchBudgets(clock: Clock = systemClock, ms = SEARCH_BUDGET_MS): SearchBudgets {
  return { nearMiss: new TimeSlicer(ms, clock), region: new TimeSlicer(ms, clock) };
}

const gate = new FileLocks();

/** Runs one not-found search at a time in this process. */
export function oneSearchAtATime<T>(search: () => Promise<T>): Promise<T> {
  return gate.withLocks(['not-found-search'], search);
}

/**
 * The lines of `old` the searches compare: whole lines, as many as fit in MAX_COMPARED_CHARS; a first line
 * longer than that alone is compared by its start.
 */
export function comparedLines(old: readonly string[]): { lines: readonly string[]; cut: boolean } {
  const first = old[0] ?? '';
  if (first.length > MAX_COMPARED_CHARS) return { lines: [first.slice(0, MAX_COMPARED_CHARS)], cut: true };
  let chars = 0;
  let n = 0;
  while (n < old.length && chars + (old[n] as string).length + 1 <= MAX_COMPARED_CHARS + 1) {
    chars += (old[n] as string).length + 1;
    n++;
  }
  return n === old.length ? { lines: old, cut: false } : { lines: old.slice(0, n), cut: true };
}

/** Why the searches for a missing text of `chars` characters stopped early, if they did, in a fixed order. */
export function searchCuts(chars: number, ...cuts: Array<SearchCut | undefined>): SearchCut[] {
  const out: SearchCut[] = [];
  if (chars > MAX_COMPARED_CHARS || cuts.includes('size')) out.push('size');
  if (cuts.includes('time')) out.push('time');
  return out;
}

/** What an answer adds when a search was cut ('' when none was): why, and how to narrow `what`. */
export function cutNote(cuts: readonly SearchCut[], what: string, chars: number): string {
  return cuts
    .map((cut) =>
      cut === 'size'
        ? `; the search compared only the first ${MAX_COMPARED_CHARS} characters of ${what} (it has ${chars}): ` +
          `send a shorter ${what}, the few lines around the change`
        : `; the search was cut after ${SEARCH_BUDGET_MS} ms: narrow ${what} to the few lines around the ` +
          'change, or read the file near where it should be',
    )
    .join('');
}
