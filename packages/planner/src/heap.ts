/** A binary min-heap of (time, value) entries: the replay's event queues. */
export class TimeHeap<T> {
  private readonly t: number[] = [];
  private readonly v: T[] = [];

  get size(): number {
    return this.t.length;
  }

  peekTime(): number {
    return this.t.length ? this.t[0]! : Number.POSITIVE_INFINITY;
  }

  push(time: number, value: T): void {
    const t = this.t;
    const v = this.v;
    let i = t.length;
    t.push(time);
    v.push(value);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (t[p]! <= time) break;
      t[i] = t[p]!;
      v[i] = v[p]!;
      i = p;
    }
    t[i] = time;
    v[i] = value;
  }

  pop(): T | undefined {
    const t = this.t;
    const v = this.v;
    if (t.length === 0) return undefined;
    const top = v[0]!;
    const lastT = t.pop()!;
    const lastV = v.pop()!;
    const n = t.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && t[r]! < t[l]! ? r : l;
        if (t[c]! >= lastT) break;
        t[i] = t[c]!;
        v[i] = v[c]!;
        i = c;
      }
      t[i] = lastT;
      v[i] = lastV;
    }
    return top;
  }
}
