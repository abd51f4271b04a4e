import type { BackendReport } from '../backends.js';
import type { Logger } from '../logger.js';
import { BatchingEmbedder } from './batching.js';
import { EmbedderUnavailableError, type EmbedPurpose, type Embedder } from '../ports/embedder.js';

/**
 * `loading` until the first load settles; `ready`; `unavailable` while the embedding server does not
 * answer (at start or later: retried in the background, ready again once it answers); `failed` when
 * the embedder cannot be used as configured (retrying would not help).
 */
export type EmbedderStatus = 'loading' | 'ready' | 'unavailable' | 'failed';

/** The way out when the configured model cannot be loaded: said by the warning, `/health` and `doctor`. */
export const EMBEDDER_WAY_OUT =
  'set embedding_model = "hash" (or NEURALCLEAVE_EMBEDDING_MODEL=hash) for the built-in embedder, or point model_dir at a local copy of the model';
/** The way out when an embedding server refuses what is asked of it (a key, a model, a width). */
export const REMOTE_WAY_OUT =
  'fix embedding_model, embedding_url or embedding_api_key (`neuralcleave doctor --embed "some text"` tries a setup), or set embedding_provider = "hash" for the built-in embedder';

/** what to do when the provider's embedder cannot be used as configured */
export function wayOut(provider: string): string {
  return provider === 'ollama' || provider === 'openai' ? REMOTE_WAY_OUT : EMBEDDER_WAY_OUT;
}
/** The way out while the embedding server does not answer. */
export const SERVER_WAY_OUT = 'start the embedding server (embedding_url) or fix the address; embeds are retried and the reconciler catches up once it answers';

export interface EmbedderProviderOptions {
  /** which provider the configuration names (health, doctor); default "transformers" */
  provider?: string;
  /** most texts per model call of the batching embedder (default 32) */
  maxBatch?: number;
  /** first wait before probing a server that stopped answering; doubled up to maxProbeMs (default 1 s) */
  probeMs?: number;
  maxProbeMs?: number;
}

/**
 * Holds the configured embedder while it loads (a model download can take a while) and after, and
 * keeps its outages. When loading fails for good it logs one warning and stays `failed`: the semantic
 * tier is skipped, the others go on (docs/architecture.md, embeddings). An embedding server that does
 * not answer (EmbedderUnavailableError, at load or on any call) makes it `unavailable` with one warning
 * per outage: retrieval skips the semantic tier without calling it, embed jobs fail and are retried by
 * their queue, and a probe with backoff finds the server back (one line at info), after which the
 * reconciler re-enqueues what was not embedded.
 */
export class EmbedderProvider {
  status: EmbedderStatus = 'loading';
  error: string | null = null;
  readonly provider: string;
  private embedder: BatchingEmbedder | null = null;
  private readonly firstLoad: Promise<void>;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly probeMs: number;
  private readonly maxProbeMs: number;

  constructor(
    readonly model: string,
    private readonly load: () => Promise<Embedder>,
    private readonly log: Logger,
    options: EmbedderProviderOptions = {},
  ) {
    this.provider = options.provider ?? 'transformers';
    this.probeMs = options.probeMs ?? 1000;
    this.maxProbeMs = options.maxProbeMs ?? 30_000;
    const maxBatch = options.maxBatch ?? 32;
    // `Promise.resolve().then(load)`: a loader that throws synchronously fails like one that rejects
    this.firstLoad = Promise.resolve().then(load).then(
      (e) => this.loaded(e, maxBatch),
      (err: unknown) => {
        if (err instanceof EmbedderUnavailableError) return this.down(err, () => this.retryLoad(maxBatch));
        this.status = 'failed';
        this.error = message(err);
        this.warnFailed();
      },
    );
  }

  /** the embedder if loaded now, without waiting (also during an outage: its calls then fail) */
  current(): BatchingEmbedder | null {
    return this.embedder;
  }

  /** waits for the first load to settle; null when no embedder is loaded (failed, or its server not answering yet) */
  async ready(): Promise<BatchingEmbedder | null> {
    await this.firstLoad;
    return this.embedder;
  }

  /** the embedder part of `/health` and `doctor`: provider and model or id, and state */
  report(): BackendReport {
    const state: BackendReport['state'] = this.status === 'ready' ? 'ok' : this.status === 'unavailable' ? 'down' : this.status;
    // a server's embedder is named `<provider>:<model>@<dim>` once loaded; before, by the same start
    const backend = this.embedder?.id ?? (this.provider === 'ollama' || this.provider === 'openai' ? `${this.provider}:${this.model}` : this.model);
    return { backend, state, ...(this.error ? { detail: this.error } : {}) };
  }

  /** waits for a load under way, stops probing, then releases the model (its ONNX Runtime session) */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.firstLoad;
    await this.embedder?.close();
  }

  private warnFailed(): void {
    // the one warning (docs/architecture.md, embeddings): the semantic tier is skipped for the life of this process
    this.log.warn({ provider: this.provider, model: this.model, err: this.error }, `embedding model could not be loaded; the semantic tier is skipped, short-term and long-term retrieval go on. To fix: ${wayOut(this.provider)}`);
  }

  private loaded(e: Embedder, maxBatch: number): void {
    if (this.closed) {
      void e.close();
      return;
    }
    this.embedder = new BatchingEmbedder(new Watched(e, this), maxBatch);
    this.status = 'ready';
    this.error = null;
    this.log.info({ provider: this.provider, model: this.model, embedder: e.id, dim: e.dim }, 'embedder ready');
  }

  /** an outage starts (one warning) or goes on; `probe` is tried later, with backoff */
  down(err: EmbedderUnavailableError, probe: () => Promise<boolean> = () => this.probeServer()): void {
    this.error = err.message;
    if (this.status === 'unavailable' || this.closed) return;
    this.status = 'unavailable';
    this.log.warn({ provider: this.provider, model: this.model, err: err.message }, `the embedding server does not answer; the semantic tier is skipped and embeds are retried until it does. To fix: ${SERVER_WAY_OUT}`);
    this.schedule(probe, this.probeMs);
  }

  /** an answer came: an outage ends */
  up(): void {
    if (this.status !== 'unavailable') return;
    this.status = 'ready';
    this.error = null;
    this.log.info({ provider: this.provider, model: this.model }, 'the embedding server answers again');
  }

  private schedule(probe: () => Promise<boolean>, ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void probe().then((back) => {
        if (!back && this.status === 'unavailable') this.schedule(probe, Math.min(this.maxProbeMs, ms * 2));
      });
    }, ms);
    // a probe must not keep a process alive that has nothing else to do
    this.timer.unref();
  }

  private async probeServer(): Promise<boolean> {
    try {
      await this.embedder!.embed(['probe']);
      return true;
    } catch {
      return this.status !== 'unavailable';
    }
  }

  private async retryLoad(maxBatch: number): Promise<boolean> {
    try {
      const e = await this.load();
      this.status = 'loading';
      this.loaded(e, maxBatch);
      return true;
    } catch (err) {
      if (err instanceof EmbedderUnavailableError) {
        this.error = err.message;
        return false;
      }
      this.status = 'failed';
      this.error = message(err);
      this.warnFailed();
      return true;
    }
  }
}

/** The loaded embedder as the provider sees it: each call's outcome starts or ends an outage. */
class Watched implements Embedder {
  readonly id: string;
  readonly dim: number;
  readonly lexical: boolean;
  constructor(
    private readonly inner: Embedder,
    private readonly provider: Pick<EmbedderProvider, 'down' | 'up'>,
  ) {
    this.id = inner.id;
    this.dim = inner.dim;
    this.lexical = inner.lexical === true;
  }

  async embed(texts: readonly string[], purpose?: EmbedPurpose): Promise<Float32Array[]> {
    try {
      const out = await this.inner.embed(texts, purpose);
      this.provider.up();
      return out;
    } catch (err) {
      if (err instanceof EmbedderUnavailableError) this.provider.down(err);
      throw err;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
