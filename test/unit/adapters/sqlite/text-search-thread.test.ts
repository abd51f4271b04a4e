import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { MMAP_BYTES, openDatabase, openSearchConnection } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import type { TextSearchThread } from '../../../../src/adapters/sqlite/text-search-thread.js';
import { tmpDir } from '../../../helpers/tmp.js';

function entry(i: number, user: string, content: string): MemoryEntry {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: user, session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: { i }, covers: null, created_at: at, updated_at: at };
}

const threadOf = (store: SqliteLongTermStore) => (store as unknown as { thread: TextSearchThread | null }).thread!;

/** Searches until one is answered by the thread (it starts on the first search). */
async function threadUp(store: SqliteLongTermStore, user = 'u'): Promise<void> {
  const thread = threadOf(store);
  for (let i = 0; i < 500 && thread.answered === 0; i++) {
    await store.searchText(user, 'warmup', { limit: 1 });
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(thread.answered > 0, 'the thread answered a search');
}

describe('long-term text search on a worker thread', () => {
  it('answers what the caller\'s own connection answers, and sees every write committed before the call', async () => {
    const db = openDatabase(join(tmpDir(), 'thread.db'));
    const store = new SqliteLongTermStore(db, undefined, { threadFrom: 0 });
    const local = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
    store.upsertSync(Array.from({ length: 300 }, (_, i) => entry(i, i % 3 === 0 ? 'u' : `v${i % 5}`, `parcel ${i % 7 ? 'locker' : 'harbour'} gate ${i}`)));
    await threadUp(store);
    const thread = threadOf(store);
    for (const [user, q] of [['u', 'harbour locker'], ['v1', 'gate parcel'], ['u', 'nothing matches'], ['v4', 'harbour']] as const) {
      const before = thread.answered;
      const got = await store.searchText(user, q, { limit: 8 });
      assert.equal(thread.answered, before + 1, `"${q}" was answered by the thread`);
      assert.deepEqual(got, await local.searchText(user, q, { limit: 8 }), `${user}: "${q}"`);
    }
    // a write acknowledged on this connection is in the thread's next read
    await store.upsert([entry(1000, 'u', 'zeppelin hangar')]);
    const hits = await store.searchText('u', 'zeppelin', { limit: 8 });
    assert.deepEqual(hits.map((h) => h.entry.id), ['e1000']);
    await store.delete('u', ['e1000']);
    assert.deepEqual(await store.searchText('u', 'zeppelin', { limit: 8 }), []);
    await store.close();
    db.close();
  });

  it('answers on the caller\'s thread once the thread is gone, including the calls it held', async () => {
    const db = openDatabase(join(tmpDir(), 'thread-gone.db'));
    const store = new SqliteLongTermStore(db, undefined, { threadFrom: 0 });
    store.upsertSync([entry(1, 'u', 'harbour locker'), entry(2, 'u', 'harbour gate')]);
    await threadUp(store);
    const thread = threadOf(store);
    const held = store.searchText('u', 'harbour', { limit: 8 });
    // ended from outside, as a crash would end it; this test's own timer keeps the process up meanwhile
    // (an answer read during the termination lets go of the thread's handle: see the close test below)
    const keepUp = setInterval(() => {}, 1000);
    try {
      await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    } finally {
      clearInterval(keepUp);
    }
    assert.deepEqual((await held).map((h) => h.entry.id).sort(), ['e1', 'e2']);
    const answered = thread.answered;
    assert.deepEqual((await store.searchText('u', 'gate', { limit: 8 })).map((h) => h.entry.id), ['e2']);
    assert.equal(thread.answered, answered, 'no call went to the ended thread');
    await store.close();
    db.close();
  });

  it('closes while the thread\'s answer to a held call is already on its way: close and the call both settle', async () => {
    const db = openDatabase(join(tmpDir(), 'thread-close.db'));
    const store = new SqliteLongTermStore(db, undefined, { threadFrom: 0 });
    store.upsertSync([entry(1, 'u', 'harbour locker'), entry(2, 'u', 'harbour gate')]);
    await threadUp(store);
    const held = store.searchText('u', 'harbour', { limit: 8 });
    // block this thread long enough for the search thread to post its answer, so that the answer is
    // read after close() began terminating the thread (an answer that let go of the thread's handle
    // then left nothing to keep the process up until the thread's exit: close never settled)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    const closed = store.close();
    assert.deepEqual((await held).map((h) => h.entry.id).sort(), ['e1', 'e2']);
    await closed;
    db.close();
  });

  it('takes the searches of users with many entries only; a small user\'s runs on the caller\'s thread', async () => {
    const db = openDatabase(join(tmpDir(), 'thread-big.db'));
    const store = new SqliteLongTermStore(db, undefined, { threadFrom: 50 });
    const local = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
    store.upsertSync([
      ...Array.from({ length: 60 }, (_, i) => entry(i, 'big', `harbour gate ${i}`)),
      ...Array.from({ length: 10 }, (_, i) => entry(100 + i, 'small', `harbour locker ${i}`)),
    ]);
    await threadUp(store, 'big');
    const thread = threadOf(store);
    const before = thread.answered;
    const small = await store.searchText('small', 'harbour', { limit: 8 });
    assert.equal(thread.answered, before, 'the small user\'s search did not go to the thread');
    assert.deepEqual(small, await local.searchText('small', 'harbour', { limit: 8 }));
    assert.equal(small.length, 8);
    const big = await store.searchText('big', 'harbour', { limit: 8 });
    assert.equal(thread.answered, before + 1, 'the big user\'s search went to the thread');
    assert.deepEqual(big, await local.searchText('big', 'harbour', { limit: 8 }));
    await store.close();
    db.close();
  });

  it('runs no search for a caller that gave up (its tier budget ran out), and sends the thread no signal', async () => {
    const db = openDatabase(join(tmpDir(), 'thread-gave-up.db'));
    const store = new SqliteLongTermStore(db, undefined, { threadFrom: 0 });
    store.upsertSync(Array.from({ length: 50 }, (_, i) => entry(i, 'u', `parcel ${i % 3 ? 'locker' : 'harbour'} gate ${i}`)));
    await threadUp(store);
    const thread = threadOf(store);
    let onCaller = 0;
    const own = store.searchTextSync.bind(store);
    store.searchTextSync = (...args) => (onCaller++, own(...args));
    const before = thread.answered;
    const live = new AbortController();
    // a signal that has not aborted: the search runs as any other (an AbortSignal cannot be posted)
    assert.equal((await store.searchText('u', 'harbour', { limit: 8, signal: live.signal })).length, 8);
    assert.equal(thread.answered, before + 1);
    const reason = new Error('budget spent');
    live.abort(reason);
    await assert.rejects(store.searchText('u', 'harbour', { limit: 8, signal: live.signal }), (err) => err === reason);
    await assert.rejects(threadOf(store).search('u', 'harbour', { limit: 8, signal: live.signal }), (err) => err === reason);
    assert.equal(thread.answered, before + 1, 'nothing more went to the thread');
    assert.equal(onCaller, 0, 'nor ran on the caller\'s thread');
    await store.close();
    db.close();
  });

  it('is not used for an in-memory database', async () => {
    const db = openDatabase(':memory:');
    const store = new SqliteLongTermStore(db);
    store.upsertSync([entry(1, 'u', 'harbour locker')]);
    assert.equal((store as unknown as { thread: unknown }).thread, null);
    assert.equal((await store.searchText('u', 'harbour', { limit: 8 })).length, 1);
    db.close();
  });
});

describe('the text-search thread\'s connection', () => {
  it('reads without mmap, read-only, and sees what another connection commits', () => {
    const path = join(tmpDir(), 'search-conn.db');
    const db = openDatabase(path);
    const search = openSearchConnection(path);
    try {
      // a mapped connection pays for every commit of another one (db.ts, openSearchConnection)
      assert.equal(db.pragma('mmap_size', { simple: true }), MMAP_BYTES);
      assert.equal(search.pragma('mmap_size', { simple: true }), 0);
      assert.throws(() => search.exec('CREATE TABLE t (x)'), /readonly/);
      db.exec('CREATE TABLE seen (x); INSERT INTO seen VALUES (7)');
      assert.equal(search.prepare('SELECT x FROM seen').pluck().get(), 7);
    } finally {
      search.close();
      db.close();
    }
  });

  it("warm() starts the thread before any search when a user is big enough for it, so that user's first search is the thread's", async () => {
    const db = openDatabase(join(tmpDir(), 'thread-warm.db'));
    const big = new SqliteLongTermStore(db, undefined, { threadFrom: 50 });
    big.upsertSync(Array.from({ length: 60 }, (_, i) => entry(i, 'u', `harbour locker ${i}`)));
    assert.equal(await big.warm(10_000), true);
    const thread = threadOf(big);
    assert.equal(thread.answered, 0);
    assert.deepEqual((await big.searchText('u', 'harbour', { limit: 3 })).length, 3);
    assert.equal(thread.answered, 1, "the first search was the thread's, not the caller's");
    await big.close();

    // no user holds threadFrom entries: no thread is started, and the first search is the caller's
    const small = new SqliteLongTermStore(db, undefined, { threadFrom: 100 });
    assert.equal(await small.warm(10_000), false);
    assert.equal((small as unknown as { thread: { worker: unknown } }).thread.worker, null, 'no thread started');
    await small.close();
    db.close();
  });
});
