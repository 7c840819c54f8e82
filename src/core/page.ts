// The byte ceiling of list and search results (docs/tools.md#limits): a page holds entries while their JSON
// stays under PAGE_BYTES, and the result's next_action continues after the last one, so a model never
// receives megabytes however large the tree. At least one entry always fits, so a page always makes progress.

/** About this many bytes of JSON per list or search result. */
export const PAGE_BYTES = 64 * 1024;

/** Bytes `v` adds to a JSON array (its text plus a comma). */
export function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v)) + 1;
}

export class ByteBudget {
  private used = 0;
  private count = 0;

  constructor(readonly limit = PAGE_BYTES) {}

  /** Takes `bytes` if they fit (or nothing was taken yet); false when the page is full. */
  take(bytes: number): boolean {
    if (this.count > 0 && this.used + bytes > this.limit) return false;
    this.used += bytes;
    this.count++;
    return true;
  }
}

/** A shortened path for notes (a path 256 levels deep can be kilobytes long). */
export function shortPath(p: string, max = 160): string {
  return p.length <= max ? p : `${p.slice(0, max / 2)}…${p.slice(-max / 2)}`;
}

/** The model-facing note when a walk stopped descending at the depth limit. */
export function depthNote(firstNotEntered: string, limit: number): string {
  return `directories more than ${limit} levels deep were not entered (first: ${shortPath(firstNotEntered)})`;
}
