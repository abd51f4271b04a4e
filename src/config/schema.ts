import { z } from 'zod';

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
  /** Qdrant for the semantic tier; unset → the embedded index in the SQLite file */
  qdrant_url: optionalUrl(),
  qdrant_api_key: z.string().optional(),
  /** the one SQLite file: turn log, long-term store, embedded vectors */
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
  archival_cron: z.string().min(1).default('0 3 * * *'),
  archival_timezone: z.string().min(1).default('UTC'),
  archival_inactive_days: num(z.number().positive()).default(30),
  /** "hash" for the built-in lexical embedder, else a transformers.js model id */
  embedding_model: z.string().min(1).default('Xenova/all-MiniLM-L6-v2'),
  /** local folder holding models (for machines with no internet); remote downloads are then disabled */
  model_dir: z.string().optional(),
  /** where downloaded models are cached */
  model_cache_dir: z.string().default('./data/models'),
  /** forces every LLM call to the local Ollama endpoint */
  privacy_mode: bool().default(false),
  llm_provider: z.enum(['none', 'ollama', 'openai']).default('none'),
  llm_base_url: optionalUrl(),
  llm_model: z.string().optional(),
  llm_api_key: z.string().optional(),
  llm_timeout_ms: num(z.number().int().positive()).default(60_000),
  /** the local Ollama endpoint privacy_mode sends to */
  ollama_url: z.url().default('http://127.0.0.1:11434'),
  host: z.string().min(1).default('127.0.0.1'),
  port: num(z.number().int().min(0).max(65_535)).default(8080),
  api_keys: z.preprocess(parseApiKeysEnv, z.array(ApiKeySchema)).default([]),
  max_turn_chars: num(z.number().int().positive()).default(32_000),
  /** request body cap of the HTTP API */
  max_body_bytes: num(z.number().int().positive()).default(1024 * 1024),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** per-tier time budgets of one retrieval pass; a tier over budget is skipped for that call */
  short_term_budget_ms: num(z.number().int().positive()).default(100),
  semantic_budget_ms: num(z.number().int().positive()).default(500),
  long_term_budget_ms: num(z.number().int().positive()).default(300),
  /** concurrency of each queue's processor in this process */
  worker_concurrency: num(z.number().int().positive().max(1000)).default(16),
  /** how often unfinished turns in the turn log are re-enqueued */
  reconcile_interval_s: num(z.number().positive()).default(30),
  /** a turn whose jobs have not completed after this long is re-enqueued */
  reconcile_after_s: num(z.number().positive()).default(60),
});

export type Config = Readonly<z.infer<typeof ConfigSchema>>;
export type ConfigKey = keyof z.infer<typeof ConfigSchema>;
export const CONFIG_KEYS = Object.keys(ConfigSchema.shape) as ConfigKey[];
