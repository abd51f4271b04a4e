import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { matchesFilter, type RecordFilter } from '../../../../src/domain/filters.js';
import { PostgresLongTermStore } from '../../../../src/adapters/postgres/long-term.js';
import type { Postgres } from '../../../../src/adapters/postgres/pool.js';
import { FILTER_RECORDS, PLAN_FILTER_CASES } from '../../../contract/filter-cases.js';
import { readsOf, type Reads } from '../../../helpers/pg-plan.js';
import { sharedPostgres } from '../../../helpers/postgres.js';

const database = sharedPostgres();

/**
 * About 70 words of a 1,500-word vocabulary, the same for the same `seed`: turns of the length of real
 * ones, so the table is as large against its indexes as a real one (on short rows a planner rightly
 * reads every row of the user: a few pages).
 */
function prose(seed: number): string {
  let x = seed * 2654435761 + 1;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8;
  const syllables = ['ka', 'lo', 'mi', 'ten', 'ra', 'su', 'vel', 'dor', 'pi', 'an', 'gre', 'ost'];
  const word = (n: number) => syllables[n % 12]! + syllables[Math.floor(n / 12) % 12]! + syllables[Math.floor(n / 144) % 12]!;
  return Array.from({ length: 60 + (next() % 20) }, () => word(next() % 1500)).join(' ');
}

/** Runs the store's search and EXPLAINs (with ANALYZE) the text-search statement it sent, with its values. */
async function searchReads(pg: Postgres, store: PostgresLongTermStore, user: string, where: RecordFilter | undefined): Promise<{ hits: number; reads: Reads }> {
  const sent: Array<{ sql: string; values: readonly unknown[] }> = [];
  const query = pg.query.bind(pg);
  pg.query = (async (sql: string, values?: readonly unknown[]) => {
    if (sql.includes('CROSS JOIN LATERAL')) sent.push({ sql, values: values ?? [] });
    return query(sql, values);
  }) as typeof pg.query;
  let hits: number;
  try {
    hits = (await store.searchText(user, 'narwhal', { limit: 5, where })).length;
  } finally {
    pg.query = query;
  }
  assert.equal(sent.length, 1, 'one text-search statement');
  return { hits, reads: await readsOf(pg, 'entries', sent[0]!.sql, sent[0]!.values) };
}

/**
 * A filtered text search reads about what the plain one reads: the query's matches. Driven by an
 * index of `entries` instead (user and time, user and kind, user and session), it reads every row of
 * the user in range and tests each against the tsquery: PostgreSQL chose that for created_after and
 * kinds on a table not yet analyzed (RealMem, 2,314 rows of a user: 11,570 rows read for 5 rare-word
 * queries that read 36 plain). Checked before and after ANALYZE (autovacuum off for the table, so
 * the first state stays what it is).
 */
describe('PostgreSQL long-term text search: a filter does not make the statement read more', () => {
  it('every filter kind reads about the rows and buffers of the plain search, before and after ANALYZE', async () => {
    const pg = await database();
    await pg.run('ALTER TABLE entries SET (autovacuum_enabled = false)');
    const store = new PostgresLongTermStore(pg);
    const entries: MemoryEntry[] = [];
    // two users of 3,000 rows; twelve of each hold the query's word, one of each of the filter records
    for (const user of ['big', 'other']) {
      for (let i = 0; i < 3000; i++) {
        const r = FILTER_RECORDS[i % FILTER_RECORDS.length]!;
        const content = `${i % 251 === 0 ? 'the narwhal ferry timetable' : 'the harbour'}, note ${i}: ${prose(i)}`;
        entries.push({
          id: `e${i}`, user_id: user, session_id: r.session_id, role: r.role, name: null, kind: r.kind, content, content_hash: contentHash(content),
          importance: 0.5, pinned: false, metadata: r.metadata, covers: null, created_at: r.created_at, updated_at: r.created_at,
        });
      }
    }
    for (let i = 0; i < entries.length; i += 1000) await store.upsert(entries.slice(i, i + 1000));

    for (const state of ['not analyzed', 'analyzed']) {
      if (state === 'analyzed') await pg.run('ANALYZE entries');
      const plain = await searchReads(pg, store, 'big', undefined);
      assert.equal(plain.hits, 5, `${state}: plain`);
      for (const c of PLAN_FILTER_CASES) {
        const { hits, reads } = await searchReads(pg, store, 'big', c.filter);
        const want = entries.filter((e) => e.user_id === 'big' && e.content.includes('narwhal') && matchesFilter(e, c.filter)).length;
        assert.equal(hits, Math.min(5, want), `${state}, ${c.name}: hits`);
        const seen = `${state}, ${c.name}: ${reads.rows} rows, ${reads.buffers} buffers (${reads.plan.join(', ')}); plain ${plain.reads.rows} rows, ${plain.reads.buffers} buffers (${plain.reads.plan.join(', ')})`;
        assert.ok(reads.rows <= 2 * plain.reads.rows + 10, seen);
        assert.ok(reads.buffers <= 2 * plain.reads.buffers + 10, seen);
      }
    }
  });
});
