import { FifoMap } from '../../fifo-map.js';
import type { FullRow } from './store.js';

/**
 * What a row kept here counts against its bound beyond its text and name: its float32 vector's bytes
 * are added, and this for its ids, times and the objects holding them.
 */
const ROW_OVERHEAD = 200;

/**
 * ~64 MB per embedder loaded. A RealMem dev user's 1,400 rows with their vectors are ~3 MB; what 200
 * searches of each filter kind keep finding over 100k real turns of 113 users is ~43 MB, of which
 * 16 MB kept 8% (docs/bench-report.md, round 42).
 */
export const CANDIDATE_ROW_BYTES = 64_000_000;

/**
 * The rows (payload and float32 vector) of an index's recent candidates, by rowid. A search's exact
 * rerank reads its ~44 candidates' rows from the store, and a user's searches keep finding much the
 * same rows (88% of them on RealMem and LoCoMo dev, every query asked once): that read was a tenth of
 * a real-text retrieve's CPU (the vector's blob copied and converted, a long reply's text decoded),
 * and each row read afresh held a text string never seen before, which ranking's text cache
 * (retrieval/text-cache.ts) then hashed and compared character by character to find again.
 *
 * Kept while the index holds no change to any row it knows: every removal from the index (an edit, a
 * delete, another process's change replayed, a reload) drops everything kept, as rowids may then be
 * freed and reused. A row's put alone cannot change a kept row: a new row is a new rowid, and a
 * replaced row is removed first. A read that started before a removal keeps nothing it read. A delete
 * that reaches no process's log (an erasure sweeps the erased user's changes) shows as a gap in the
 * log's seqs, and the index is read again (EmbeddedVectorIndex's catch-up), which drops these too.
 */
export class CandidateRows {
  private readonly rows = new FifoMap<number, FullRow>();
  private bytes = 0;
  /** moves at every drop: a read that began under another generation keeps nothing */
  private generation = 0;

  constructor(private readonly maxBytes = CANDIDATE_ROW_BYTES) {}

  /** The rows of these rowids: those kept, and the rest by `read` (a rowid it does not return is gone). */
  async of(rowids: readonly number[], read: (rowids: readonly number[]) => Promise<ReadonlyMap<number, FullRow>>): Promise<Map<number, FullRow>> {
    const out = new Map<number, FullRow>();
    const missing: number[] = [];
    for (const rowid of rowids) {
      const row = this.rows.get(rowid);
      if (row) out.set(rowid, row);
      else missing.push(rowid);
    }
    if (missing.length === 0) return out;
    const began = this.generation;
    const fresh = await read(missing);
    for (const [rowid, row] of fresh) {
      out.set(rowid, row);
      if (this.generation === began) this.keep(rowid, row);
    }
    return out;
  }

  /** Drops every row kept (see the class). */
  drop(): void {
    this.generation++;
    this.rows.clear();
    this.bytes = 0;
  }

  /** rows kept, and their bytes as counted against the bound */
  stats(): { rows: number; bytes: number } {
    return { rows: this.rows.size, bytes: this.bytes };
  }

  /** kept, the oldest kept going first while the bound is passed */
  private keep(rowid: number, row: FullRow): void {
    const size = sizeOf(row);
    if (size > this.maxBytes || this.rows.has(rowid)) return;
    while (this.bytes + size > this.maxBytes && this.rows.size > 0) this.bytes -= sizeOf(this.rows.shift()![1]);
    this.rows.set(rowid, row);
    this.bytes += size;
  }
}

function sizeOf(row: FullRow): number {
  return row.payload.content.length + (row.payload.name?.length ?? 0) + row.vector.byteLength + ROW_OVERHEAD;
}
