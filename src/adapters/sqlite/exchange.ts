import type { MemoryEntry } from '../../domain/entry.js';
import type { ExchangeStore, ExportedTurn, RestoredTurn } from '../../ports/exchange.js';
import type { Db } from './db.js';
import type { SqliteLongTermStore } from './long-term.js';
import { ENTRY_COLUMNS, rowToEntry, type EntryRow } from './rows/entries.js';
import { rowToTurn, TURN_COLUMNS, type TurnRow } from './rows/turns.js';
import type { SqliteTurnLog } from './turn-log.js';

const PAGE = 1000;

/**
 * Export and import on the shared SQLite file: pages by rowid (insertion order), and a restore that
 * writes the turn log and the long-term store in one IMMEDIATE transaction through their own
 * synchronous forms, so it has the same duplicate and conflict rules as an append.
 */
export class SqliteExchangeStore implements ExchangeStore {
  private readonly s;

  constructor(
    private readonly db: Db,
    private readonly turnLog: SqliteTurnLog,
    private readonly longTerm: SqliteLongTermStore,
  ) {
    this.s = {
      countTurns: db.prepare('SELECT count(*) AS n FROM turns WHERE user_id = ?'),
      countEntries: db.prepare('SELECT count(*) AS n FROM entries WHERE user_id = ?'),
      turns: db.prepare(`SELECT ${TURN_COLUMNS}, embedded_with, persisted_at, rowid FROM turns WHERE user_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`),
      entries: db.prepare(`SELECT ${ENTRY_COLUMNS}, rowid FROM entries WHERE user_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`),
    };
  }

  async counts(userId: string): Promise<{ turns: number; entries: number }> {
    return { turns: (this.s.countTurns.get(userId) as { n: number }).n, entries: (this.s.countEntries.get(userId) as { n: number }).n };
  }

  async *turns(userId: string, batch = PAGE): AsyncGenerator<ExportedTurn[]> {
    for (let after = 0; ; ) {
      const rows = this.s.turns.all(userId, after, batch) as Array<TurnRow & { embedded_with: string | null; persisted_at: number | null; rowid: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.rowid;
      yield rows.map((r) => ({ turn: rowToTurn(r), persisted: r.persisted_at !== null, embedded_with: r.embedded_with }));
    }
  }

  async *entries(userId: string, batch = PAGE): AsyncGenerator<MemoryEntry[]> {
    for (let after = 0; ; ) {
      const rows = this.s.entries.all(userId, after, batch) as Array<EntryRow & { rowid: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.rowid;
      yield rows.map(rowToEntry);
    }
  }

  async restore(turns: readonly RestoredTurn[], entries: readonly MemoryEntry[], acceptedAt: number): Promise<{ turns: string[]; entries: string[] }> {
    return this.db
      .transaction(() => {
        const { accepted } = this.turnLog.appendSync(turns.map((t) => t.turn), acceptedAt);
        const fresh = new Set(accepted.map((t) => t.id));
        for (const t of turns) {
          if (!fresh.has(t.turn.id)) continue;
          if (t.persistedImportance !== null) this.turnLog.markPersistedSync(t.turn.user_id, t.turn.id, t.persistedImportance);
          if (t.embeddedWith !== null) this.turnLog.markEmbeddedSync(t.turn.user_id, [t.turn.id], t.embeddedWith);
        }
        return { turns: [...fresh], entries: this.longTerm.upsertSync(entries) };
      })
      .immediate();
  }
}
