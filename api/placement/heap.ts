// A binary min-heap over numbers pairs (rank, then order): placement's best candidate without rescanning every node.

export type HeapEntry<T> = { rank: number; order: number; item: T };

const less = <T>(a: HeapEntry<T>, b: HeapEntry<T>) => a.rank < b.rank || (a.rank === b.rank && a.order < b.order);

// (not a destructuring swap: placement runs rarely, mostly unoptimized, where that builds an array at each step)
function swap<T>(a: T[], i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
}

export class MinHeap<T> {
  private readonly a: HeapEntry<T>[] = [];

  get size(): number {
    return this.a.length;
  }

  peek(): HeapEntry<T> | undefined {
    return this.a[0];
  }

  push(e: HeapEntry<T>): void {
    const a = this.a;
    a.push(e);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i]!, a[p]!)) break;
      swap(a, i, p);
      i = p;
    }
  }

  pop(): HeapEntry<T> | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l]!, a[m]!)) m = l;
        if (r < a.length && less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        swap(a, i, m);
        i = m;
      }
    }
    return top;
  }
}
