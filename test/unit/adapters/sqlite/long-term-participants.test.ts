import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';

describe('long-term participants', () => {
  it('names who said the newest entries, as the names of `recent` would, without reading them', async () => {
    const db = openDatabase(':memory:');
    const store = new SqliteLongTermStore(db);
    const names = ['Melanie', null, 'Caroline', '', 'Melanie', 'Old Timer'];
    const entries: MemoryEntry[] = Array.from({ length: 60 }, (_, i) => {
      const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      const content = `entry ${i}`;
      // the oldest ten entries are the only ones said by "Old Timer"
      const name = i < 10 ? 'Old Timer' : names[i % 5]!;
      return { id: `e${i}`, user_id: i % 7 === 0 ? 'other' : 'u', session_id: 's', role: 'user', name, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
    });
    entries.push({ ...entries[20]!, id: 'x', user_id: 'other', name: 'Stranger' });
    store.upsertSync(entries);
    for (const limit of [5, 40, 200]) {
      const fromRecent = new Set((await store.recent('u', { limit })).flatMap((e) => (e.name ? [e.name] : [])));
      const got = await store.participants('u', limit);
      assert.equal(got.length, new Set(got).size, 'distinct');
      assert.deepEqual(new Set(got), fromRecent, `limit ${limit}`);
    }
    assert.deepEqual(new Set(await store.participants('u', 40)), new Set(['Melanie', 'Caroline']));
    assert.ok((await store.participants('u', 200)).includes('Old Timer'));
    assert.ok(!(await store.participants('u', 200)).includes('Stranger'), 'another user\'s speaker is not this user\'s');
    db.close();
  });

  it('follows the entries that name a speaker: none for a user whose entries name nobody, whatever another user holds', async () => {
    const db = openDatabase(':memory:');
    const store = new SqliteLongTermStore(db);
    const entry = (user: string, i: number, name: string | null): MemoryEntry => {
      const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      return { id: `e${i}`, user_id: user, session_id: 's', role: 'user', name, kind: 'turn', content: `entry ${i}`, content_hash: contentHash(`entry ${i}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
    };
    store.upsertSync([entry('u', 1, null), entry('u', 2, ''), entry('v', 3, 'Vera')]);
    assert.deepEqual(await store.participants('u', 200), []);
    assert.deepEqual(await store.participants('v', 200), ['Vera']);
    assert.deepEqual(await store.participants('nobody', 200), []);
    store.upsertSync([entry('u', 4, 'Ursula')]);
    assert.deepEqual(await store.participants('u', 200), ['Ursula']);
    await store.delete('u', ['e4']);
    assert.deepEqual(await store.participants('u', 200), []);
    await store.delete('v', ['e3']);
    assert.deepEqual(await store.participants('v', 200), []);
    db.close();
  });
});
