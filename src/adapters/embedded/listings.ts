import type { PartitionShape } from './partition.js';

interface Listing {
  shape: PartitionShape;
  version: number;
  rowids: ReadonlySet<number>;
}

/**
 * The rows a retrieval filter allowed, listed for a filtered search of a big partition, kept per
 * (embedder, user, filter) while the user's partition is the one listed at the version it had when
 * the listing was read: every put and remove of the user's rows bumps it (this process's writes as
 * they are applied, other processes' as a search's catch-up re-reads them), so a listing is never
 * used after a write to the user's vectors, and a delete never comes back through one. Another
 * user's writes touch another partition. A listing is keyed by its user and only ever scans that
 * user's partition.
 *
 * Bounded: at most `maxRows` rowids held in all (least recently used dropped first), and `maxEntries`
 * listings.
 */
export class ListingCache {
  private readonly held = new Map<string, Listing>();
  private rows = 0;

  constructor(
    private readonly maxRows = 500_000,
    private readonly maxEntries = 64,
  ) {}

  /** the listing of (embedder, user, filter key) when it is still current for `shape` */
  get(embedder: string, userId: string, key: string, shape: PartitionShape): ReadonlySet<number> | undefined {
    const k = keyOf(embedder, userId, key);
    const held = this.held.get(k);
    if (!held) return undefined;
    this.drop(k, held);
    if (held.shape !== shape || held.version !== shape.version) return undefined;
    this.held.set(k, held); // most recently used last
    this.rows += held.rowids.size;
    return held.rowids;
  }

  /** keeps a listing read while `shape` was at `version` (taken before the read began) */
  set(embedder: string, userId: string, key: string, shape: PartitionShape, version: number, rowids: ReadonlySet<number>): void {
    if (rowids.size > this.maxRows) return;
    const k = keyOf(embedder, userId, key);
    const old = this.held.get(k);
    if (old) this.drop(k, old);
    this.held.set(k, { shape, version, rowids });
    this.rows += rowids.size;
    for (const [oldest, listing] of this.held) {
      if (this.rows <= this.maxRows && this.held.size <= this.maxEntries) break;
      this.drop(oldest, listing);
    }
  }

  clear(): void {
    this.held.clear();
    this.rows = 0;
  }

  /** listings held, and the rowids in them (tests) */
  stats(): { listings: number; rows: number } {
    return { listings: this.held.size, rows: this.rows };
  }

  private drop(k: string, listing: Listing): void {
    this.held.delete(k);
    this.rows -= listing.rowids.size;
  }
}

const keyOf = (embedder: string, userId: string, key: string): string => `${embedder}\u0000${userId}\u0000${key}`;
