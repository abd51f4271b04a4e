import { giveTurn } from '../pace.js';
import { STOPWORDS, words } from '../retrieval/query-terms.js';
import { normalize, type Embedder } from '../ports/embedder.js';

export const HASH_EMBEDDER_ID = 'hash-v1';

/** characters embedded in one turn of the event loop before a batch yields (~5 ms: half a slice of src/pace.ts) */
const YIELD_CHARS = 16_000;

/** FNV-1a, 32 bit: fast and stable across platforms and versions. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A crude stemmer, enough that "hiking" and "hikes" share a feature. */
function stem(w: string): string {
  return w.replace(/(ing|ed|es|s|ly)$/, '').slice(0, 12) || w;
}

/**
 * The built-in `hash` embedder: a deterministic lexical embedding (signed feature hashing of word
 * stems and character trigrams, sublinear term frequency, L2-normalized). No download, no network;
 * it matches words and their variants, not meanings — air-gapped installs and fast tests.
 */
export class HashEmbedder implements Embedder {
  readonly id: string;
  readonly lexical = true;

  constructor(readonly dim = 384) {
    this.id = dim === 384 ? HASH_EMBEDDER_ID : `${HASH_EMBEDDER_ID}-${dim}`;
  }

  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dim);
    const counts = new Map<string, number>();
    for (const w of words(text)) {
      if (STOPWORDS.has(w)) continue;
      const s = stem(w);
      counts.set(`w:${s}`, (counts.get(`w:${s}`) ?? 0) + 1);
      const padded = `<${s}>`;
      for (let i = 0; i + 3 <= padded.length; i++) {
        const g = `g:${padded.slice(i, i + 3)}`;
        counts.set(g, (counts.get(g) ?? 0) + 0.25);
      }
    }
    for (const [feature, tf] of counts) {
      const h = fnv1a(feature);
      const sign = h & 0x80000000 ? -1 : 1;
      v[h % this.dim]! += sign * (1 + Math.log(tf + 1));
    }
    return normalize(v);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    let chars = 0;
    for (const t of texts) {
      // a batch is up to 512 texts of up to 32,000 characters (~10 ms each at worst): past
      // YIELD_CHARS the rest waits for the next turn of the event loop, so other requests are answered
      // between them (a pause while requests wait: src/pace.ts); a batch of short texts is still
      // embedded in one turn
      if (chars > 0 && chars + t.length > YIELD_CHARS) {
        await giveTurn();
        chars = 0;
      }
      out.push(this.embedOne(t));
      chars += t.length;
    }
    return out;
  }

  async close(): Promise<void> {}
}
