import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { entry } from '../../../contract/long-term.contract.js';
import { countTurns } from '../../../helpers/loop-turns.js';
import { tmpDir } from '../../../helpers/tmp.js';

const MINUTE = 60_000;

/**
 * A substring search (GET /memory/search, the MCP tool, `memory search`) tests the user's entries with
 * LIKE, which reads every row it tests: for a substring no entry holds, all of them. One statement over
 * a user of 100k real turns held the event loop 58–143 ms. It now tests a page at a time, newest first,
 * giving the event loop turns between (with `stepMs: 0`, after every page, so the turns counted do not
 * depend on the machine's speed), and finds what one statement found: the newest `limit` matches,
 * wherever the pages' bounds fall — through times several entries share.
 */
describe('SQLite long-term store: a substring search in pages', () => {
  it('gives the event loop turns while it tests a big user, and returns the newest matches in order', async () => {
    const db = openDatabase(join(tmpDir(), 'substring.db'));
    const store = new SqliteLongTermStore(db, undefined, { stepMs: 0, substringPage: 100 });
    const start = Date.UTC(2025, 0, 1);
    // 1,000 entries of ann, three at each minute (so pages end inside a minute's entries); every 37th
    // holds the word, in two sessions; bob holds it too
    const ann: MemoryEntry[] = Array.from({ length: 1000 }, (_, i) => {
      const at = new Date(start + Math.floor(i / 3) * MINUTE).toISOString();
      return entry('ann', i % 37 === 0 ? `note ${i}: the Harbour cafe opens at nine` : `note ${i}: nothing about it`, { session_id: i % 2 ? 's-odd' : 's-even', created_at: at, updated_at: at });
    });
    await store.upsert([...ann, entry('bob', 'bob likes the harbour cafe too')]);
    // newest first; within a minute, the one written last first
    const newest = (xs: MemoryEntry[]) => xs.map((e, i) => ({ e, i })).sort((a, b) => b.e.created_at.localeCompare(a.e.created_at) || b.i - a.i).map(({ e }) => e.id);
    const holding = ann.filter((e) => e.content.includes('Harbour'));

    const counter = countTurns();
    assert.deepEqual(await store.searchSubstring('ann', 'zz-nowhere', { limit: 10 }), []);
    const turns = counter.stop();
    assert.ok(turns >= 9, `the event loop turned ${turns} times while 10 pages of 100 entries were tested`);

    assert.deepEqual((await store.searchSubstring('ann', 'harbour', { limit: 5 })).map((e) => e.id), newest(holding).slice(0, 5));
    assert.deepEqual((await store.searchSubstring('ann', 'harbour', { limit: 100 })).map((e) => e.id), newest(holding));
    const odd = holding.filter((e) => e.session_id === 's-odd');
    assert.deepEqual((await store.searchSubstring('ann', 'harbour', { limit: 100, sessionId: 's-odd' })).map((e) => e.id), newest(odd));
    // every entry, across every page boundary: each once
    const every = await store.searchSubstring('ann', 'note', { limit: 1000 });
    assert.deepEqual(every.map((e) => e.id), newest(ann));
  });
});
