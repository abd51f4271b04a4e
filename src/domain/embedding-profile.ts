import { createHash } from 'node:crypto';

/**
 * What a text is embedded for: a stored text (`document`) or a retrieval query (`query`). Models
 * trained with asymmetric prefixes (e5 "query: "/"passage: ", bge's query instruction) read the two
 * differently; the others ignore it.
 */
export type EmbedPurpose = 'document' | 'query';

/**
 * How a model's output is read and what its texts are prefixed with. Models differ: MiniLM is
 * mean-pooled, bge takes the [CLS] token and an instruction before queries, e5 wants "query: " and
 * "passage: ", nomic "search_query: " and "search_document: " — read another way they give no error,
 * only worse vectors.
 */
export interface ModelProfile {
  /** token states to one vector (in-process models only; a server pools as its model says) */
  pooling: 'mean' | 'cls';
  normalize: boolean;
  query_prefix: string;
  document_prefix: string;
}

/** what a model nobody has described gets: sentence-transformers' usual reading */
export const PLAIN_PROFILE: ModelProfile = Object.freeze({ pooling: 'mean', normalize: true, query_prefix: '', document_prefix: '' });

const BGE_QUERY = 'Represent this sentence for searching relevant passages: ';

/**
 * Known models, first match wins, matched against the model name wherever it is served from
 * (`Xenova/bge-small-en-v1.5`, `BAAI/bge-base-en-v1.5`, Ollama's `nomic-embed-text:latest`). The
 * prefixes are those of each model card.
 */
export const KNOWN_MODELS: ReadonlyArray<{ match: RegExp; profile: Partial<ModelProfile>; card: string }> = [
  { match: /minilm|mpnet/i, profile: {}, card: 'sentence-transformers: mean pooling, no prefixes' },
  // bge-m3 and the multilingual bge models take no instruction
  { match: /bge-m3|bge-multilingual/i, profile: { pooling: 'cls' }, card: 'BAAI bge-m3: CLS pooling, no instruction' },
  { match: /bge-(small|base|large)-(en|zh)/i, profile: { pooling: 'cls', query_prefix: BGE_QUERY }, card: 'BAAI bge v1.5: CLS pooling, an instruction before queries' },
  { match: /mxbai-embed-large|snowflake-arctic-embed/i, profile: { pooling: 'cls', query_prefix: BGE_QUERY }, card: 'CLS pooling, the bge query instruction' },
  { match: /(^|[/_-])e5-|multilingual-e5/i, profile: { query_prefix: 'query: ', document_prefix: 'passage: ' }, card: 'intfloat e5: mean pooling, "query: " / "passage: "' },
  { match: /nomic-embed-text/i, profile: { query_prefix: 'search_query: ', document_prefix: 'search_document: ' }, card: 'nomic-embed-text: mean pooling, "search_query: " / "search_document: "' },
  { match: /gte-/i, profile: {}, card: 'thenlper/Alibaba gte: mean pooling, no prefixes' },
];

export interface ProfileOverrides {
  embedding_pooling?: ModelProfile['pooling'] | undefined;
  embedding_normalize?: boolean | undefined;
  embedding_query_prefix?: string | undefined;
  embedding_document_prefix?: string | undefined;
}

/** The model's profile: the table's row for it (else the plain one), each field overridable in config. */
export function profileFor(model: string, o: ProfileOverrides = {}): ModelProfile {
  const known = KNOWN_MODELS.find((k) => k.match.test(model))?.profile ?? {};
  const p: ModelProfile = { ...PLAIN_PROFILE, ...known };
  return Object.freeze({
    pooling: o.embedding_pooling ?? p.pooling,
    normalize: o.embedding_normalize ?? p.normalize,
    query_prefix: o.embedding_query_prefix ?? p.query_prefix,
    document_prefix: o.embedding_document_prefix ?? p.document_prefix,
  });
}

/** the text as the model expects it for that purpose */
export function prefixed(profile: ModelProfile, texts: readonly string[], purpose: EmbedPurpose): readonly string[] {
  const prefix = purpose === 'query' ? profile.query_prefix : profile.document_prefix;
  return prefix === '' ? texts : texts.map((t) => prefix + t);
}

/**
 * What an embedder's id carries of the profile, so that vectors read two ways are never compared: ''
 * for the plain reading (the ids of vectors stored before profiles existed stay valid), else
 * `+p` and a digest of the fields that shape the vector (pooling only where this process pools).
 */
export function profileTag(profile: ModelProfile, pools: boolean): string {
  const shaping = { ...profile, pooling: pools ? profile.pooling : 'mean' };
  if (JSON.stringify(shaping) === JSON.stringify(PLAIN_PROFILE)) return '';
  return `+p${createHash('sha256').update(JSON.stringify(shaping)).digest('hex').slice(0, 8)}`;
}
