import type { Embedder } from './embedder.js';

interface Waiter {
  text: string;
  resolve: (v: Float32Array) => void;
  reject: (e: unknown) => void;
}

/**
 * Gathers single-text embed calls made at about the same time (concurrent jobs) into one model call
 * of up to `maxBatch` texts, so a worker embeds at the model's batch throughput.
 */
export class BatchingEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  private queue: Waiter[] = [];
  private scheduled = false;

  constructor(
    private readonly inner: Embedder,
    private readonly maxBatch = 32,
    private readonly maxWaitMs = 2,
  ) {
    this.id = inner.id;
    this.dim = inner.dim;
  }

  embedOne(text: string): Promise<Float32Array> {
    return new Promise((resolve, reject) => {
      this.queue.push({ text, resolve, reject });
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setTimeout(() => this.flush(), this.maxWaitMs);
      }
    });
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.inner.embed(texts);
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inner.embed(batch.map((w) => w.text)).then(
        (vectors) => batch.forEach((w, i) => w.resolve(vectors[i]!)),
        (err) => batch.forEach((w) => w.reject(err)),
      );
    }
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}
