import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentHash } from '../../../src/domain/hash.js';
import type { Turn } from '../../../src/domain/turn.js';
import { freshPostgresStores } from '../../helpers/postgres.js';

const open = freshPostgresStores();
const SECRET = 'zanzibarquux';

function turn(id: string, content: string, user = 'ann'): Turn {
  return { id, user_id: user, session_id: 's', role: 'user', name: null, content, content_hash: contentHash(content), created_at: '2026-01-01T00:00:00.000Z', importance: 0.5, pinned: false, metadata: null };
}

describe('erasure on PostgreSQL: what is left of the text (pageinspect, as the DBA would look)', () => {
  it('after forget\'s scrub no version of an erased row is left in a table; after vacuum no byte of it is in a table or index file', async () => {
    const store = await open();
    const { pg } = store;
    await pg.query('CREATE EXTENSION IF NOT EXISTS pageinspect');
    const filler = Array.from({ length: 200 }, (_, i) => turn(`f${i}`, `filler line number ${i} about the weather`, 'bob'));
    const secret = [turn('s1', `my locker code is ${SECRET} and my name is Ann`), turn('s2', `${SECRET} again, and a long tail `.repeat(200))];
    await store.turnLog.append([...filler, ...secret]);
    await store.longTerm.upsert(secret.map((t) => ({ ...t, kind: 'turn' as const, importance: 0.5, covers: null, updated_at: t.created_at })));
    await store.vectorRows.upsert([{ tag: { id: 'e', dim: 2 }, points: secret.map((t) => ({ id: t.id, vector: Float32Array.from([1, 0]), payload: { ...t, kind: 'turn' } })) }], 1000);

    /** relations (tables, their TOAST tables and indexes) whose pages hold the bytes; `live`: only in tuples a page still points to */
    const holding = async (live: boolean): Promise<string[]> => {
      const rels = await pg.query<{ rel: string; blocks: number; kind: string }>(
        `SELECT c.oid::regclass::text AS rel, (pg_relation_size(c.oid) / current_setting('block_size')::int) AS blocks, c.relkind::text AS kind FROM pg_class c
         WHERE c.oid IN (SELECT oid FROM pg_class WHERE relname IN ('turns', 'entries', 'vectors')
                         UNION SELECT reltoastrelid FROM pg_class WHERE relname IN ('turns', 'entries', 'vectors') AND reltoastrelid <> 0
                         UNION SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM pg_class WHERE relname IN ('turns', 'entries', 'vectors')))`,
      );
      const out: string[] = [];
      for (const r of rels) {
        for (let b = 0; b < r.blocks; b++) {
          const [hit] = live && (r.kind === 'r' || r.kind === 't')
            ? await pg.query<{ n: number }>(
                `SELECT count(*) AS n FROM heap_page_items(get_raw_page($1, $2)) WHERE lp_flags = 1 AND position(convert_to($3, 'UTF8') IN t_data) > 0`,
                [r.rel, b, SECRET],
              )
            : live
              ? [{ n: 0 }] // an index entry points at a tuple: the heap check covers what can be read
              : await pg.query<{ n: number }>(`SELECT (position(convert_to($3, 'UTF8') IN get_raw_page($1, $2)) > 0)::int AS n`, [r.rel, b, SECRET]);
          if (hit!.n > 0) {
            out.push(r.rel);
            break;
          }
        }
      }
      return out.sort();
    };

    assert.ok((await holding(true)).includes('turns'), 'the text is there before (the check can fail)');
    await store.erasure.eraseRows({ kind: 'user', userId: 'ann' });
    // the vector index erases its own rows through its port (forget does both)
    await store.vectorRows.deleteWhere({ user_id: 'ann' }, 1000);
    assert.ok((await holding(true)).length > 0, 'a DELETE alone leaves the old versions in the pages');
    const scrubbed = await store.erasure.scrub();
    assert.deepEqual(scrubbed, { complete: true });
    assert.deepEqual(await holding(true), [], 'no version of an erased row is left after the scrub');
    await store.erasure.vacuum();
    assert.deepEqual(await holding(false), [], 'no byte of it in any table, TOAST or index file after vacuum');
    assert.equal((await store.turnLog.counts()).total, 200, "the other user's turns are all there");
  });

  it('a transaction older than the erasure keeps the old versions: the scrub says it is incomplete', async () => {
    const store = await open();
    await store.turnLog.append([turn('s1', `code ${SECRET}`)]);
    const reader = await store.pg.pool.connect();
    try {
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await reader.query('SELECT count(*) FROM turns');
      await store.erasure.eraseRows({ kind: 'user', userId: 'ann' });
      assert.deepEqual(await store.erasure.scrub(), { complete: false });
      await reader.query('COMMIT');
      assert.deepEqual(await store.erasure.scrub(), { complete: true });
    } finally {
      reader.release();
    }
  });
});
