import { z } from 'zod';
import { cronProblem, timezoneProblem } from '../archival/cron.js';

/** Environment variables arrive as strings; these accept both the typed TOML value and its string form. */
const num = (inner: z.ZodNumber) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), inner);
const bool = () =>
  z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    const s = v.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(s)) return true;
    if (['false', '0', 'no', 'off'].includes(s)) return false;
    return v;
  }, z.boolean());
const optionalUrl = () =>
  z.preprocess((v) => (v === '' ? undefined : v), z.url().optional());

export const ApiKeySchema = z.strictObject({
  key: z.string().min(16, 'an API key must be at least 16 characters'),
  /** user ids the key may touch; ["*"] makes it an admin key */
  users: z.array(z.string().min(1).max(128)).min(1),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

/** `keyA=alice,bob;keyB=*` — the environment-variable form of `api_keys`. */
function parseApiKeysEnv(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  if (v.trim() === '') return [];
  return v.split(';').filter((part) => part.trim() !== '').map((part) => {
    const eq = part.indexOf('=');
    if (eq < 0) return { key: part.trim(), users: [] };
    return {
      key: part.slice(0, eq).trim(),
      users: part.slice(eq + 1).split(',').map((u) => u.trim()).filter(Boolean),
    };
  });
}

/**
 * Every configuration key, with its default beside it. This is the only place defaults live.
 */
export const ConfigSchema = z.strictObject({
  /** Redis for BullMQ queues and the short-term tier; unset → in-process queue and store */
  redis_url: optionalUrl(),
  /** start of every Redis key this deployment writes (short-term lists, BullMQ queues), so several can share one Redis */
  redis_prefix: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ and - only (1–64)').default('nc'),
  /** how long start-up waits for Redis before falling back to the in-process queue and short-term store */
  redis_connect_timeout_ms: num(z.number().int().positive()).default(2_000),
  /** a Redis command (enqueue, short-term read or write) not answered within this fails instead of hanging the request */
  redis_command_timeout_ms: num(z.number().int().positive()).default(5_000),
  /**
   * with Redis, `serve` runs no workers by default (run `neuralcleave worker` processes); true makes it
   * also consume every queue in-process. Without Redis, `serve` always runs them.
   */
  serve_runs_workers: bool().default(false),
  /**
   * HTTP processes of `serve` sharing its port (node:cluster) and the SQLite file; 0 → one per core;
   * 1 → one process doing everything. Above 1 the primary process runs the jobs (and, without Redis,
   * holds the queue and the short-term tier for the others). `serve --processes N` overrides it.
   */
  serve_processes: num(z.number().int().min(0).max(64)).default(0),
  /** Qdrant for the semantic tier; unset → the embedded index in the SQLite file */
  qdrant_url: optionalUrl(),
  qdrant_api_key: z.string().optional(),
  /** start of every Qdrant collection name of this deployment (one collection per embedder follows it) */
  qdrant_collection_prefix: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only (1–64)').default('neuralcleave'),
  /** a Qdrant write or admin request is aborted after this long (searches stop at semantic_budget_ms) */
  qdrant_timeout_ms: num(z.number().int().positive()).default(10_000),
  /** how long start-up waits for Qdrant to answer before falling back to the embedded index */
  qdrant_connect_timeout_ms: num(z.number().int().positive()).default(3_000),
  /**
   * PostgreSQL as the durable store (`postgres://user[:password]@host[:port]/database`): turn log,
   * long-term store, archives, erasure signals and the embedded index's vectors all live there, shared
   * by every process on every host, and no SQLite file is created. Unset → the SQLite file. A database
   * that does not answer at start is a start-up error: a durable store has no fallback.
   */
  database_url: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .refine((v) => /^postgres(ql)?:\/\/[^/]/.test(v) && URL.canParse(v), 'a postgres:// or postgresql:// URL (postgres://user@host:5432/database)')
      .optional(),
  ),
  /** connections at most in each process's pool (every API and worker process on every host opens its own) */
  database_pool_max: num(z.number().int().min(1).max(1000)).default(10),
  /** a statement running longer is cancelled by PostgreSQL (a stuck query must not hold a request for ever) */
  database_statement_timeout_ms: num(z.number().int().positive()).default(30_000),
  /** giving up on opening a connection, or on waiting for a free one in the pool: the request then answers 503 */
  database_connect_timeout_ms: num(z.number().int().positive()).default(5_000),
  /** the one SQLite file: turn log, long-term store, embedded vectors (unused when database_url is set) */
  sqlite_path: z.string().min(1).default('./data/neuralcleave.db'),
  /** how long a session's recent turns live in the short-term tier */
  short_term_ttl_s: num(z.number().int().positive()).default(86_400),
  /** how many recent turns per session the short-term tier keeps */
  short_term_max_turns: num(z.number().int().positive().max(10_000)).default(50),
  /** turns scored at or above this are written to the long-term store */
  importance_threshold: num(z.number().min(0).max(1)).default(0.3),
  /** tokens of the LLM's context window */
  context_window: num(z.number().int().positive()).default(8192),
  /** a session is compacted when its estimated tokens exceed this share of context_window */
  compaction_threshold: num(z.number().gt(0).max(1)).default(0.5),
  /** the newest turns of a session a compaction keeps verbatim beside its summary (pinned turns are always kept) */
  compaction_keep_turns: num(z.number().int().min(0).max(1000)).default(4),
  /** the longest summary a compaction writes, in tokens */
  summary_max_tokens: num(z.number().int().min(32).max(8192)).default(512),
  /** "auto": the LLM, else the extractive summarizer when no LLM is configured or it fails; "llm" or "extractive" only */
  compaction_summarizer: z.enum(['auto', 'llm', 'extractive']).default('auto'),
  /** when the archival job runs: cron with 5 fields, or 6 with seconds first (default daily 03:00) */
  archival_cron: z
    .string()
    .min(1)
    .superRefine((v, ctx) => {
      const problem = cronProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: `not a valid cron pattern: ${problem}` });
    })
    .default('0 3 * * *'),
  /** the IANA timezone archival_cron is read in */
  archival_timezone: z
    .string()
    .min(1)
    .superRefine((v, ctx) => {
      const problem = timezoneProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .default('UTC'),
  /** a session whose last turn is older than this many days is condensed into one archive entry */
  archival_inactive_days: num(z.number().positive()).default(30),
  /**
   * where embeddings come from: "transformers" (in process, transformers.js), "hash" (the built-in
   * lexical embedder), "ollama" (`POST /api/embed` of an Ollama server) or "openai" (any
   * OpenAI-compatible `POST /v1/embeddings`: OpenAI, vLLM, llama.cpp, TEI, LM Studio). The last two
   * send the text of every turn and query to embedding_url (docs/embeddings.md)
   */
  embedding_provider: z.enum(['transformers', 'hash', 'ollama', 'openai']).default('transformers'),
  /**
   * the model: a transformers.js model id ("hash" also selects the built-in embedder), or the name the
   * Ollama or OpenAI-compatible server knows it by. Left at this default with ollama or openai, the
   * provider's usual model is asked for instead (nomic-embed-text, text-embedding-3-small)
   */
  embedding_model: z.string().min(1).default('Xenova/all-MiniLM-L6-v2'),
  /** the embedding server (ollama: default ollama_url; openai: default https://api.openai.com; a trailing /v1 is accepted) */
  embedding_url: optionalUrl(),
  /** bearer key of the OpenAI-compatible server; never logged, never in /health or an error */
  embedding_api_key: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** the vector width to ask for (OpenAI `dimensions`) and to expect; unset: whatever the first answer has */
  embedding_dimensions: num(z.number().int().min(1).max(65_536)).optional(),
  /** most texts in one request to the embedding server */
  embedding_batch_size: num(z.number().int().min(1).max(2048)).default(32),
  /** one request to the embedding server (connect, answer and body) is given up after this long */
  embedding_timeout_ms: num(z.number().int().positive()).default(30_000),
  /** retries of a request the server answered 429 or 5xx (or did not answer), with exponential backoff */
  embedding_retries: num(z.number().int().min(0).max(10)).default(3),
  /**
   * privacy_mode accepts only a loopback embedding_url; true declares embedding_url local anyway (an
   * Ollama on a machine of your own network), so privacy mode lets text go there
   */
  embedding_url_is_local: bool().default(false),
  /** how token states become one vector (transformers only): "mean" or "cls"; unset: from the known-model table */
  embedding_pooling: z.enum(['mean', 'cls']).optional(),
  /** L2-normalize each vector; unset: from the known-model table (true for every known model) */
  embedding_normalize: bool().optional(),
  /** put before every query embedded ("query: " for e5); unset: from the known-model table; "" for none */
  embedding_query_prefix: z.string().max(1000).optional(),
  /** put before every stored text embedded ("passage: " for e5); unset: from the known-model table; "" for none */
  embedding_document_prefix: z.string().max(1000).optional(),
  /** local folder holding models (for machines with no internet); remote downloads are then disabled */
  model_dir: z.string().optional(),
  /** where downloaded models are cached */
  model_cache_dir: z.string().default('./data/models'),
  /**
   * a model-hub request that shows no progress for this long (no answer, or a stalled download)
   * fails the model load, so a machine with no internet gives up in seconds instead of hanging
   */
  embedding_load_timeout_ms: num(z.number().int().positive()).default(10_000),
  /** forces every LLM call to the local Ollama endpoint, and refuses an embedding server that is not loopback */
  privacy_mode: bool().default(false),
  llm_provider: z.enum(['none', 'ollama', 'openai']).default('none'),
  llm_base_url: optionalUrl(),
  llm_model: z.string().optional(),
  llm_api_key: z.string().optional(),
  llm_timeout_ms: num(z.number().int().positive()).default(60_000),
  /** the local Ollama endpoint privacy_mode sends to */
  ollama_url: z.url().default('http://127.0.0.1:11434'),
  /** the Ollama model used when llm_model names none, and in privacy mode unless llm_provider is "ollama" */
  ollama_model: z.string().min(1).default('llama3.2'),
  host: z.string().min(1).default('127.0.0.1'),
  port: num(z.number().int().min(0).max(65_535)).default(8080),
  api_keys: z.preprocess(parseApiKeysEnv, z.array(ApiKeySchema)).default([]),
  max_turn_chars: num(z.number().int().positive()).default(32_000),
  /** request body cap of the HTTP API */
  max_body_bytes: num(z.number().int().positive()).default(1024 * 1024),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * results whose relevance (explain.relevance, 0–1) is below this stay out of prompt blocks, though
   * still among the results; 0 puts every result in. At 0.1 the evaluation sets keep every evidence
   * turn found in their prompt blocks (docs/retrieval.md)
   */
  prompt_min_relevance: num(z.number().min(0).max(1)).default(0.1),
  /** per-tier time budgets of one retrieval pass; a tier over budget is skipped for that call */
  short_term_budget_ms: num(z.number().int().positive()).default(100),
  semantic_budget_ms: num(z.number().int().positive()).default(500),
  long_term_budget_ms: num(z.number().int().positive()).default(300),
  /** concurrency of each queue's processor in this process */
  worker_concurrency: num(z.number().int().positive().max(1000)).default(64),
  /** BullMQ: a running job's lock; the jobs of a worker that died are handed to others after at most this long */
  worker_lock_duration_ms: num(z.number().int().min(1000)).default(30_000),
  /** BullMQ: how often workers look for jobs whose lock expired (stalled) and move them back to wait */
  worker_stalled_interval_ms: num(z.number().int().min(500)).default(30_000),
  /** on SIGTERM/SIGINT a worker finishes its in-flight jobs for up to this long, then hands the rest back */
  worker_shutdown_timeout_ms: num(z.number().int().positive()).default(20_000),
  /** how often unfinished turns in the turn log are re-enqueued */
  reconcile_interval_s: num(z.number().positive()).default(30),
  /** a turn whose jobs have not completed after this long is re-enqueued */
  reconcile_after_s: num(z.number().positive()).default(60),
});

/** keys holding a file or folder: relative values in a config file are read against that file's folder */
export const PATH_KEYS = ['sqlite_path', 'model_dir', 'model_cache_dir'] as const satisfies readonly ConfigKey[];

export type Config = Readonly<z.infer<typeof ConfigSchema>>;
export type ConfigKey = keyof z.infer<typeof ConfigSchema>;
export const CONFIG_KEYS = Object.keys(ConfigSchema.shape) as ConfigKey[];
