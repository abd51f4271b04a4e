import type { Logger } from '../logger.js';
import { BatchingEmbedder } from './batching.js';
import type { Embedder } from '../ports/embedder.js';

export type EmbedderStatus = 'loading' | 'ready' | 'failed';

/** The way out when the configured model cannot be loaded: said by the warning, `/health` and `doctor`. */
export const EMBEDDER_WAY_OUT =
  'set embedding_model = "hash" (or NEURALCLEAVE_EMBEDDING_MODEL=hash) for the built-in embedder, or point model_dir at a local copy of the model';

/**
 * Holds the configured embedder while it loads (a model download can take a while) and after.
 * When loading fails it logs one warning and stays `failed`: the semantic tier is skipped, the
 * others go on (docs/architecture.md, embeddings).
 */
export class EmbedderProvider {
  status: EmbedderStatus = 'loading';
  error: string | null = null;
  private embedder: BatchingEmbedder | null = null;
  private readonly loading: Promise<BatchingEmbedder | null>;

  constructor(
    readonly model: string,
    load: () => Promise<Embedder>,
    log: Logger,
  ) {
    // `Promise.resolve().then(load)`: a loader that throws synchronously fails like one that rejects
    this.loading = Promise.resolve().then(load).then(
      (e) => {
        this.embedder = new BatchingEmbedder(e);
        this.status = 'ready';
        log.info({ model, embedder: e.id, dim: e.dim }, 'embedder ready');
        return this.embedder;
      },
      (err: unknown) => {
        this.status = 'failed';
        this.error = err instanceof Error ? err.message : String(err);
        // the one warning (docs/architecture.md, embeddings): the semantic tier is skipped for the life of this process
        log.warn({ model, err: this.error }, `embedding model could not be loaded; the semantic tier is skipped, short-term and long-term retrieval go on. To fix: ${EMBEDDER_WAY_OUT}`);
        return null;
      },
    );
  }

  /** the embedder if loaded now, without waiting */
  current(): BatchingEmbedder | null {
    return this.embedder;
  }

  /** waits for loading to finish; null when it failed */
  ready(): Promise<BatchingEmbedder | null> {
    return this.loading;
  }

  /** waits for a load under way, then releases the model (its ONNX Runtime session) */
  async close(): Promise<void> {
    const e = await this.loading;
    await e?.close();
  }
}
