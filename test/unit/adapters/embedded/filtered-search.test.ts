import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteVectorStore } from '../../../../src/adapters/embedded/rows.js';
import type { FullRow } from '../../../../src/adapters/embedded/store.js';
import { EmbeddedVectorIndex, type EmbeddedVectorIndexOptions } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { matchesFilter, RetrieveFiltersSchema, type RecordFilter, type RecordFilterInput } from '../../../../src/domain/filters.js';
import type { EmbedderTag, VectorHit, VectorPoint } from '../../../../src/ports/vector-index.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { clustered, normalize, rng } from './data.js';

const DIM = 32;
const TAG: EmbedderTag = { id: 'filtered-32', dim: DIM };
const dir = tmpDir();
let files = 0;

/** the store, counting the rows a search reads and the rowids a filter's listing returns */
class CountingStore extends SqliteVectorStore {
  read = 0;
  listings = 0;
  listed = 0;
  override async byRowids(rowids: readonly number[]): Promise<Map<number, FullRow>> {
    this.read += rowids.length;
    return super.byRowids(rowids);
  }
  override async matching(...args: Parameters<SqliteVectorStore['matching']>): Promise<Set<number>> {
    const out = await super.matching(...args);
    this.listings++;
    this.listed += out.size;
    return out;
  }
  reset(): void {
    this.read = this.listings = this.listed = 0;
  }
}

function open(options: EmbeddedVectorIndexOptions = {}, file = join(dir, `f${files++}.db`)): { ix: EmbeddedVectorIndex; store: CountingStore; db: Db; file: string } {
  const db = openDatabase(file);
  const store = new CountingStore(db);
  return { ix: new EmbeddedVectorIndex(store, options), store, db, file };
}

const T0 = Date.UTC(2026, 0, 1);
const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();

/**
 * `count` entries of `user` over clustered vectors, whose filter fields follow their cluster (as a
 * conversation's do: a topic's turns share sessions, speakers and tags), so the share a filter keeps
 * among a query's nearest rows differs from its share overall — or, `correlated` false, are drawn
 * apart from it; every 40th entry is a long turn with three passages besides its whole text.
 */
function corpus(count: number, seed: number, user = 'u', correlated = true): { points: VectorPoint[]; near: (i: number) => Float32Array } {
  const { vectors, near, clusterOf } = clustered(count, DIM, seed, 24);
  const r = rng(seed + 1);
  const points: VectorPoint[] = [];
  vectors.forEach((vector, i) => {
    const c = correlated ? clusterOf[i]! : Math.floor(r() * 24);
    const payload = {
      user_id: user,
      session_id: `s${(c + (r() < 0.2 ? 1 : 0)) % 6}`,
      role: (c % 2 === 0 ? r() < 0.8 : r() < 0.3) ? ('user' as const) : ('assistant' as const),
      name: null,
      kind: i % 10 === 3 ? ('summary' as const) : ('turn' as const),
      content: `text ${i}`,
      content_hash: `h${i}`,
      created_at: at(i),
      metadata: i % 7 === 0 ? null : { topic: ['work', 'home', 'gym'][c % 3]!, n: i % 5, flag: i % 2 === 0 },
    };
    const id = `e${i}`;
    points.push({ id, vector, payload });
    if (i % 40 === 5) for (let part = 1; part <= 3; part++) points.push({ id, part, vector: near(i), payload: { ...payload, content: '' } });
  });
  return { points, near };
}

const FILTERS: Array<[string, RecordFilterInput]> = [
  ['roles, assistant', { roles: ['assistant'] }],
  ['roles, user', { roles: ['user'] }],
  ['kinds, turn', { kinds: ['turn'] }],
  ['kinds, summary (narrow)', { kinds: ['summary'] }],
  ['session_ids, half the sessions', { session_ids: ['s0', 's1', 's2'] }],
  ['session_ids, one session', { session_ids: ['s5'] }],
  ['created_before', { created_before: at(3000) }],
  ['created_after (narrow)', { created_after: at(5700) }],
  ['created_after and created_before', { created_after: at(500), created_before: at(4500) }],
  ['metadata equality', { metadata: { topic: 'work' } }],
  ['metadata boolean', { metadata: { flag: true } }],
  ['metadata in', { metadata: { n: { in: [1, 2] } } }],
  ['metadata key nobody has', { metadata: { missing: 'x' } }],
  ['everything at once', { roles: ['user'], metadata: { flag: true }, created_after: at(200), session_ids: ['s0', 's2', 's3', 's4'] }],
];
const CASES: Array<{ name: string; filter: RecordFilter }> = FILTERS.map(([name, input]) => ({ name, filter: RetrieveFiltersSchema.parse(input) }));

const shown = (hits: VectorHit[]) => hits.map((h) => [h.id, h.part, h.score, h.payload.user_id]);

/** every entry of user u the filter allows (k above the user's rows: the answer is the allowed set, whatever the scan's order) */
const allowedBy = (ix: EmbeddedVectorIndex, q: Float32Array) => async (input: RecordFilterInput) =>
  new Set((await ix.search(TAG, q, { user_id: 'u', where: RetrieveFiltersSchema.parse(input) }, 10_000)).map((h) => h.id));

/** the entries of `points` created in [minute `from`, minute `before`) */
const createdIn = (points: readonly VectorPoint[], from: number, before: number) =>
  new Set(points.filter((p) => (p.part ?? 0) === 0 && p.payload.created_at >= at(from) && p.payload.created_at < at(before)).map((p) => p.id));

/** every filter case, k of 1 and 24, each query: `a` and `b` answer the same, field for field */
async function sameAnswers(a: EmbeddedVectorIndex, b: EmbeddedVectorIndex, queries: Float32Array[], user: string, label: string): Promise<number> {
  let hits = 0;
  for (const c of CASES) {
    for (const k of [1, 24]) {
      for (const [qi, q] of queries.entries()) {
        const want = await b.search(TAG, q, { user_id: user, where: c.filter }, k);
        const got = await a.search(TAG, q, { user_id: user, where: c.filter }, k);
        assert.deepEqual(got, want, `${label}: ${c.name}, k ${k}, query ${qi}`);
        for (const h of got) assert.ok(h.payload.user_id === user && matchesFilter(h.payload, c.filter), `${label}: ${c.name}: ${h.id} passes the filter`);
        hits += got.length;
      }
    }
  }
  return hits;
}

describe('embedded index: a filtered search', () => {
  it('answers what listing the allowed rows answers (ids, order, scores, payloads) for every filter kind, through inserts, updates, deletes and another process\'s writes', async () => {
    const { points, near } = corpus(6000, 5);
    // probing every partition, caching every listing, the big scans shared with the helper thread;
    // against the listed scan alone (what every filtered search did before), over the same file
    // no slack between the scan's candidates and k: any other candidate changes an answer
    const candidates = (k: number) => k;
    const probing = open({ probeFrom: 0, shareScansFrom: 1024, candidates });
    const listed = open({ probeFrom: Infinity, candidates }, probing.file);
    const writer = open({}, probing.file);
    await probing.ix.upsert(TAG, points);
    await probing.ix.upsert(TAG, corpus(500, 9, 'v').points);
    const r = rng(3);
    const queries = [...Array.from({ length: 5 }, () => near(Math.floor(r() * 6000))), normalize(Float32Array.from({ length: DIM }, () => r() - 0.5))];

    const rounds: Array<[string, () => Promise<unknown>]> = [
      ['as written', async () => {}],
      // each query's own neighbourhood rewritten: the rows its listings hold change
      ['after inserts near the queries', () => probing.ix.upsert(TAG, queries.flatMap((q, i) => Array.from({ length: 20 }, (_, j) => ({ ...points[(i * 97 + j * 13) % points.length]!, id: `new-${i}-${j}`, part: 0, vector: q })))) ],
      ['after updates of filter fields and vectors', () => probing.ix.upsert(TAG, points.filter((p) => (p.part ?? 0) === 0).slice(0, 1500).map((p, i) => ({ ...p, vector: i % 3 === 0 ? queries[i % queries.length]! : p.vector, payload: { ...p.payload, role: p.payload.role === 'user' ? 'assistant' : 'user', kind: i % 2 ? 'summary' : 'turn', session_id: `s${i % 6}`, created_at: at(6000 - i), metadata: i % 4 ? { topic: 'work', n: 1, flag: true } : null } })))],
      ['after deletes (entries, a session)', async () => {
        await probing.ix.delete('u', Array.from({ length: 800 }, (_, i) => `e${i * 7}`));
        await probing.ix.deleteWhere({ user_id: 'u', session_id: 's3' });
      }],
      ["after another process's writes and deletes", async () => {
        await writer.ix.upsert(TAG, queries.map((q, i) => ({ ...points[i * 11]!, id: `foreign-${i}`, part: 0, vector: q, payload: { ...points[i * 11]!.payload, role: 'assistant', kind: 'turn', metadata: { topic: 'work', n: 2, flag: true } } })));
        await writer.ix.delete('u', ['new-0-0', 'new-1-0', 'e1', 'e2', 'e4']);
      }],
    ];
    let hits = 0;
    const deleted = ['e0', 'e7', 'e700', 'new-0-0', 'new-1-0', 'e1', 'e2', 'e4'];
    for (const [i, [label, change]] of rounds.entries()) {
      await change();
      // twice: the second round reads the listings the first one kept
      for (const pass of [1, 2]) hits += await sameAnswers(probing.ix, listed.ix, queries, 'u', `${label}, pass ${pass}`);
      if (i >= 3) {
        const gone = i === 3 ? deleted.slice(0, 3) : deleted;
        for (const c of CASES) {
          const all = await probing.ix.search(TAG, queries[0]!, { user_id: 'u', where: c.filter }, 10_000);
          assert.deepEqual(all.filter((h) => gone.includes(h.id) || h.payload.session_id === 's3' && i === 3), [], `${label}: ${c.name}: nothing deleted comes back`);
        }
      }
    }
    assert.ok(hits > 5000, `the cases found rows (${hits})`);
    for (const x of [probing, listed, writer]) x.db.close();
  });

  it("reads no listing of another user's, and one user's writes leave another's filtered answers as they were", async () => {
    const { points, near } = corpus(5000, 21);
    const a = open();
    await a.ix.upsert(TAG, points);
    await a.ix.upsert(TAG, corpus(5000, 22, 'v').points);
    const queries = [near(10), near(2000), near(4444)];
    const answers = async (user: string) => {
      const out: unknown[] = [];
      for (const c of CASES) for (const q of queries) out.push(shown(await a.ix.search(TAG, q, { user_id: user, where: c.filter }, 8)));
      return out;
    };
    const before = await answers('u');
    a.store.reset();
    assert.deepEqual(await answers('u'), before, 'asked again');
    const listings = a.store.listings;
    // v writes entries at u's queries, under u's ids, passing every filter; then deletes some of them
    await a.ix.upsert(TAG, queries.flatMap((q, i) => points.slice(0, 50).map((p, j) => ({ ...p, id: `e${j}`, part: 0, vector: i === 0 ? q : p.vector, payload: { ...p.payload, user_id: 'v', role: 'user', kind: 'turn', session_id: 's0', metadata: { topic: 'work', n: 1, flag: true, missing: 'x' } } }))));
    await a.ix.delete('v', ['e1', 'e2', 'e3']);
    await a.ix.deleteWhere({ user_id: 'v', session_id: 's4' });
    a.store.reset();
    assert.deepEqual(await answers('u'), before, "after v's writes");
    assert.equal(a.store.listings, listings, "u's kept listings stay good: v's writes are not u's");
    for (const c of CASES) {
      for (const h of await a.ix.search(TAG, queries[0]!, { user_id: 'v', where: c.filter }, 24)) assert.equal(h.payload.user_id, 'v', `${c.name}: v's own rows only`);
    }
    a.db.close();
  });

  it('a deleted or updated vector never comes back through a kept listing', async () => {
    const { points, near } = corpus(5000, 31);
    const a = open();
    await a.ix.upsert(TAG, points);
    const q = near(1234);
    // a topic other than the query's cluster's (too few among a probe's candidates): listed, and the
    // listing kept; the time is tested on the rows held
    const topic = ['work', 'home', 'gym'].find((t) => t !== points.find((p) => p.id === 'e1234')!.payload.metadata!.topic)!;
    const narrow = RetrieveFiltersSchema.parse({ created_after: at(100), metadata: { topic } });
    const passing = points.find((p) => matchesFilter({ ...p.payload, metadata: p.payload.metadata ?? null }, narrow))!;
    const first = await a.ix.search(TAG, q, { user_id: 'u', where: narrow }, 8);
    assert.ok(a.store.listings >= 1, 'a narrow filter lists its rows');
    a.store.reset();
    assert.deepEqual(await a.ix.search(TAG, q, { user_id: 'u', where: narrow }, 8), first);
    assert.equal(a.store.listings, 0, 'and keeps the listing while the user writes nothing');
    // the best one deleted, the second dated earlier, a new one at the query
    await a.ix.delete('u', [first[0]!.id]);
    const second = points.find((p) => p.id === first[1]!.id && (p.part ?? 0) === 0)!;
    await a.ix.upsert(TAG, [{ ...second, payload: { ...second.payload, created_at: at(10) } }]);
    await a.ix.upsert(TAG, [{ ...passing, id: 'fresh', part: 0, vector: q, payload: { ...passing.payload, created_at: at(6000) } }]);
    const after = await a.ix.search(TAG, q, { user_id: 'u', where: narrow }, 8);
    assert.ok(a.store.listings >= 1, 'the writes dropped the kept listing');
    assert.deepEqual(after.slice(0, 7).map((h) => h.id), ['fresh', ...first.slice(2).map((h) => h.id)], 'the new one first, the deleted one and the one dated earlier gone');
    assert.deepEqual(after, await open({ probeFrom: Infinity }, a.file).ix.search(TAG, q, { user_id: 'u', where: narrow }, 8), 'as the listed scan answers');
    a.db.close();
  });

  it("a time is tested on the rows held: nothing listed whatever time a query names, and another process's write moves a row's time", async () => {
    const { points, near } = corpus(5000, 51);
    const a = open();
    await a.ix.upsert(TAG, points);
    const q = near(2500);
    await a.ix.search(TAG, q, { user_id: 'u' }, 8); // load
    a.store.reset();
    const allowed = allowedBy(a.ix, q);
    const want = (from: number, before: number) => createdIn(points, from, before);
    for (let m = 100; m <= 5000; m += 700) {
      assert.deepEqual(await allowed({ created_before: at(m) }), want(0, m), `before minute ${m}`);
      assert.deepEqual(await allowed({ created_after: at(m) }), want(m, 10_000), `from minute ${m}`);
      const hits = await a.ix.search(TAG, q, { user_id: 'u', where: RetrieveFiltersSchema.parse({ created_before: at(m) }) }, 8);
      assert.equal(hits.length, 8, `before minute ${m}: k hits`);
      assert.ok(hits.every((h) => h.payload.created_at < at(m)), `before minute ${m}: each hit of that time`);
    }
    assert.equal(a.store.listings, 0, 'no listing read for a time');
    // another connection, as another process, dates e100 (and its passages) after everything else
    const b = open({}, a.file);
    const moved = points.filter((p) => p.id === 'e100');
    await b.ix.upsert(TAG, moved.map((p) => ({ ...p, payload: { ...p.payload, created_at: at(9000) } })));
    assert.ok(!(await allowed({ created_before: at(5000) })).has('e100'), 'its old time no longer holds');
    assert.deepEqual(await allowed({ created_after: at(8000) }), new Set(['e100']), 'its new time does');
    assert.equal(a.store.listings, 0);
    for (const x of [a, b]) x.db.close();
  });

  it('finds a row of the time asked where a deletion moved it: a zone of early rows that took in a late one is searched for late times', async () => {
    // rows are held in the order written and each zone of them keeps the times it holds, so that a
    // search of a time skips the zones holding none of it; a deletion moves the user's last row into
    // the hole it leaves, here the latest rows into the zone of the earliest
    const { points, near } = corpus(2000, 61);
    const a = open();
    await a.ix.upsert(TAG, points);
    const q = near(1900);
    await a.ix.search(TAG, q, { user_id: 'u' }, 8); // load
    await a.ix.delete('u', points.slice(0, 300).map((p) => p.id));
    const allowed = allowedBy(a.ix, q);
    const left = points.slice(300);
    const want = (from: number, before: number) => createdIn(left, from, before);
    assert.deepEqual(await allowed({ created_after: at(1700) }), want(1700, 10_000), 'the latest rows, wherever they are held now');
    assert.deepEqual(await allowed({ created_before: at(600) }), want(0, 600), 'the earliest left');
    assert.deepEqual(await allowed({ created_after: at(900), created_before: at(1100) }), want(900, 1100), 'a stretch between');
    a.db.close();
  });

  it('a broad filter reads about the rows a plain search reads, and lists none (100k-vector users: the listing was most of the search)', async () => {
    const { points, near } = corpus(5000, 41, 'u', false);
    const a = open();
    await a.ix.upsert(TAG, points);
    const queries = [near(7), near(1500), near(3100), near(4900)];
    await a.ix.search(TAG, queries[0]!, { user_id: 'u' }, 24); // load
    a.store.reset();
    for (const q of queries) await a.ix.search(TAG, q, { user_id: 'u' }, 24);
    const plain = a.store.read;
    assert.ok(plain > 0);
    const broad = ['roles, assistant', 'roles, user', 'kinds, turn', 'session_ids, half the sessions', 'created_before', 'metadata boolean', 'created_after and created_before'];
    for (const name of broad) {
      const c = CASES.find((x) => x.name === name)!;
      a.store.reset();
      for (const q of queries) await a.ix.search(TAG, q, { user_id: 'u', where: c.filter }, 24);
      assert.equal(a.store.listed, 0, `${name}: no listing (it listed ${a.store.listed} rowids)`);
      assert.ok(a.store.read <= 4 * plain, `${name}: ${a.store.read} rows read, against ${plain} for the plain searches`);
    }
  });
});
