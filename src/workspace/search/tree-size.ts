// How many threads ripgrep searches a directory with (docs/benchmarks.md#search-on-a-small-tree). rg walks and
// searches with a pool of threads, one per CPU; on a tree of a few hundred files setting that pool up and
// handing work across CPUs costs more than it saves (2.3–2.7 ms of a ~9 ms search on two CPUs), while on a
// thousand files and more the pool wins (1.2–1.6×). So a base last counted as small is searched with one
// thread, any other with rg's default. The count is the confined walk's (workspace/walk.ts: what rg would
// search, by the same excludes, .gitignore and hidden rules), stopped once it passes SMALL_TREE_ENTRIES. It
// never runs on a search's own path: the warm-up counts the workspace root before it says it is done; any
// other base's first search, or its first after TREE_SIZE_TTL_MS (LARGE_TREE_TTL_MS for a large one), runs
// with rg's default and asks for a count, which runs when no call is being answered (the `defer` the server
// gives, core/quiet.ts). The choice changes only how fast rg finds the matches, never which (the page logic
// is the same).
import type { Clock } from '../../core/clock.js';
import type { WorkspaceRoot } from '../paths.js';
import { walk } from '../walk.js';

/** Up to this many files (and directories) below a base, one thread searches it faster than rg's pool. */
export const SMALL_TREE_ENTRIES = 400;
/** How long a small count is trusted before the next search of that base asks for another. */
export const TREE_SIZE_TTL_MS = 60_000;
/**
 * How long a large count is trusted. Taken for large when it has become small costs a search ~2.5 ms (rg's pool
 * on a small tree); the other way round costs far more (one thread on thousands of files: 120 against 73 ms), so
 * a small count is redone more often. A count is a walk of up to 401 entries (~3 ms of the server's CPU on the
 * benchmark workspace): redone every minute, it came into every minute of searches there.
 */
export const LARGE_TREE_TTL_MS = 600_000;
/** Bases whose count is kept (the oldest is forgotten first). */
const MAX_BASES = 64;

/** What a count is of: a directory searched with one set of hidden/ignored rules. */
export interface TreeBase {
  abs: string;
  real: string;
  rel: string;
  includeHidden: boolean;
  includeIgnored: boolean;
}

/**
 * Whether the tree below `base` holds at most `limit` files and directories, counted by the confined walk (it
 * stops as soon as the count passes `limit`).
 */
export async function treeIsSmall(
  root: WorkspaceRoot,
  base: TreeBase,
  limit = SMALL_TREE_ENTRIES,
): Promise<boolean> {
  let seen = 0;
  await walk(
    root,
    { abs: base.abs, real: base.real, rel: base.rel },
    { includeHidden: base.includeHidden, includeIgnored: base.includeIgnored },
    () => ++seen <= limit,
  );
  return seen <= limit;
}

export class TreeSizes<B extends TreeBase> {
  private readonly known = new Map<string, { small: boolean; at: number }>();
  private readonly counting = new Set<string>();

  constructor(
    private readonly clock: Pick<Clock, 'monotonic'>,
    private readonly defer: (fn: () => void) => void,
    private readonly count: (base: B) => Promise<boolean>,
  ) {}

  /**
   * Whether `base` was last counted as small (undefined: never counted). Unknown or older than
   * TREE_SIZE_TTL_MS (LARGE_TREE_TTL_MS for a large one), a count is asked for, run through `defer`.
   */
  small(base: B): boolean | undefined {
    const key = keyOf(base);
    const k = this.known.get(key);
    const ttl = k?.small === false ? LARGE_TREE_TTL_MS : TREE_SIZE_TTL_MS;
    if (!k || this.clock.monotonic() - k.at >= ttl) this.recount(key, base);
    return k?.small;
  }

  /** Counts `base` now (the warm-up: before any call, the root's first search finds its count). */
  countNow(base: B): Promise<void> {
    const key = keyOf(base);
    return this.counting.has(key) ? Promise.resolve() : this.run(key, base);
  }

  private recount(key: string, base: B): void {
    if (this.counting.has(key)) return;
    this.counting.add(key);
    this.defer(() => void this.run(key, base));
  }

  private run(key: string, base: B): Promise<void> {
    this.counting.add(key);
    return (
      this.count(base)
        .then((small) => {
          this.known.delete(key);
          this.known.set(key, { small, at: this.clock.monotonic() });
          if (this.known.size > MAX_BASES) this.known.delete(this.known.keys().next().value as string);
        })
        // Gone or unreadable meanwhile: left unknown, rg's default is used.
        .catch(() => {})
        .finally(() => this.counting.delete(key))
    );
  }
}

function keyOf(b: TreeBase): string {
  return `${b.includeHidden ? 'h' : '-'}${b.includeIgnored ? 'i' : '-'}${b.real}`;
}
