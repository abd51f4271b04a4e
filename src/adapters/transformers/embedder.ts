import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EmbedderLoadError, type EmbedPurpose, type Embedder } from '../../ports/embedder.js';
import { PLAIN_PROFILE, prefixed, profileTag, type ModelProfile } from '../../domain/embedding-profile.js';

export const DEFAULT_MODEL_HUB = 'https://huggingface.co/';
/** what a model folder under model_dir holds, relative to `<model_dir>/<model id>/` */
export const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'] as const;

export interface TransformersOptions {
  /**
   * Local folder holding `<model id>/` with config.json, tokenizer.json, tokenizer_config.json and
   * onnx/model.onnx. When set, nothing is downloaded.
   */
  modelDir?: string | undefined;
  /** where downloaded models are cached */
  cacheDir: string;
  /**
   * A request to the model hub that shows no progress (no answer, or a download that stalls) for
   * this long fails the load; without it, a machine whose firewall drops packets waits minutes.
   */
  loadTimeoutMs: number;
  /** the model hub (or a mirror of it); default huggingface.co */
  remoteHost?: string | undefined;
  /** pooling, normalization and prefixes (embedding/profiles.ts); default the plain mean-pooled reading */
  profile?: ModelProfile | undefined;
}

/** The parts of a transformers.js feature-extraction pipeline this module uses. */
interface Tensor {
  dims: number[];
  data: ArrayLike<number | bigint>;
}
interface FeaturePipeline {
  tokenizer(texts: string[], options: { padding: boolean; truncation: boolean }): Record<string, Tensor> & { attention_mask: Tensor };
  model: ((inputs: Record<string, Tensor>) => Promise<Record<string, Tensor | undefined>>) & { config?: Record<string, unknown> };
  dispose(): Promise<void>;
}

/**
 * Sentence embeddings through @huggingface/transformers (ONNX Runtime on the CPU): the pipeline's
 * tokenizer and model, then the model's pooling (mean over the attention mask, or the [CLS] token)
 * and L2 normalization done here (the library's generic pooling costs twice the model run of a small
 * model), texts prefixed as the model's profile says. Computed locally; no text leaves the machine.
 * The id is `<model>@<dim>` and the profile's tag, so the vectors of two models (or two widths or
 * readings of one) are never compared.
 */
export class TransformersEmbedder implements Embedder {
  private closed: Promise<void> | null = null;

  private constructor(
    readonly id: string,
    readonly dim: number,
    private readonly pipe: FeaturePipeline,
    private readonly profile: ModelProfile,
  ) {}

  /**
   * Loads the model and proves it usable: a probe sentence must come out as token states
   * [1, tokens, hidden] whose width is the model's declared hidden_size, pooling to a finite,
   * non-zero vector. Any failure is an EmbedderLoadError and leaves no session open.
   */
  static async load(model: string, options: TransformersOptions): Promise<TransformersEmbedder> {
    const local = options.modelDir !== undefined;
    const folder = local ? join(resolve(options.modelDir!), model) : undefined;
    // said plainly here; transformers.js would name its own settings instead
    if (folder !== undefined && !existsSync(folder)) {
      throw new EmbedderLoadError(model, `model folder ${folder} not found (model_dir must hold <model id>/ with ${MODEL_FILES.join(', ')})`);
    }
    let pipe: FeaturePipeline;
    try {
      const tf = await import('@huggingface/transformers');
      // transformers.js keeps these settings module-wide; they are set on every load so that one
      // load's host never leaks into the next
      tf.env.allowLocalModels = local;
      tf.env.allowRemoteModels = !local;
      tf.env.cacheDir = resolve(options.cacheDir);
      tf.env.remoteHost = options.remoteHost ?? DEFAULT_MODEL_HUB;
      tf.env.fetch = fetchWithIdleTimeout(options.loadTimeoutMs);
      // a local model goes by its folder, not its id: transformers.js keys its in-flight reads and
      // memoised configs by the id alone and resolves it against a module-wide folder, so two loads
      // of one id from two folders in one process would read each other's files
      pipe = (await tf.pipeline('feature-extraction', folder ?? model, {
        // 'fp32' selects onnx/model.onnx (the quantized variants carry a suffix)
        dtype: 'fp32',
        device: 'cpu',
        cache_dir: resolve(options.cacheDir),
        local_files_only: local,
        // ORT's own warnings (unused initializers and the like) would go to stderr past our logger
        session_options: { logSeverityLevel: 3 },
      })) as unknown as FeaturePipeline;
    } catch (err) {
      const hint = local ? '' : ' (on a machine without internet, set model_dir to a local copy of the model)';
      throw new EmbedderLoadError(model, `${describe(err)}${hint}`, { cause: err });
    }
    const profile = options.profile ?? PLAIN_PROFILE;
    try {
      const dim = await probe(model, pipe);
      return new TransformersEmbedder(`${model}@${dim}${profileTag(profile, true)}`, dim, pipe, profile);
    } catch (err) {
      await pipe.dispose().catch(() => {});
      throw err instanceof EmbedderLoadError ? err : new EmbedderLoadError(model, describe(err), { cause: err });
    }
  }

  async embed(texts: readonly string[], purpose: EmbedPurpose = 'document'): Promise<Float32Array[]> {
    if (this.closed) throw new Error(`embedder ${this.id} is closed`);
    if (texts.length === 0) return [];
    const { states, mask } = await tokenStates(this.pipe, [...prefixed(this.profile, texts, purpose)]);
    const [batch, , width] = states.dims;
    if (states.dims.length !== 3 || batch !== texts.length || width !== this.dim) {
      throw new Error(`embedder ${this.id} returned token states of dims ${JSON.stringify(states.dims)} for ${texts.length} texts`);
    }
    return pool(states, mask, this.profile);
  }

  /** Releases the ONNX Runtime session; idempotent. */
  close(): Promise<void> {
    this.closed ??= this.pipe.dispose().then(() => undefined);
    return this.closed;
  }
}

async function tokenStates(pipe: FeaturePipeline, texts: string[]): Promise<{ states: Tensor; mask: Tensor }> {
  const inputs = pipe.tokenizer(texts, { padding: true, truncation: true });
  const out = await pipe.model(inputs);
  // the output names the feature-extraction pipeline accepts, in its order
  const states = out.last_hidden_state ?? out.logits ?? out.token_embeddings;
  if (!states) throw new Error(`the model has no last_hidden_state output (outputs: ${Object.keys(out).join(', ')})`);
  return { states, mask: inputs.attention_mask };
}

/**
 * One vector per text: the mean of its token states over its attention mask, or its first token's
 * state ([CLS]); L2-normalized when the profile says so (every known model).
 */
function pool(states: Tensor, mask: Tensor, profile: Pick<ModelProfile, 'pooling' | 'normalize'>): Float32Array[] {
  const [batch, tokens, dim] = states.dims as [number, number, number];
  const data = states.data as Float32Array;
  const vectors: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const v = new Float32Array(dim);
    let count = 0;
    for (let t = 0; t < tokens; t++) {
      if (Number(mask.data[b * tokens + t]) === 0) continue;
      count++;
      const offset = (b * tokens + t) * dim;
      for (let k = 0; k < dim; k++) v[k]! += data[offset + k]!;
      if (profile.pooling === 'cls') break;
    }
    let norm = 0;
    for (let k = 0; k < dim; k++) norm += v[k]! * v[k]!;
    norm = Math.sqrt(norm);
    // normalized, the mean's 1/count cancels out: divided once, by the norm or by the count
    const by = profile.normalize ? norm : count;
    if (count > 0 && by > 0) for (let k = 0; k < dim; k++) v[k]! /= by;
    vectors.push(v);
  }
  return vectors;
}

/** One probe sentence through the model: its real output width, checked against its config. */
async function probe(model: string, pipe: FeaturePipeline): Promise<number> {
  let states: Tensor;
  let mask: Tensor;
  try {
    ({ states, mask } = await tokenStates(pipe, ['dimension probe']));
  } catch (err) {
    throw new EmbedderLoadError(model, `the model loaded but cannot run: ${describe(err)}`, { cause: err });
  }
  const dim = states.dims.length === 3 && states.dims[0] === 1 ? states.dims[2] : undefined;
  if (!dim || states.dims[1] !== mask.dims[1] || states.data.length !== states.dims.reduce((a, b) => a * b, 1)) {
    throw new EmbedderLoadError(model, `the model produced an unusable embedding (output dims ${JSON.stringify(states.dims)}); a sentence-embedding model must output last_hidden_state [batch, tokens, hidden]`);
  }
  const [v] = pool(states, mask, PLAIN_PROFILE);
  let norm = 0;
  for (const x of v!) norm += x * x;
  if (!Number.isFinite(norm) || Math.abs(norm - 1) > 1e-3) {
    throw new EmbedderLoadError(model, `the model produced an unusable embedding (${Number.isFinite(norm) ? 'all zeros' : 'not finite'})`);
  }
  // measured rather than trusted, then checked against what the model says of itself
  const declared = pipe.model.config?.hidden_size;
  if (typeof declared === 'number' && declared !== dim) {
    throw new EmbedderLoadError(model, `the model outputs ${dim}-dimension vectors but its config.json declares hidden_size ${declared}`);
  }
  return dim;
}

/**
 * A fetch for the model hub that aborts a request once it shows no progress for `ms`: no response
 * yet (DNS, connect, headers) or no body chunk for that long. A slow but moving download goes on.
 */
export function fetchWithIdleTimeout(ms: number, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const controller = new AbortController();
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new Error(`no answer from ${new URL(url).host} for ${ms} ms (no network?)`)), ms);
      // a body the library cancels leaves the timer armed; it must not hold the process open
      timer.unref();
    };
    const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
    arm();
    let res: Response;
    try {
      res = await base(input, { ...init, signal });
    } catch (err) {
      clearTimeout(timer);
      throw controller.signal.aborted ? controller.signal.reason : err;
    }
    if (!res.body) {
      clearTimeout(timer);
      return res;
    }
    arm();
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, c) {
          arm();
          c.enqueue(chunk);
        },
        flush() {
          clearTimeout(timer);
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** the error's message with its cause (fetch hides the real reason, e.g. ENOTFOUND, in `cause`) */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
}
