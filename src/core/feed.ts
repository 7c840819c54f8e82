// A bounded, ordered stream of events with listeners: what the operator's console (src/console/) shows live.
// Publishing costs a ring-buffer write and, only while someone listens, one call per listener; nothing is
// serialised here. Old entries fall off the front (docs/console.md#what-it-keeps).
export class Feed<T> {
  private readonly items: T[] = [];
  private readonly listeners = new Set<(item: T) => void>();

  constructor(private readonly capacity: number) {}

  publish(item: T): void {
    this.items.push(item);
    if (this.items.length > this.capacity) this.items.shift();
    for (const l of this.listeners) l(item);
  }

  /** The kept entries, oldest first. */
  recent(): readonly T[] {
    return this.items;
  }

  /** Calls `l` for every later entry until the returned function is called. */
  listen(l: (item: T) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  get listening(): boolean {
    return this.listeners.size > 0;
  }
}
