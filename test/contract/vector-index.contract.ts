import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesFilter } from '../../src/domain/filters.js';
import type { EmbedderTag, VectorIndex, VectorPayload, VectorPoint } from '../../src/ports/vector-index.js';
import { FILTER_CASES, FILTER_RECORDS } from './filter-cases.js';

const DIM = 8;
const A: EmbedderTag = { id: 'contract-a', dim: DIM };
const B: EmbedderTag = { id: 'contract-b', dim: DIM };

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function axis(i: number, tilt = 0): Float32Array {
  const v = new Array(DIM).fill(0);
  v[i % DIM] = 1;
  v[(i + 1) % DIM] = tilt;
  return unit(v);
}

function payload(user: string, session: string, content: string): VectorPayload {
  return { user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content, content_hash: `h-${content}`, created_at: '2026-01-01T00:00:00.000Z', metadata: null };
}

function point(id: string, user: string, session: string, vector: Float32Array): VectorPoint {
  return { id, vector, payload: payload(user, session, id) };
}

/**
 * The contract every VectorIndex passes (see its doc comment). `make` returns an index; tests use
 * unique user ids and point ids, so a shared backend is fine.
 */
export function vectorIndexContract(name: string, make: () => Promise<VectorIndex>): void {
  describe(`VectorIndex contract: ${name}`, () => {
    const uid = () => `u-${Math.random().toString(36).slice(2)}`;
    const pid = (s: string) => `${s}-${Math.random().toString(36).slice(2)}`;

    it('finds the nearest vectors of the user, best first, with cosine scores and payloads', async () => {
      const ix = await make();
      const [u, other] = [uid(), uid()];
      const [p0, p1, p2, px] = [pid('p0'), pid('p1'), pid('p2'), pid('px')];
      await ix.upsert(A, [point(p0, u, 's1', axis(0)), point(p1, u, 's2', axis(0, 0.5)), point(p2, u, 's1', axis(3)), point(px, other, 's1', axis(0))]);
      const hits = await ix.search(A, axis(0), { user_id: u }, 2);
      assert.deepEqual(hits.map((h) => h.id), [p0, p1]);
      assert.ok(Math.abs(hits[0]!.score - 1) < 1e-4, `exact match scores 1, got ${hits[0]!.score}`);
      assert.ok(hits[1]!.score < hits[0]!.score && hits[1]!.score > 0.8);
      assert.deepEqual(hits[0]!.payload, payload(u, 's1', p0));
      const inSession = await ix.search(A, axis(0), { user_id: u, session_id: 's1' }, 5);
      assert.deepEqual(inSession.map((h) => h.id).sort(), [p0, p2].sort());
      await ix.close();
    });

    it('never returns another user\'s vectors or another embedder\'s', async () => {
      const ix = await make();
      const [u, other] = [uid(), uid()];
      const mine = pid('mine');
      await ix.upsert(A, [point(pid('theirs'), other, 's', axis(1))]);
      await ix.upsert(B, [point(pid('b-only'), u, 's', axis(1))]);
      await ix.upsert(A, [point(mine, u, 's', axis(5))]);
      const hits = await ix.search(A, axis(1), { user_id: u }, 10);
      assert.deepEqual(hits.map((h) => h.id), [mine]);
      await ix.close();
    });

    it('upserts idempotently by id and reports which ids it holds', async () => {
      const ix = await make();
      const u = uid();
      const id = pid('same');
      await ix.upsert(A, [point(id, u, 's', axis(2))]);
      await ix.upsert(A, [point(id, u, 's', axis(4))]);
      assert.equal(await ix.count(A, { user_id: u }), 1);
      const hits = await ix.search(A, axis(4), { user_id: u }, 5);
      assert.equal(hits.length, 1);
      assert.ok(hits[0]!.score > 0.99, 'the second upsert replaced the vector');
      assert.deepEqual([...(await ix.has(A, u, [id, 'absent']))], [id]);
      assert.deepEqual([...(await ix.has(B, u, [id]))], []);
      assert.deepEqual([...(await ix.has(A, uid(), [id]))], [], "another user's equal id is not held");
      await ix.close();
    });

    it('keys vectors by (user, id): two users hold the same id, and neither reaches the other\'s', async () => {
      const ix = await make();
      const [alice, bob] = [uid(), uid()];
      const id = pid('shared');
      await ix.upsert(A, [point(id, alice, 's', axis(0)), point(id, bob, 's', axis(3))]);
      assert.deepEqual((await ix.search(A, axis(0), { user_id: alice }, 5)).map((h) => [h.id, h.payload.user_id]), [[id, alice]]);
      assert.deepEqual((await ix.search(A, axis(3), { user_id: bob }, 5)).map((h) => [h.id, h.payload.user_id]), [[id, bob]]);
      await ix.delete(alice, [id]);
      assert.equal((await ix.has(A, alice, [id])).size, 0);
      assert.deepEqual([...(await ix.has(A, bob, [id]))], [id], "alice's delete leaves bob's vector alone");
      assert.equal((await ix.search(A, axis(3), { user_id: bob }, 5)).length, 1);
      await ix.close();
    });

    it('rejects a vector of the wrong dimension', async () => {
      const ix = await make();
      await assert.rejects(ix.upsert(A, [point(pid('bad'), uid(), 's', new Float32Array(DIM + 1).fill(0.1))]));
      await ix.close();
    });

    it('deletes by id under every embedder, by user, by session', async () => {
      const ix = await make();
      const u = uid();
      const [a, b, c] = [pid('a'), pid('b'), pid('c')];
      await ix.upsert(A, [point(a, u, 's1', axis(0)), point(b, u, 's1', axis(1)), point(c, u, 's2', axis(2))]);
      await ix.upsert(B, [point(a, u, 's1', axis(0))]);
      await ix.delete(u, [a]);
      assert.equal((await ix.has(A, u, [a])).size + (await ix.has(B, u, [a])).size, 0);
      await ix.deleteWhere({ user_id: u, session_id: 's1' });
      assert.deepEqual((await ix.search(A, axis(1), { user_id: u }, 10)).map((h) => h.id), [c]);
      await ix.deleteWhere({ user_id: u });
      assert.equal(await ix.count(A, { user_id: u }), 0);
      assert.equal(await ix.ping(), true);
      await ix.close();
    });

    /** an entry's whole text (part 0) and passages 1…n, each with the entry's payload */
    const entry = (id: string, user: string, session: string, vectors: Float32Array[]): VectorPoint[] =>
      vectors.map((vector, part) => ({ id, part, vector, payload: payload(user, session, id) }));

    it('an entry of several passages is one hit: its best part\'s score and number, its whole text\'s payload; has and count count entries', async () => {
      const ix = await make();
      const u = uid();
      const [long, other] = [pid('long'), pid('other')];
      await ix.upsert(A, [...entry(long, u, 's', [axis(0), axis(2), axis(4)]), point(other, u, 's', axis(2, 0.3))]);
      const hits = await ix.search(A, axis(2), { user_id: u }, 2);
      assert.deepEqual(hits.map((h) => [h.id, h.part]), [[long, 1], [other, 0]]);
      assert.ok(Math.abs(hits[0]!.score - 1) < 1e-4, `scored by its passage: ${hits[0]!.score}`);
      assert.deepEqual(hits[0]!.payload, payload(u, 's', long), 'with the payload of its whole text');
      assert.deepEqual((await ix.search(A, axis(0), { user_id: u }, 1)).map((h) => [h.id, h.part]), [[long, 0]], 'its whole text matched: part 0');
      assert.equal(await ix.count(A, { user_id: u }), 2);
      assert.deepEqual([...(await ix.has(A, u, [long, other]))].sort(), [long, other].sort());
      await ix.close();
    });

    it('an entry whose passages fill the nearest vectors still leaves room for k entries', async () => {
      const ix = await make();
      const u = uid();
      const long = pid('long');
      // 40 passages nearer the query than any other entry: k = 3 must still be three entries
      const near = (t: number) => unit([1, 0.01 * t, 0, 0, 0, 0, 0, 0]);
      await ix.upsert(A, entry(long, u, 's', Array.from({ length: 41 }, (_, i) => near(i))));
      const others = [pid('o1'), pid('o2'), pid('o3')];
      await ix.upsert(A, others.map((id, i) => point(id, u, 's', near(200 + 50 * i))));
      const hits = await ix.search(A, near(0), { user_id: u }, 3);
      assert.deepEqual(hits.map((h) => h.id), [long, others[0], others[1]]);
      await ix.close();
    });

    it('an upsert replaces the entry: its parts beyond the highest given are gone', async () => {
      const ix = await make();
      const u = uid();
      const id = pid('edited');
      await ix.upsert(A, entry(id, u, 's', [axis(0), axis(1), axis(2), axis(3)]));
      assert.deepEqual((await ix.search(A, axis(3), { user_id: u }, 1)).map((h) => h.part), [3], 'held (and, where the index keeps a copy in memory, loaded)');
      await ix.upsert(A, entry(id, u, 's', [axis(0), axis(1)]));
      const hits = await ix.search(A, axis(3), { user_id: u }, 5);
      assert.ok(hits.every((h) => h.part <= 1 && h.score < 0.5), `no vector of the old parts 2 and 3: ${JSON.stringify(hits.map((h) => [h.part, h.score]))}`);
      await ix.upsert(A, entry(id, u, 's', [axis(5)]));
      assert.deepEqual((await ix.search(A, axis(1), { user_id: u }, 5)).filter((h) => h.score > 0.5), [], 'nor of part 1 once the text is short');
      assert.equal(await ix.count(A, { user_id: u }), 1);
      await ix.close();
    });

    it("a search returns each row as it is now: another instance's edit and delete (another process on the same store), and its own, of rows it had just returned", async () => {
      const [ix, other] = [await make(), await make()];
      const u = uid();
      const [kept, gone] = [pid('kept'), pid('gone')];
      const said = (id: string, content: string, v: Float32Array): VectorPoint => ({ id, vector: v, payload: payload(u, 's', content) });
      await ix.upsert(A, [said(kept, 'first', axis(0)), said(gone, 'second', axis(0, 0.3))]);
      const texts = async () => (await ix.search(A, axis(0), { user_id: u }, 5)).map((h) => [h.id, h.payload.content]);
      assert.deepEqual(await texts(), [[kept, 'first'], [gone, 'second']]);
      // the same vector, another text: only the row's payload tells the edit
      await other.upsert(A, [said(kept, 'edited elsewhere', axis(0))]);
      await other.delete(u, [gone]);
      assert.deepEqual(await texts(), [[kept, 'edited elsewhere']], "the other instance's edit and delete");
      await ix.upsert(A, [said(kept, 'edited here', axis(0))]);
      assert.deepEqual(await texts(), [[kept, 'edited here']], 'its own edit');
      await other.upsert(A, [said(gone, 'written again', axis(0, 0.3))]);
      assert.deepEqual(await texts(), [[kept, 'edited here'], [gone, 'written again']], 'a deleted id written again');
      await Promise.all([ix.close(), other.close()]);
    });

    it('deleting an entry removes every passage under every embedder; deleteWhere counts entries', async () => {
      const ix = await make();
      const u = uid();
      const [a, b] = [pid('a'), pid('b')];
      await ix.upsert(A, entry(a, u, 's1', [axis(0), axis(1), axis(2)]));
      await ix.upsert(B, entry(a, u, 's1', [axis(0), axis(1), axis(2)]));
      await ix.upsert(A, entry(b, u, 's2', [axis(5), axis(6), axis(7)]));
      await ix.delete(u, [a]);
      for (const tag of [A, B]) for (const i of [0, 1, 2]) assert.deepEqual(await ix.search(tag, axis(i), { user_id: u, session_id: 's1' }, 5), [], `${tag.id} part ${i}`);
      assert.deepEqual((await ix.search(A, axis(6), { user_id: u }, 5)).map((h) => [h.id, h.part]), [[b, 1]]);
      assert.equal(await ix.deleteWhere({ user_id: u }), 1, 'one entry, not three vectors');
      assert.deepEqual(await ix.search(A, axis(6), { user_id: u }, 5), []);
      assert.equal(await ix.count(undefined, { user_id: u }), 0);
      await ix.close();
    });

    it("a user never reaches another's passages, nor deletes them", async () => {
      const ix = await make();
      const [alice, bob] = [uid(), uid()];
      const id = pid('same');
      await ix.upsert(A, entry(id, alice, 's', [axis(0), axis(3)]));
      await ix.upsert(A, entry(id, bob, 's', [axis(1), axis(6)]));
      const bobs = await ix.search(A, axis(3), { user_id: bob }, 5);
      assert.ok(bobs.every((h) => h.payload.user_id === bob && h.score < 0.5), JSON.stringify(bobs));
      await ix.delete(alice, [id]);
      assert.deepEqual((await ix.search(A, axis(6), { user_id: bob }, 5)).map((h) => [h.id, h.part, h.payload.user_id]), [[id, 1, bob]]);
      assert.deepEqual(await ix.search(A, axis(3), { user_id: alice }, 5), []);
      await ix.close();
    });

    // last: it removes other embedders' vectors of every user, which the tests above no longer need
    it('deletes the vectors of every other embedder, keeping one', async () => {
      const ix = await make();
      const u = uid();
      const C: EmbedderTag = { id: `contract-c-${Math.random().toString(36).slice(2)}`, dim: DIM };
      const [a, b] = [pid('a'), pid('b')];
      await ix.upsert(A, [point(a, u, 's', axis(0))]);
      await ix.upsert(C, [point(a, u, 's', axis(0)), point(b, u, 's', axis(1))]);
      assert.ok((await ix.deleteOtherEmbedders(C)) >= 1);
      assert.equal(await ix.count(A, { user_id: u }), 0);
      assert.equal(await ix.count(C, { user_id: u }), 2);
      assert.deepEqual((await ix.search(C, axis(1), { user_id: u }, 1)).map((h) => h.id), [b]);
      await ix.close();
    });
    it('applies a retrieval filter before the cut to k: the best k among matching vectors, metadata in the payload', async () => {
      const ix = await make();
      const u = uid();
      const ids = FILTER_RECORDS.map((r) => pid(`f${r.rank}`));
      // rank i is at angle atan(0.15·(i + 5)) from the query: a strictly worse match as i grows; and 40
      // vectors nearer than all of them that no filter case matches (another session, role, kind, time)
      const at = (t: number) => unit([1, 0.15 * t, 0, 0, 0, 0, 0, 0]);
      await ix.upsert(
        A,
        FILTER_RECORDS.map((r, i) => ({ id: ids[i]!, vector: at(r.rank + 5), payload: { ...payload(u, r.session_id, `c${i}`), role: r.role, kind: r.kind, created_at: r.created_at, metadata: r.metadata } })),
      );
      const filler = Array.from({ length: 40 }, (_, j): VectorPoint => ({
        id: pid(`near${j}`),
        vector: at(j / 10),
        payload: { ...payload(u, 'elsewhere', `near${j}`), role: 'tool', kind: 'archive', created_at: '2020-01-01T00:00:00.000Z' },
      }));
      await ix.upsert(A, filler);
      assert.deepEqual((await ix.search(A, at(0), { user_id: u }, 3)).map((h) => h.id), filler.slice(0, 3).map((p) => p.id), 'unfiltered: the near ones');
      const k = 3;
      for (const c of FILTER_CASES) {
        const hits = await ix.search(A, at(0), { user_id: u, where: c.filter }, k);
        const expected = c.matching.slice(0, k).map((r) => ids[r.rank]);
        assert.deepEqual(hits.map((h) => h.id), expected, `${c.name}: ${JSON.stringify(c.filter)}`);
        for (const h of hits) assert.deepEqual(h.payload.metadata, FILTER_RECORDS[ids.indexOf(h.id)]!.metadata, `${c.name}: metadata of ${h.id}`);
      }
      await ix.close();
    });

    it("a filtered search is the plain search's whole ranking filtered, through inserts, updates and deletes; another user's writes change none of it", async () => {
      const ix = await make();
      const [u, other] = [uid(), uid()];
      const at = (t: number) => unit([1, 0.15 * t, 0, 0, 0, 0, 0, 0]);
      const ids = FILTER_RECORDS.map((r) => pid(`f${r.rank}`));
      const record = (i: number, user: string, t: number): VectorPoint => {
        const r = FILTER_RECORDS[i % FILTER_RECORDS.length]!;
        return { id: ids[i % ids.length]!, vector: at(t), payload: { ...payload(user, r.session_id, `c${i}`), role: r.role, kind: r.kind, created_at: r.created_at, metadata: r.metadata } };
      };
      await ix.upsert(A, FILTER_RECORDS.map((r, i) => record(i, u, r.rank + 5)));
      const check = async (label: string) => {
        const whole = await ix.search(A, at(0), { user_id: u }, 100);
        for (const c of FILTER_CASES) {
          for (const k of [1, 3]) {
            const hits = await ix.search(A, at(0), { user_id: u, where: c.filter }, k);
            const want = whole.filter((h) => matchesFilter(h.payload, c.filter)).slice(0, k);
            assert.deepEqual(hits.map((h) => h.id), want.map((h) => h.id), `${label}: ${c.name}, k ${k}`);
            hits.forEach((h, i) => assert.ok(Math.abs(h.score - want[i]!.score) < 1e-6, `${label}: ${c.name}: the plain search's score`));
          }
        }
        return whole.map((h) => h.id);
      };
      const first = await check('as written');
      // another user: the same ids, nearer the query, passing every filter; then deleted
      await ix.upsert(A, FILTER_RECORDS.map((_, i) => record(i, other, 0.1 * i)));
      assert.deepEqual(await check("after another user's writes"), first);
      await ix.delete(other, ids.slice(0, 6));
      await ix.deleteWhere({ user_id: other });
      assert.deepEqual(await check("after another user's deletes"), first);
      // u's own: an insert nearest the query, updates of filter fields and of vectors, deletes
      const fresh = pid('fresh');
      await ix.upsert(A, [{ ...record(2, u, 0), id: fresh }]);
      assert.equal((await check('after an insert'))[0], fresh);
      await ix.upsert(A, [
        { ...record(4, u, 9), payload: { ...record(4, u, 9).payload, role: 'assistant', kind: 'summary', session_id: 's2', metadata: { topic: 'work', n: 3, flag: true } } },
        { ...record(7, u, 0.5), payload: { ...record(7, u, 0.5).payload, role: 'user', created_at: '2026-01-03T00:00:00.000Z' } },
      ]);
      await check('after updates');
      await ix.delete(u, [fresh, ids[0]!, ids[7]!]);
      const left = await check('after deletes');
      assert.ok(![fresh, ids[0], ids[7]].some((id) => left.includes(id!)), 'the deleted ids are gone');
      await ix.close();
    });
  });
}
