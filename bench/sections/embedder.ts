// Embedding throughput (sentences/s) of the real transformers.js + onnxruntime-node path on the
// generated tiny BERT model, through the BatchingEmbedder the `embed` workers use: sentences are
// handed over as concurrent embedOne() calls (as concurrent jobs do), gathered into model calls of
// at most 1 or 32 texts; a last row keeps only 16 calls in flight, as worker_concurrency = 16 does.
// The raw limit beside each figure: the same model called directly with prepared batches of 32, one
// call at a time, no batching wrapper, measured in the same run (the batcher can beat it by a little:
// with several batches in flight, tokenizing one overlaps running another).
// Then each embedding-server provider (ollama, openai) against a fake server of its own on loopback
// speaking its real wire format (test/fixtures/fake-embedding-server.ts), through the same
// BatchingEmbedder with every turn's embedOne() in flight: turns/s beside the bare HTTP round trip of
// the same batches (fetch, the same JSON bodies, one at a time, JSON parsed), so our side's overhead
// (batching, prefixes, retry bookkeeping, width checks, Float32Array copies) is the ratio.
// Takes: nothing (writes its models to a temp folder). Adds rows to the report, one per model width
// and one per provider.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchingEmbedder } from '../../src/embedding/batching.js';
import { TransformersEmbedder } from '../../src/adapters/transformers/embedder.js';
import { writeTinyModel } from '../../test/fixtures/tiny-model.js';
import { startFakeEmbeddingServer, type Wire } from '../../test/fixtures/fake-embedding-server.js';
import { loadEmbedder } from '../../src/embedding/load.js';
import type { Report, Section } from '../report.js';

const SUBJECTS = ['my sister', 'the dog', 'our team', 'my friend Ana', 'the new doctor', 'my brother'];
const VERBS = ['moved to', 'loves', 'visited', 'works near', 'talked about', 'plans a trip to'];
const OBJECTS = ['berlin last year', 'the old coffee place on the corner', 'hiking in the mountains every weekend', 'a small apartment with two cats', 'the piano lessons on friday evening', 'a vegetarian restaurant downtown'];

/** chat-turn-like sentences of roughly 10–25 tokens, all different */
function sentences(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${SUBJECTS[i % 6]} ${VERBS[Math.floor(i / 6) % 6]} ${OBJECTS[Math.floor(i / 36) % 6]} (note ${i})`);
}

async function rate(n: number, run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return n / ((performance.now() - started) / 1000);
}

/**
 * The median of `runs` measurements of each variant, taken in rounds (one of each per round) so that
 * the load of these shared machines drifting during the run weighs on every variant alike.
 */
async function medians<K extends string>(runs: number, variants: Record<K, () => Promise<number>>): Promise<Record<K, number>> {
  const xs = Object.fromEntries(Object.keys(variants).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < runs; r++) for (const k of Object.keys(variants) as K[]) xs[k].push(await variants[k]());
  const out = {} as Record<K, number>;
  for (const k of Object.keys(xs) as K[]) out[k] = xs[k].sort((a, b) => a - b)[Math.floor(runs / 2)]!;
  return out;
}

const section: Section = async (report: Report, { quick }) => {
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-embedder-'));
  try {
    const n = quick ? 256 : 1024;
    const runs = quick ? 1 : 5;
    const texts = sentences(n);
    // 32: the tiny default; 384: MiniLM's output width (the compute is still far below MiniLM's six layers)
    for (const hidden of [32, 384]) {
      const modelId = writeTinyModel(dir, { modelId: `bench/tiny-bert-${hidden}`, hidden });
      const model = await TransformersEmbedder.load(modelId, { modelDir: dir, cacheDir: join(dir, 'cache'), loadTimeoutMs: 10_000 });
      try {
        const chunks = Array.from({ length: n / 32 }, (_, i) => texts.slice(i * 32, (i + 1) * 32));
        for (const c of chunks.slice(0, 8)) await model.embed(c); // warm-up: first runs allocate and compile
        /** `inFlight` callers, each awaiting one embedOne() at a time, through a batcher of `maxBatch` */
        const through = (maxBatch: number, inFlight: number) => () => {
          const batching = new BatchingEmbedder(model, maxBatch);
          let next = 0;
          const caller = async () => {
            while (next < n) await batching.embedOne(texts[next++]!);
          };
          return rate(n, () => Promise.all(Array.from({ length: inFlight }, caller)));
        };
        const { direct, one, thirtyTwo, sixteen } = await medians(runs, {
          direct: () =>
            rate(n, async () => {
              for (const c of chunks) await model.embed(c);
            }),
          one: through(1, n),
          thirtyTwo: through(32, n),
          sixteen: through(32, 16),
        });
        const label = `tiny model, hidden ${hidden}`;
        const row = (metric: string, value: number, note?: string) =>
          report.add({
            section: 'embedder',
            metric: `${label}: ${metric}`,
            value,
            unit: 'sentences/s',
            baseline: direct,
            baselineLabel: 'direct embed(), batches of 32, one at a time',
            ratio: value / direct,
            ...(note ? { note } : {}),
          });
        row('BatchingEmbedder, batch 1', one);
        row('BatchingEmbedder, batch 32', thirtyTwo, `${(thirtyTwo / one).toFixed(1)}× batch 1`);
        row('BatchingEmbedder, batch 32, 16 calls in flight', sixteen, 'what worker_concurrency 16 feeds it');
      } finally {
        await model.close();
      }
    }
    for (const wire of ['ollama', 'openai'] as const) await remoteRows(report, wire, texts, runs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** what the bench asks each fake server for: a 384-wide model (MiniLM's width), batches of 32 */
const REMOTE = { ollama: { model: 'all-minilm', path: '/api/embed' }, openai: { model: 'text-embedding-3-small', path: '/v1/embeddings' } } as const;

async function remoteRows(report: Report, wire: Wire, texts: string[], runs: number): Promise<void> {
  const server = await startFakeEmbeddingServer({ wire, dim: 384 });
  const { model, path } = REMOTE[wire];
  const embedder = await loadEmbedder({ embedding_provider: wire, embedding_model: model, embedding_url: server.url, embedding_batch_size: 32, model_cache_dir: '', model_dir: undefined, embedding_load_timeout_ms: 1000 });
  try {
    const chunks = Array.from({ length: texts.length / 32 }, (_, i) => texts.slice(i * 32, (i + 1) * 32));
    const bare = async () => {
      for (const c of chunks) {
        const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ model, input: c }) });
        await res.json();
      }
    };
    for (const c of chunks.slice(0, 4)) await embedder.embed(c); // warm-up: connections, JIT
    await bare();
    const { direct, batched } = await medians(runs, {
      direct: () => rate(texts.length, bare),
      batched: () => {
        const batching = new BatchingEmbedder(embedder, 32);
        return rate(texts.length, () => Promise.all(texts.map((t) => batching.embedOne(t))));
      },
    });
    report.add({
      section: 'embedder',
      metric: `${wire} provider, fake server (384 dims): BatchingEmbedder, batch 32`,
      value: batched,
      unit: 'turns/s',
      baseline: direct,
      baselineLabel: 'bare HTTP round trips of the same batches of 32, one at a time',
      ratio: batched / direct,
      note: 'the fake server answers at once: the client side\'s ceiling, not a model\'s speed',
    });
  } finally {
    await embedder.close();
    await server.close();
  }
}

export default section;
