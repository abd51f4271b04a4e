import { EmbedderLoadError, type Embedder } from './embedder.js';

export interface TransformersOptions {
  /** local folder holding `<model id>/` with config, tokenizer and onnx/model.onnx; disables downloads */
  modelDir?: string | undefined;
  cacheDir: string;
}

type Extractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<{ dims: number[]; data: Float32Array }>;

/**
 * Sentence embeddings through @huggingface/transformers (ONNX Runtime on the CPU): mean pooling,
 * L2-normalized. Computed locally; no text leaves the machine.
 */
export class TransformersEmbedder implements Embedder {
  private constructor(
    readonly id: string,
    readonly dim: number,
    private readonly extractor: Extractor & { dispose?: () => Promise<void> },
  ) {}

  static async load(model: string, options: TransformersOptions): Promise<TransformersEmbedder> {
    let extractor: Extractor & { dispose?: () => Promise<void> };
    try {
      const tf = await import('@huggingface/transformers');
      // transformers.js keeps these settings module-wide; one embedder per process sets them once
      tf.env.cacheDir = options.cacheDir;
      if (options.modelDir) {
        tf.env.localModelPath = options.modelDir;
        tf.env.allowRemoteModels = false;
        tf.env.allowLocalModels = true;
      }
      extractor = (await tf.pipeline('feature-extraction', model, { dtype: 'fp32' })) as unknown as typeof extractor;
    } catch (err) {
      throw new EmbedderLoadError(model, (err as Error).message, { cause: err });
    }
    // the model's real output width, measured rather than trusted from its config
    let probe: { dims: number[]; data: Float32Array };
    try {
      probe = await extractor(['dimension probe'], { pooling: 'mean', normalize: true });
    } catch (err) {
      throw new EmbedderLoadError(model, `the model loaded but cannot run: ${(err as Error).message}`, { cause: err });
    }
    const dim = probe.dims[probe.dims.length - 1];
    if (!dim || probe.data.length !== dim || !probe.data.every(Number.isFinite)) {
      throw new EmbedderLoadError(model, `the model produced an unusable embedding (dims ${JSON.stringify(probe.dims)})`);
    }
    return new TransformersEmbedder(`${model}@${dim}`, dim, extractor);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const out = await this.extractor([...texts], { pooling: 'mean', normalize: true });
    const out2: Float32Array[] = [];
    for (let i = 0; i < texts.length; i++) out2.push(out.data.slice(i * this.dim, (i + 1) * this.dim));
    return out2;
  }

  async close(): Promise<void> {
    await this.extractor.dispose?.();
  }
}
