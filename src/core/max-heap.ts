// A binary max-heap: keeps "the N smallest so far" of a stream in bounded memory (evict the largest), as the
// paged listings and searches do when their input does not arrive in order.

export class MaxHeap<T> {
  private readonly a: T[] = [];

  constructor(private readonly cmp: (x: T, y: T) => number) {}

  get size(): number {
    return this.a.length;
  }

  peek(): T | undefined {
    return this.a[0];
  }

  push(v: T): void {
    const a = this.a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.cmp(a[p] as T, a[i] as T) >= 0) break;
      [a[p], a[i]] = [a[i] as T, a[p] as T];
      i = p;
    }
  }

  pop(): T | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.cmp(a[l] as T, a[m] as T) > 0) m = l;
        if (r < a.length && this.cmp(a[r] as T, a[m] as T) > 0) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i] as T, a[m] as T];
        i = m;
      }
    }
    return top;
  }

  /** The contents in ascending order (the heap is left empty). */
  drainAscending(): T[] {
    return this.a.splice(0).sort(this.cmp);
  }
}
