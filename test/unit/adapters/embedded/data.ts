import { mulberry32 } from '../../../fixtures/random.js';
/** Seeded test vectors: clustered unit vectors, like sentence embeddings of a few topics. */
export const rng = mulberry32;

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

export function clustered(
  count: number, dim: number, seed: number, clusters = 50,
): { vectors: Float32Array[]; near: (i: number, noise?: number) => Float32Array; clusterOf: number[] } {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(r() || 1e-12)) * Math.cos(2 * Math.PI * r());
  const centers = Array.from({ length: clusters }, () => normalize(Float32Array.from({ length: dim }, gauss)));
  const clusterOf: number[] = [];
  const vectors = Array.from({ length: count }, () => {
    const at = Math.floor(r() * clusters);
    clusterOf.push(at);
    return normalize(centers[at]!.map((x) => x + 0.08 * gauss()));
  });
  const near = (i: number, noise = 0.05) => normalize(vectors[i]!.map((x) => x + noise * gauss()));
  return { vectors, near, clusterOf };
}

export function exactTop(vectors: readonly Float32Array[], q: Float32Array, k: number, keep: (i: number) => boolean = () => true): number[] {
  const scored: Array<[number, number]> = [];
  vectors.forEach((v, i) => {
    if (!keep(i)) return;
    let d = 0;
    for (let j = 0; j < v.length; j++) d += v[j]! * q[j]!;
    scored.push([i, d]);
  });
  return scored.sort((a, b) => b[1] - a[1]).slice(0, k).map(([i]) => i);
}
