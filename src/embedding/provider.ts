import type { Logger } from '../logger.js';
import { BatchingEmbedder } from './batching.js';
import type { Embedder } from './embedder.js';

export type EmbedderStatus = 'loading' | 'ready' | 'failed';

/**
 * Holds the configured embedder while it loads (a model download can take a while) and after.
 * When loading fails it logs one warning and stays `failed`: the semantic tier is skipped, the
 * others go on (SPEC §5).
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
    this.loading = load().then(
      (e) => {
        this.embedder = new BatchingEmbedder(e);
        this.status = 'ready';
        log.info({ model, embedder: e.id, dim: e.dim }, 'embedder ready');
        return this.embedder;
      },
      (err: unknown) => {
        this.status = 'failed';
        this.error = err instanceof Error ? err.message : String(err);
        log.warn({ model, err: this.error }, 'embedding model could not be loaded; the semantic tier is skipped until it can');
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

  async close(): Promise<void> {
    const e = await this.loading;
    await e?.close();
  }
}
