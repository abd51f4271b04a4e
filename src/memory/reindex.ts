import { byUser } from '../domain/refs.js';
import type { MemoryEntry } from '../domain/entry.js';
import { vectorPayloadOf } from '../domain/record.js';
import type { Turn } from '../domain/turn.js';
import type { Embedder } from '../ports/embedder.js';
import type { Logger } from '../logger.js';
import type { TurnLog } from '../ports/turn-log.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { VectorIndex, VectorPayload, VectorPoint } from '../ports/vector-index.js';
import { entryPoints, textsToEmbed } from '../embedding/passages.js';

export interface ReindexDeps {
  turnLog: Pick<TurnLog, 'scan' | 'counts' | 'get' | 'markEmbedded'>;
  /** long-term entries: summaries and archives have no turn-log row, so they are read from here */
  longTerm: Pick<LongTermStore, 'scan' | 'count' | 'get'>;
  vectors: VectorIndex;
  /** the embedder to index for: the configured one */
  embedder: Embedder;
  log: Logger;
}

export interface ReindexOptions {
  /** texts per model call and per vector write (default 64) */
  batchSize?: number;
  /** re-embed even what already holds a vector of this embedder (a model file replaced in place) */
  force?: boolean;
  /** afterwards, delete every vector of another embedder */
  pruneOld?: boolean;
  /** after each batch: memories gone through so far, and how many there are */
  onProgress?: (done: number, total: number) => void;
}

export interface ReindexReport {
  embedder: string;
  dim: number;
  /** turns and long-term entries gone through (entries that are logged turns count once, as turns) */
  total: number;
  /** embedded by this run */
  embedded: number;
  /** already held a vector of this embedder (an earlier, interrupted run, or the embed workers) */
  kept: number;
  /** vectors of other embedders deleted (--prune-old), else null */
  pruned: number | null;
  ms: number;
}

interface Item {
  id: string;
  payload: VectorPayload;
}

/**
 * Re-embeds every memory for one embedder (docs/architecture.md, embeddings): every turn of the turn log, then every long-term
 * entry that is not a logged turn (summaries, archives, imported entries), in batches of one model
 * call and one vector write each.
 *
 * Resumable: what already holds a vector of this embedder is kept, so a run that was killed resumes
 * where it stopped; each finished turn is also recorded in the turn log (`embedded_with`). The service
 * keeps answering meanwhile — the vectors of its own embedder are untouched (unless `pruneOld`), and a
 * turn deleted or edited while its batch was in flight is removed or re-embedded after the write, so
 * no vector outlives its memory.
 */
export async function reindex(deps: ReindexDeps, options: ReindexOptions = {}): Promise<ReindexReport> {
  const { turnLog, longTerm, vectors, embedder, log } = deps;
  const batchSize = options.batchSize ?? 64;
  const started = performance.now();
  const total = (await turnLog.counts()).total + (await longTerm.count());
  let done = 0;
  let memories = 0;
  let embedded = 0;
  let kept = 0;

  /** embeds and writes the items (all of one user) that lack a vector; returns the ids written */
  const indexBatch = async (userId: string, items: Item[], current: (id: string) => Promise<VectorPayload | null>): Promise<string[]> => {
    const present = options.force ? new Set<string>() : await vectors.has(embedder, userId, items.map((i) => i.id));
    kept += present.size;
    let todo = items.filter((i) => !present.has(i.id));
    const written: string[] = [];
    // a memory edited while its batch was being embedded is embedded again with its new text (twice at most)
    for (let round = 0; todo.length > 0 && round < 3; round++) {
      // each memory's whole text and, of a long one, its passages (src/embedding/passages.ts)
      const texts = todo.map((i) => textsToEmbed(i.payload.content));
      const wanted = texts.reduce((n, t) => n + t.length, 0);
      const vecs = await embedder.embed(texts.flat());
      if (vecs.length !== wanted) throw new Error(`embedder ${embedder.id} returned ${vecs.length} vectors for ${wanted} texts`);
      let at = 0;
      const points = todo.flatMap((item, k): VectorPoint[] => entryPoints(item.id, item.payload, vecs.slice(at, (at += texts[k]!.length))));
      await vectors.upsert(embedder, points);
      const gone: string[] = [];
      const changed: Item[] = [];
      for (const item of todo) {
        const now = await current(item.id);
        if (!now) gone.push(item.id);
        else if (now.content_hash !== item.payload.content_hash) changed.push({ id: item.id, payload: now });
        else written.push(item.id);
      }
      // deleted since we read it: the delete may have run before our write, so remove what we wrote
      if (gone.length > 0) await vectors.delete(userId, gone);
      todo = changed;
    }
    embedded += written.length;
    return [...present, ...written];
  };

  for await (const page of turnLog.scan(batchSize)) {
    for (const [userId, turns] of byUser(page)) {
      const finished = await indexBatch(userId, turns.map(turnItem), async (id) => {
        const t = await turnLog.get(userId, id);
        return t ? turnItem(t).payload : null;
      });
      await turnLog.markEmbedded(userId, finished, embedder.id);
    }
    memories += page.length;
    done += page.length;
    options.onProgress?.(done, total);
  }

  for await (const page of longTerm.scan(batchSize)) {
    // an entry that is a logged turn was indexed with the turns
    const own: typeof page = [];
    for (const e of page) if ((await turnLog.get(e.user_id, e.id)) === null) own.push(e);
    memories += own.length;
    for (const [userId, entries] of byUser(own)) {
      await indexBatch(userId, entries.map(entryItem), async (id) => {
        const e = await longTerm.get(userId, id);
        return e ? entryItem(e).payload : null;
      });
    }
    done += page.length;
    options.onProgress?.(done, total);
  }

  let pruned: number | null = null;
  if (options.pruneOld) {
    pruned = await vectors.deleteOtherEmbedders(embedder);
    log.info({ embedder: embedder.id, pruned }, 'deleted the vectors of other embedders');
  }
  const report: ReindexReport = { embedder: embedder.id, dim: embedder.dim, total: memories, embedded, kept, pruned, ms: Math.round(performance.now() - started) };
  log.info(report, 'reindex finished');
  return report;
}

function turnItem(t: Turn): Item {
  return { id: t.id, payload: vectorPayloadOf(t, 'turn') };
}

function entryItem(e: MemoryEntry): Item {
  return { id: e.id, payload: vectorPayloadOf(e, e.kind) };
}
