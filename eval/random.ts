/** Deterministic pseudo-random numbers (mulberry32): the same seed gives the same dataset everywhere. */
export class Rand {
  private a: number;

  constructor(seed: number) {
    this.a = seed >>> 0;
  }

  /** uniform in [0, 1) */
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  /** a shuffled copy (Fisher–Yates) */
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** `n` distinct items, in random order */
  sample<T>(xs: readonly T[], n: number): T[] {
    if (n > xs.length) throw new Error(`cannot sample ${n} of ${xs.length}`);
    return this.shuffle(xs).slice(0, n);
  }

  /** an independent stream derived from this one (so adding draws in one place does not shift another) */
  fork(): Rand {
    return new Rand(Math.floor(this.next() * 2 ** 32));
  }
}
