/**
 * Scalar int8 quantization for the scan: each vector is scaled so its largest component is ±127,
 * and `scale` folds in both that factor and the vector's length, so `Σ codes_a·codes_b · scale_a ·
 * scale_b` approximates the cosine of a and b. The error (~0.5% of a score) only decides which
 * candidates get an exact float32 rerank; no score a caller sees comes from the codes.
 */

/** Row length in bytes for `dim` codes: the kernel reads 16 bytes at a time, so rows are padded. */
export function strideFor(dim: number): number {
  return Math.ceil(dim / 16) * 16;
}

/** Writes `v`'s codes at `out[offset…offset+v.length)` (padding left as is) and returns its scale. */
export function quantizeInto(v: Float32Array, out: Int8Array | Int16Array, offset: number): number {
  let max = 0;
  let norm = 0;
  for (let j = 0; j < v.length; j++) {
    const x = v[j]!;
    norm += x * x;
    const a = x < 0 ? -x : x;
    if (a > max) max = a;
  }
  if (max === 0 || !Number.isFinite(norm)) {
    out.fill(0, offset, offset + v.length);
    return 0;
  }
  const k = 127 / max;
  for (let j = 0; j < v.length; j++) out[offset + j] = Math.round(v[j]! * k);
  return 1 / (k * Math.sqrt(norm));
}

/** Exact cosine of two float32 vectors of one length; 0 when either is all zeros. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let j = 0; j < a.length; j++) {
    const x = a[j]!;
    const y = b[j]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
