import type { EmbedJob } from '../queues/payloads.js';
import type { JobOutcome } from '../queues/queue.js';
import type { EmbedderProvider } from '../src/embedding/provider.js';
import type { Logger } from '../src/logger.js';
import type { LongTermStore } from '../src/ports/long-term.js';
import type { Tombstones } from '../src/ports/tombstones.js';
import type { TurnLog } from '../src/ports/turn-log.js';
import type { VectorIndex, VectorPayload } from '../src/ports/vector-index.js';
import { entryPoints, textsToEmbed } from '../src/embedding/passages.js';
import { room } from '../src/pace.js';

/**
 * What the embed processor needs. With the durable store (`turnLog`, `longTerm`) it checks the memory
 * there; without it (a worker on a host without the SQLite file, vectors in Qdrant) it checks the
 * tombstones of the shared Redis instead (docs/architecture.md, embed workers without the durable store).
 */
export interface EmbedDeps {
  log: Logger;
  embedders: Pick<EmbedderProvider, 'ready' | 'model'>;
  vectors: Pick<VectorIndex, 'upsert' | 'delete'>;
  turnLog?: Pick<TurnLog, 'getMany' | 'versions' | 'markEmbedded'>;
  longTerm?: Pick<LongTermStore, 'get'>;
  tombstones?: Pick<Tombstones, 'isBuried'> | null;
}

/** a memory edited again and again while it is embedded is followed this many times, then left to the reconciler */
const ROUNDS = 3;

export type EmbedResult = { embedder: string } | { skipped: string };

/**
 * Embeds one turn and upserts its vector, tagged with the embedder. Concurrent jobs share model calls
 * through the batching embedder. Idempotent: the upsert is keyed by (user, turn id).
 *
 * After its write the job reads the memory again: deleted meanwhile, it removes the vector it wrote
 * (the delete may have run before the write); edited meanwhile, it embeds the new text and writes
 * that instead — never deleting, since the edit's own job may already have written the new vector,
 * which a delete here would remove for good.
 */
export async function processEmbed(job: EmbedJob, deps: EmbedDeps): Promise<EmbedResult> {
  const [outcome] = await processEmbedBatch([job], deps);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value as EmbedResult;
}

/** One job of a batch on its way through processEmbedBatch's rounds. */
interface Active {
  i: number;
  job: EmbedJob;
  payload: VectorPayload;
}

/**
 * `processEmbed` of many jobs at once, each job's steps exactly those of one job alone: one read of
 * the memories before, the texts to the batching embedder together, one upsert of every vector (each
 * alone only when that fails, so a bad one fails alone), one read after, and the marks of the
 * unchanged ones issued together (the turn log commits them as one). A step failing for one job
 * (its text, its vector, its mark) fails that job only; a read failing fails the batch.
 */
export async function processEmbedBatch(jobs: readonly EmbedJob[], deps: EmbedDeps): Promise<JobOutcome[]> {
  const out: Array<JobOutcome | undefined> = jobs.map(() => undefined);
  const done = (i: number, value: EmbedResult) => (out[i] = { ok: true, value });
  const fail = (i: number, error: unknown) => (out[i] = { ok: false, error });
  const embedder = await deps.embedders.ready();
  // No model on this worker: the turn stays un-embedded in the turn log (the semantic tier is skipped,
  // docs/architecture.md, embeddings) rather than failing the job over and over; `memory reindex` embeds it once a model loads.
  if (!embedder) return jobs.map(() => ({ ok: true, value: { skipped: `embedding model "${deps.embedders.model}" is not loaded` } }));
  const before = await hashesOf(jobs, deps);
  let active: Active[] = [];
  jobs.forEach((job, i) => {
    const now = before[i]!;
    if (!now.ok) fail(i, now.error);
    else if (now.value !== job.content_hash) done(i, { skipped: 'deleted or edited since it was enqueued' });
    else active.push({ i, job, payload: payloadOf(job) });
  });
  // jobs whose text the embedder refused or could not embed: failed, unless their memory is gone
  const unembedded: Array<{ a: Active; error: unknown }> = [];
  for (let round = 0; round < ROUNDS && active.length > 0; round++) {
    // a long turn's passages too (src/embedding/passages.ts: at most 1 + MAX_PASSAGES texts a turn)
    // each job's passages cut in the process's slices of work (src/pace.ts): 30 turns of 32,000
    // characters took ~30 ms to cut in one go; then every text to the embedder at once (its batches)
    const texts: string[][] = [];
    for (const a of active) {
      await room();
      texts.push(textsToEmbed(a.payload.content));
    }
    const vectors = await Promise.all(
      active.map((a, k) => Promise.all(texts[k]!.map((t) => embedder.embedOne(t))).then((v) => v, (error: unknown) => (unembedded.push({ a, error }), null))),
    );
    const embedded = active.flatMap((a, k) => (vectors[k] ? [{ a, points: entryPoints(a.job.turn_id, a.payload, vectors[k]!) }] : []));
    const written = await deps.vectors.upsert(embedder, embedded.flatMap((e) => e.points)).then(
      () => embedded.map((e) => e.a),
      // each alone, so only the one that cannot be written fails
      () =>
        Promise.all(embedded.map((e) => deps.vectors.upsert(embedder, e.points).then(() => e.a, (error: unknown) => (fail(e.a.i, error), null)))).then((as) =>
          as.filter((a): a is Active => a !== null),
        ),
    );
    const next: Active[] = [];
    const marks: Active[] = [];
    const removals: Array<Promise<unknown>> = [];
    const remove = (a: Active) =>
      removals.push(deps.vectors.delete(a.job.user_id, [a.job.turn_id]).then(() => done(a.i, { skipped: 'deleted while it was embedded' }), (error: unknown) => fail(a.i, error)));
    const after = await hashesOf(written.map((a) => a.job), deps);
    const edited: Active[] = [];
    written.forEach((a, k) => {
      const now = after[k]!;
      if (!now.ok) fail(a.i, now.error);
      else if (now.value === null) remove(a);
      else (now.value === a.payload.content_hash ? marks : edited).push(a);
    });
    // an edited memory's new text, read whole only now: the next round embeds it
    const rewritten = edited.length > 0 ? await currentMany(edited.map((a) => a.job), deps) : [];
    edited.forEach((a, k) => {
      const now = rewritten[k]!;
      if (!now.ok) fail(a.i, now.error);
      else if (!now.value) remove(a);
      else if (now.value.content_hash === a.payload.content_hash) marks.push(a);
      else next.push({ ...a, payload: now.value });
    });
    const turnLog = deps.turnLog;
    await Promise.all([
      ...removals,
      ...marks.map((a) =>
        (turnLog ? turnLog.markEmbedded(a.job.user_id, [a.job.turn_id], embedder.id) : Promise.resolve()).then(
          () => done(a.i, { embedder: embedder.id }),
          (error: unknown) => fail(a.i, error),
        ),
      ),
    ]);
    active = next;
  }
  for (const a of active) done(a.i, { skipped: 'edited again while it was embedded; left to the edit\'s own job and the reconciler' });
  await settleUnembedded(unembedded, deps, done, fail);
  return out.map((o) => o ?? { ok: false, error: new Error('embed job left unsettled') });
}

/**
 * A job whose text could not be embedded (no vector written) fails, to be retried, unless its memory
 * was deleted or edited meanwhile: its retry would find that and do nothing, so it completes now.
 * A job failed for good keeps its payload, the text included, in the queue (Redis); one whose memory
 * a delete, prune or edit removed while it ran would otherwise outlive the erasure there.
 */
async function settleUnembedded(
  unembedded: ReadonlyArray<{ a: Active; error: unknown }>,
  deps: EmbedDeps,
  done: (i: number, value: EmbedResult) => void,
  fail: (i: number, error: unknown) => void,
): Promise<void> {
  if (unembedded.length === 0) return;
  const now = await currentMany(unembedded.map((u) => u.a.job), deps).catch(() => null);
  unembedded.forEach((u, k) => {
    const c = now?.[k];
    if (c?.ok && c.value?.content_hash !== u.a.job.content_hash) done(u.a.i, { skipped: 'deleted or edited while it was embedded' });
    else fail(u.a.i, u.error);
  });
}

function payloadOf(job: EmbedJob): VectorPayload {
  return { user_id: job.user_id, session_id: job.session_id, role: job.role, name: job.name, kind: job.kind, content: job.content, content_hash: job.content_hash, created_at: job.created_at, metadata: job.metadata };
}

type Current = { ok: true; value: VectorPayload | null } | { ok: false; error: unknown };
type Hash = { ok: true; value: string | null } | { ok: false; error: unknown };

/**
 * The text hash of each job's memory as it is now, or null when it is gone: what the checks before
 * and after the write need, the turns' texts not read (currentMany reads them whole; 4 of a turn's
 * reads in its jobs were a tenth of the ingest's CPU, docs/bench-report.md, round 28).
 */
async function hashesOf(jobs: readonly EmbedJob[], deps: EmbedDeps): Promise<Hash[]> {
  const turnAt = deps.turnLog ? jobs.flatMap((j, i) => (j.kind === 'turn' ? [i] : [])) : [];
  const versions = turnAt.length > 0 ? await deps.turnLog!.versions(turnAt.map((i) => ({ user_id: jobs[i]!.user_id, id: jobs[i]!.turn_id }))) : [];
  const fromLog = new Map(turnAt.map((i, k) => [i, versions[k]?.content_hash ?? null]));
  const others = jobs.flatMap((j, i) => (fromLog.has(i) ? [] : [j]));
  const current = others.length > 0 ? await currentMany(others, deps) : [];
  let k = 0;
  return jobs.map((_, i): Hash => {
    if (fromLog.has(i)) return { ok: true, value: fromLog.get(i)! };
    const c = current[k++]!;
    return c.ok ? { ok: true, value: c.value?.content_hash ?? null } : c;
  });
}

/**
 * The memory of each job as it is now (its vector payload), or null when it is gone: the turns in one
 * read of the turn log (a failure there fails the batch), summaries and tombstones one by one (a
 * failure fails that job).
 */
async function currentMany(jobs: readonly EmbedJob[], deps: EmbedDeps): Promise<Current[]> {
  const turnAt = deps.turnLog ? jobs.flatMap((j, i) => (j.kind === 'turn' ? [i] : [])) : [];
  const turns = turnAt.length > 0 ? await deps.turnLog!.getMany(turnAt.map((i) => ({ user_id: jobs[i]!.user_id, id: jobs[i]!.turn_id }))) : [];
  const fromLog = new Map(turnAt.map((i, k) => [i, turns[k] ?? null]));
  return Promise.all(
    jobs.map(async (job, i): Promise<Current> => {
      try {
        if (fromLog.has(i)) {
          const t = fromLog.get(i)!;
          return { ok: true, value: t ? { ...payloadOf(job), session_id: t.session_id, role: t.role, name: t.name, content: t.content, content_hash: t.content_hash, created_at: t.created_at } : null };
        }
        return { ok: true, value: await current(job, deps) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
}

/**
 * A summary's or archive's memory as it is now (its vector payload), or null when it is gone. A worker on a host without
 * the durable store asks the tombstones: the job's text buried means gone; else the job is current
 * (the file's host records the embed when it finds the vector, see the reconciler).
 */
async function current(job: EmbedJob, deps: EmbedDeps): Promise<VectorPayload | null> {
  const fromJob: VectorPayload = { user_id: job.user_id, session_id: job.session_id, role: job.role, name: job.name, kind: job.kind, content: job.content, content_hash: job.content_hash, created_at: job.created_at, metadata: job.metadata };
  const elsewhere = async () => ((await deps.tombstones?.isBuried(job.user_id, job.turn_id, job.content_hash)) ? null : fromJob);
  // a turn with the turn log at hand was read with the batch (currentMany)
  if (job.kind === 'turn') return elsewhere();
  if (!deps.longTerm) return elsewhere();
  const e = await deps.longTerm.get(job.user_id, job.turn_id);
  return e ? { ...fromJob, session_id: e.session_id, role: e.role, name: e.name, content: e.content, content_hash: e.content_hash, created_at: e.created_at, metadata: e.metadata } : null;
}
