import type { MemoryEntry } from '../../domain/entry.js';
import type { ExchangeStore, ExportedTurn, RestoredTurn } from '../../ports/exchange.js';
import { upsertIn } from './long-term.js';
import type { Postgres } from './pool.js';
import { entrySelect, rowToEntry, rowToTurn, scanBySeq, turnSelect } from './rows.js';
import { appendIn } from './turn-log.js';

const PAGE = 1000;

/**
 * Export and import on PostgreSQL: pages by seq (acceptance order), and a restore that runs the turn
 * log's append and the long-term store's upsert in one transaction, so it has the same duplicate and
 * conflict rules as an append and is all or nothing.
 */
export class PostgresExchangeStore implements ExchangeStore {
  constructor(private readonly pg: Postgres) {}

  async counts(userId: string): Promise<{ turns: number; entries: number }> {
    const [r] = await this.pg.query<{ turns: number; entries: number }>(
      'SELECT (SELECT count(*) FROM turns WHERE user_id = $1) AS turns, (SELECT count(*) FROM entries WHERE user_id = $1) AS entries',
      [userId],
    );
    return r!;
  }

  turns(userId: string, batch = PAGE): AsyncGenerator<ExportedTurn[]> {
    return scanBySeq(
      this.pg,
      'turns',
      `${turnSelect()}, embedded_with, persisted_at`,
      (r) => ({ turn: rowToTurn(r), persisted: r.persisted_at !== null, embedded_with: (r.embedded_with as string | null) ?? null }),
      batch,
      userId,
    );
  }

  entries(userId: string, batch = PAGE): AsyncGenerator<MemoryEntry[]> {
    return scanBySeq(this.pg, 'entries', entrySelect(), rowToEntry, batch, userId);
  }

  async restore(turns: readonly RestoredTurn[], entries: readonly MemoryEntry[], acceptedAt: number): Promise<{ turns: string[]; entries: string[] }> {
    return this.pg.tx(async (tx) => {
      const { accepted } = await appendIn(
        tx,
        turns.map((t) => t.turn),
        acceptedAt,
      );
      const fresh = new Set(accepted.map((t) => `${t.user_id}\u0000${t.id}`));
      const kept = turns.filter((t) => fresh.has(`${t.turn.user_id}\u0000${t.turn.id}`));
      const persisted = kept.filter((t) => t.persistedImportance !== null);
      if (persisted.length > 0) {
        await tx.run(
          `UPDATE turns t SET persisted_at = $4, importance = coalesce(t.importance, u.importance)
           FROM unnest($1::text[], $2::text[], $3::float8[]) AS u(user_id, id, importance) WHERE t.user_id = u.user_id AND t.id = u.id`,
          [persisted.map((t) => t.turn.user_id), persisted.map((t) => t.turn.id), persisted.map((t) => t.persistedImportance), Date.now()],
        );
      }
      const embedded = kept.filter((t) => t.embeddedWith !== null);
      if (embedded.length > 0) {
        await tx.run(
          `UPDATE turns t SET embedded_with = u.embedder FROM unnest($1::text[], $2::text[], $3::text[]) AS u(user_id, id, embedder)
           WHERE t.user_id = u.user_id AND t.id = u.id`,
          [embedded.map((t) => t.turn.user_id), embedded.map((t) => t.turn.id), embedded.map((t) => t.embeddedWith)],
        );
      }
      return { turns: accepted.map((t) => t.id), entries: await upsertIn(tx, entries) };
    });
  }
}
