// Per-file locks for apply_patch, owned by the Runtime so every client and transport shares them
// (docs/design-notes.md#same-file-concurrency: per file, lock → read → match → write). Keys are real paths; a
// patch takes all its keys in sorted order, so two patches can never wait on each other in a cycle. Patches
// to different files never wait at all.

export type Release = () => void;

export class FileLocks {
  /** For each locked key, the promise that resolves when its last queued holder releases it. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Waits for every key (sorted, deduplicated) and returns one function that releases them all. */
  async acquire(keys: readonly string[]): Promise<Release> {
    const sorted = [...new Set(keys)].sort();
    const releases: Release[] = [];
    try {
      for (const key of sorted) releases.push(await this.lockOne(key));
    } catch (e) {
      for (const r of releases.reverse()) r();
      throw e;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const r of releases.reverse()) r();
    };
  }

  async withLocks<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(keys);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Number of keys currently held or waited for (for tests and server_info-style introspection). */
  get size(): number {
    return this.tails.size;
  }

  private async lockOne(key: string): Promise<Release> {
    const prev = this.tails.get(key);
    let open!: () => void;
    const mine = new Promise<void>((resolve) => (open = resolve));
    const tail = prev ? prev.then(() => mine) : mine;
    this.tails.set(key, tail);
    if (prev) await prev;
    return () => {
      open();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
