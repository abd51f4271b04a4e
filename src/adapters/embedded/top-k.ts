/** The `k` best (highest-scoring) items seen, best first; a rejected item costs one comparison. */
export class TopK {
  readonly items: Int32Array;
  readonly scores: Float64Array;
  size = 0;

  constructor(readonly k: number) {
    this.items = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  /** the score an item must beat to enter */
  get floor(): number {
    return this.size < this.k ? -Infinity : this.scores[this.k - 1]!;
  }

  push(item: number, score: number): void {
    const { k, items, scores } = this;
    if (this.size === k && !(score > scores[k - 1]!)) return;
    let at = this.size < k ? this.size++ : k - 1;
    while (at > 0 && scores[at - 1]! < score) {
      scores[at] = scores[at - 1]!;
      items[at] = items[at - 1]!;
      at--;
    }
    scores[at] = score;
    items[at] = item;
  }
}
