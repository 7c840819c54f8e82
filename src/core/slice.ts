// Cooperative time slicing: long loops on the event loop (a walk over 200,000 files, matching 10,000 hunks, a
// search) call `tick()` often; it yields to the event loop once the current slice has run SLICE_MS, so no
// single call holds the loop for long (docs/tools.md#limits). A slicer may also carry a work budget
// (`expired`). Nothing here measures correctness: time only decides where a loop pauses or gives up. Time comes
// from the injected clock (core/clock.ts), so a test can make a budget run out exactly where it wants.
import { systemClock, type Clock } from './clock.js';

/** Longest stretch a loop runs before letting other requests in. */
export const SLICE_MS = 20;

export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class TimeSlicer {
  private last: number;
  private readonly deadline: number;

  /** `budgetMs`: total time the work may take (`expired` after it); Infinity for none. */
  constructor(
    readonly budgetMs = Infinity,
    private readonly clock: Clock = systemClock,
  ) {
    this.last = clock.monotonic();
    this.deadline = this.last + budgetMs;
  }

  /** Yields to the event loop when the current slice has run SLICE_MS. */
  async tick(): Promise<void> {
    const now = this.clock.monotonic();
    if (now - this.last < SLICE_MS) return;
    await yieldToLoop();
    this.last = this.clock.monotonic();
  }

  get expired(): boolean {
    return this.clock.monotonic() >= this.deadline;
  }

  /** Whether the current slice has run out (tick() would yield): lets a hot loop skip the await. */
  get due(): boolean {
    return this.clock.monotonic() - this.last >= SLICE_MS;
  }
}

const SORT_RUN = 2048;
const MERGE_TICK_EVERY = 4096;

/**
 * Array#sort in slices: runs of SORT_RUN items are sorted natively, then merged pairwise with a tick every few
 * thousand items (one native sort of 200,000 names takes ~200 ms). Stable; returns a new array unless short.
 */
export async function sortSliced<T>(
  items: T[],
  cmp: (a: T, b: T) => number,
  slicer: TimeSlicer,
): Promise<T[]> {
  const n = items.length;
  if (n <= SORT_RUN) return items.sort(cmp);
  let src = items.slice();
  for (let lo = 0; lo < n; lo += SORT_RUN) {
    const run = src.slice(lo, lo + SORT_RUN).sort(cmp);
    for (let k = 0; k < run.length; k++) src[lo + k] = run[k] as T;
    await slicer.tick();
  }
  let dst = new Array<T>(n);
  for (let width = SORT_RUN; width < n; width *= 2) {
    let sinceTick = 0;
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k++) {
        dst[k] = (j >= hi || (i < mid && cmp(src[i] as T, src[j] as T) <= 0) ? src[i++] : src[j++]) as T;
        if (++sinceTick >= MERGE_TICK_EVERY) {
          sinceTick = 0;
          await slicer.tick();
        }
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}
