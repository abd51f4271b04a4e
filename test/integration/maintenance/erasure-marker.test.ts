import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import type { Memory } from '../../../src/memory/memory.js';
import { createDatabase } from '../../helpers/postgres.js';
import { keysHolding } from '../../helpers/redis-scan.js';
import { startRedis } from '../../helpers/redis.js';
import { capturingLogger, testMemory } from '../../helpers/services.js';
import { until } from '../../helpers/until.js';
import { fileBytes } from './helpers.js';

/** Every live row of every table of the database's public schema, each cast to text. */
async function postgresRows(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const tables = await c.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
    assert.ok(tables.rows.length > 0, 'the schema has tables');
    const out: string[] = [];
    for (const { table_name } of tables.rows) {
      const rows = await c.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
      out.push(...rows.rows.map((r) => `${table_name}: ${r.row}`));
    }
    return out.join('\n');
  } finally {
    await c.end();
  }
}

const MARKERS = { deleted: 'qvzdeletedmarker', pruned: 'qvzprunedmarker', edited: 'qvzeditedmarker', forgotten: 'qvzforgottenmarker' } as const;
const KEPT = 'qvzkeptmarker';

/**
 * Issue 26, acceptance: after delete, prune, edit (the old text) and forget, each marker is in no
 * Redis key (every key read whole by its type), no byte of the SQLite file or its WAL, no live
 * PostgreSQL row and no log line, debug level included. Names, metadata and session ids carry the
 * marker too. Dead tuples and free pages are left to VACUUM (docs/erasure.md).
 */
for (const shape of ['sqlite', 'postgres'] as const) {
  describe(`erased text is nowhere: ${shape} + Redis`, () => {
    // the marker in the name and metadata too, except for the edited turn (an edit replaces the text only)
    const turn = (user: string, id: string, session: string, marker: string) => ({
      id,
      user_id: user,
      session_id: session,
      role: 'user',
      name: marker === MARKERS.edited ? 'Ed' : `${marker}name`,
      content: `the code ${marker} opens the shed`,
      importance: 0.9,
      metadata: { note: marker === MARKERS.edited ? 'kept' : `${marker}meta` },
    });

    // every job run (their vectors written too), or the embed jobs left waiting (no embed worker)
    for (const workers of ['all', 'persist only'] as const) {
      it(`finds each marker before, none after delete, prune, edit and forget (workers: ${workers})`, { timeout: 120_000 }, async () => {
        // set up in the test itself: the temporary folder and database go when it ends
        const redis = await startRedis();
        const db = shape === 'postgres' ? await createDatabase() : null;
        let memory: Memory | null = null;
        try {
          const captured = capturingLogger('debug');
          const made = await testMemory(
            { redis_url: redis.url, redis_prefix: `marker-${shape}`, log_level: 'debug', reconcile_interval_s: 3600, ...(db ? { database_url: db.url } : {}) },
            { runWorkers: true, logger: captured.logger, ...(workers === 'all' ? {} : { workerQueues: ['persist'] as const }) },
          );
          memory = made.memory;
          const path = made.services.config.sqlite_path;
          const store = db ? () => postgresRows(db.url) : async () => fileBytes(path);

          await memory.addTurns([
            turn('u', 'd1', 's', MARKERS.deleted),
            turn('u', 'p1', 'old', MARKERS.pruned),
            turn('u', 'e1', 's', MARKERS.edited),
            turn('u', 'k1', 's', KEPT),
            turn('f', 'f1', `${MARKERS.forgotten}session`, MARKERS.forgotten),
          ]);
          const settled = async () => {
            if (workers === 'all') return memory!.idle();
            await until('every turn to be persisted', async () => (await made.services.turnLog.counts()).pending_persist === 0, 20_000, 50);
          };
          await settled();
          // each text is retrieved (and so passes through the service's debug logging) before it goes
          for (const [user, m] of [['u', MARKERS.deleted], ['u', MARKERS.pruned], ['u', MARKERS.edited], ['f', MARKERS.forgotten]] as const) {
            const r = await memory.retrieve({ query: `code ${m}`, user_id: user });
            assert.ok(r.results.some((x) => x.content.includes(m)), `${m} is retrieved before`);
          }
          const stored = await store();
          for (const m of Object.values(MARKERS)) {
            assert.ok(stored.includes(m), `${m} is stored before`);
            assert.ok((await keysHolding(redis.url, m)).length > 0, `${m} is in Redis before (the short-term tier)`);
          }

          await memory.delete('u', 'd1');
          await memory.prune({ userId: 'u', sessionId: 'old' });
          await memory.edit('u', 'e1', { content: 'the code was changed' });
          await memory.forget('f');
          await settled();

          const after = await store();
          const log = captured.text();
          for (const [what, m] of Object.entries(MARKERS)) {
            assert.deepEqual(await keysHolding(redis.url, m), [], `the ${what} marker is in no Redis key`);
            assert.ok(!after.includes(m), `the ${what} marker is in no ${db ? 'live row' : 'byte of the file or its WAL'}:\n${after.split('\n').filter((l) => l.includes(m)).slice(0, 3).join('\n')}`);
            assert.ok(!log.includes(m), `the ${what} marker is in no log line:\n${log.split('\n').filter((l) => l.includes(m)).slice(0, 3).join('\n')}`);
          }
          assert.ok(after.includes(KEPT), 'what was not erased is still stored');
          assert.ok(after.includes('the code was changed'), "the edit's new text is stored");
          assert.ok((await keysHolding(redis.url, KEPT)).length > 0, 'the kept turn is still in the short-term tier');
        } finally {
          await memory?.close();
          await redis.stop(true);
          await db?.drop();
        }
      });
    }
  });
}
