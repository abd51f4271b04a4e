import type { TextIndexMerge } from '../../ports/long-term.js';
import { siblingThread } from '../thread.js';
import type { Db } from './db.js';

export type MergeReply = { ok: true; merge: TextIndexMerge } | { ok: false; message: string };

/** the text index's segments (FTS5 b-trees), each of which has rows in its `_idx` table */
const segmentsOf = (db: Db) => db.prepare('SELECT count(DISTINCT segid) FROM entries_fts_idx').pluck().get() as number;

/**
 * Merges the text index's segments into one (FTS5 'optimize') in one write transaction. A search
 * reads each word from every segment; the segments a store is left with by FTS5's own merging (a few
 * per level, up to ~20 under single-turn commits) cost a retrieval on real text 6–27% of its CPU.
 * Whole and at once, not FTS5's incremental merge ('merge' with a negative page count): with a turn
 * written between its steps, that merge started over and over, and 3,000 steps (50 s) left 37–111
 * segments of 13 (docs/bench-report.md, round 20).
 */
export function mergeTextIndexSync(db: Db): TextIndexMerge {
  const t0 = performance.now();
  const [before, after] = db
    .transaction(() => {
      const n = segmentsOf(db);
      if (n <= 1) return [n, n];
      db.prepare("INSERT INTO entries_fts (entries_fts) VALUES ('optimize')").run();
      return [n, segmentsOf(db)];
    })
    .immediate();
  return { parts_before: before!, parts_after: after!, ms: performance.now() - t0 };
}

/**
 * mergeTextIndexSync on a thread of its own with its own connection to the file at `path`: an index of
 * 100k long turns takes ~0.5 s to merge, which the caller's event loop must not wait out.
 */
export function mergeTextIndexOnThread(path: string): Promise<TextIndexMerge> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const worker = siblingThread(import.meta.url, 'text-index-merge-worker', { workerData: { path } });
    worker.once('message', (m: MergeReply) => {
      answered = true;
      if (m.ok) resolve(m.merge);
      else reject(new Error(`merging the text index of ${path}: ${m.message}`));
    });
    worker.once('error', (err) => {
      answered = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`merging the text index of ${path}: its thread exited (code ${code}) without an answer`));
    });
  });
}
