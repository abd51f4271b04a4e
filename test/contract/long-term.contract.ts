import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../src/domain/entry.js';
import { contentHash } from '../../src/domain/hash.js';
import type { Turn } from '../../src/domain/turn.js';
import type { LongTermStore, TextHit } from '../../src/ports/long-term.js';
import { FILTER_CASES, FILTER_RECORDS } from './filter-cases.js';

let n = 0;
export function entry(user: string, content: string, extra: Partial<MemoryEntry> = {}): MemoryEntry {
  n++;
  const at = new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString();
  return {
    id: `e${n}-${Math.random().toString(36).slice(2, 8)}`,
    user_id: user,
    session_id: 's1',
    role: 'user',
    name: null,
    kind: 'turn',
    content,
    content_hash: contentHash(content),
    importance: 0.5,
    pinned: false,
    metadata: null,
    covers: null,
    created_at: at,
    updated_at: at,
    ...extra,
  };
}

/** The contract every LongTermStore passes (see its doc comment). */
/** The turn log beside the store (same database), for `persistTurn`'s in-transaction check. */
export interface TurnLogSide {
  append(turn: Turn): void | Promise<void>;
  delete(userId: string, id: string): void | Promise<void>;
  updateContent(userId: string, id: string, content: string): void | Promise<void>;
}

export function longTermContract(name: string, make: () => Promise<LongTermStore>, withTurnLog: () => Promise<{ store: LongTermStore; turns: TurnLogSide }>): void {
  describe(`LongTermStore contract: ${name}`, () => {
    const uid = () => `u-${Math.random().toString(36).slice(2)}`;

    it('upserts idempotently by (user, id); equal text under another id is an entry of its own', async () => {
      const s = await make();
      const u = uid();
      const e = entry(u, 'I moved to Porto in March');
      assert.deepEqual(await s.upsert([e]), [e.id]);
      assert.deepEqual(await s.upsert([e]), []);
      const again = entry(u, '  i moved to PORTO in march ');
      assert.deepEqual(await s.upsert([again]), [again.id], 'same text, other id: stored under its own id, never hidden');
      assert.equal((await s.upsert([entry(uid(), 'I moved to Porto in March')])).length, 1, 'another user may hold the same text');
      assert.equal(await s.count(u), 2);
      assert.deepEqual(await s.get(u, e.id), e);
      assert.deepEqual(await s.get(u, again.id), again);
    });

    it('scopes ids to their user: two users hold the same id, and neither reaches the other\'s', async () => {
      const s = await make();
      const [alice, bob] = [uid(), uid()];
      const a = entry(alice, 'alice says tea', { id: 'shared-1' });
      const b = entry(bob, 'bob says coffee', { id: 'shared-1' });
      assert.deepEqual(await s.upsert([a, b]), ['shared-1', 'shared-1']);
      assert.equal((await s.get(alice, 'shared-1'))?.content, 'alice says tea');
      assert.equal((await s.get(bob, 'shared-1'))?.content, 'bob says coffee');
      assert.equal(await s.update(alice, 'shared-1', { importance: 0.9 }).then((e) => e?.importance), 0.9);
      assert.equal((await s.get(bob, 'shared-1'))?.importance, 0.5, "alice's edit leaves bob's entry alone");
      assert.equal(await s.delete(alice, ['shared-1']), 1);
      assert.equal((await s.get(bob, 'shared-1'))?.content, 'bob says coffee', "alice's delete leaves bob's entry alone");
    });

    it('ranks text matches by BM25 over content and name, scoped to the user', async () => {
      const s = await make();
      const [u, other] = [uid(), uid()];
      await s.upsert([
        entry(u, 'My dog Rex loves the beach'),
        entry(u, 'Rex Rex Rex is the dog we adopted, Rex'),
        entry(u, 'The meeting moved to Friday', { name: 'Dolores' }),
        entry(other, 'Rex belongs to someone else'),
      ]);
      const hits = await s.searchText(u, 'Rex', { limit: 10 });
      assert.equal(hits.length, 2);
      assert.ok(hits.every((h) => h.entry.user_id === u));
      assert.ok(hits[0]!.bm25 >= hits[1]!.bm25 && hits[1]!.bm25 > 0);
      assert.equal((await s.searchText(u, 'what did Dolores say', { limit: 10 }))[0]?.entry.name, 'Dolores');
      for (const q of ['"', '*', 'NEAR(', 'OR', '-rex', 'a AND', "'; DROP TABLE entries; --", '']) {
        await s.searchText(u, q, { limit: 5 }); // must not throw: user text is never FTS syntax
      }
      assert.equal((await s.searchText(u, '-rex', { limit: 5 })).length, 2);
    });

    it("ranks and scores a user's entries by that user's entries alone: another user's words change nothing", async () => {
      const s = await make();
      const alice = uid();
      // bob's id shares alice's words (a store narrowing the search by the id's words must still count alice's rows only)
      const bob = `${alice.slice(2)}-u-bob`;
      const texts = [
        'the zebracorn painting hangs in the hallway',
        'we took the night ferry to the harbour',
        'a zebracorn sticker on the ferry ticket',
        'groceries: oat milk, rice, lemons',
        'the harbour festival has a zebracorn parade with a long route around the old town and the docks',
        'booked the ferry',
      ];
      await s.upsert(texts.map((t, i) => entry(alice, t, { created_at: new Date(Date.UTC(2026, 1, 1 + i)).toISOString() })));
      const ask = async () =>
        Promise.all(
          [{}, { where: { created_before: '2026-02-05T00:00:00.000Z' } }, { where: { roles: ['user' as const] } }].map(async (o) =>
            (await s.searchText(alice, 'zebracorn ferry harbour parade', { limit: 10, ...o })).map((h) => [h.entry.id, h.bm25]),
          ),
        );
      const before = await ask();
      assert.ok(before[0]!.length >= 4, 'alice finds her own entries');
      // bob stores the query's words, often and in texts of every length
      await s.upsert(
        Array.from({ length: 40 }, (_, i) =>
          entry(bob, `${'zebracorn '.repeat(1 + (i % 3))}harbour ${i % 2 ? 'ferry parade ' : ''}${'filler words here '.repeat(i % 7)}`),
        ),
      );
      assert.deepEqual(await ask(), before, 'same entries, same order, same scores');
      await s.deleteWhere(bob);
      assert.deepEqual(await ask(), before);
    });

    it("leaves a user's common words out while a rarer one matches, never a speaker's name", async () => {
      const s = await make();
      const u = uid();
      // 60 entries: "everyday" in 40 of them (common from 10), "narwhal" in 3, Ann the speaker of 30
      await s.upsert(
        Array.from({ length: 60 }, (_, i) =>
          entry(u, `${i < 40 ? 'everyday ' : ''}${['kettle', 'window', 'bicycle'][i % 3]}${i % 20 === 0 ? ' narwhal' : ''}`, { name: i % 2 ? 'Ann' : null }),
        ),
      );
      const ask = async (q: string, speakerTerms: string[] = []) => (await s.searchText(u, q, { limit: 10, speakerTerms })).map((h) => [h.entry.id, h.bm25]);
      const rare = await ask('narwhal');
      assert.equal(rare.length, 3);
      assert.deepEqual(await ask('narwhal everyday'), rare, 'the common word adds nothing while the rare one matches');
      assert.equal((await ask('everyday')).length, 10, 'nothing rarer: the common word is searched');
      const named = await ask('narwhal ann', ['ann']);
      assert.equal(named.length, 10, "the speaker's name kept: Ann's 30 turns match too");
    });

    it("scores each hit's session as one document when asked (bySession), by the user's own sessions", async () => {
      const s = await make();
      const [u, other] = [uid(), uid()];
      const at = (day: number) => new Date(Date.UTC(2026, 1, day)).toISOString();
      const trip = ['I booked the ferry to Naxos', 'Two ferry tickets, window seats', 'A hotel in Naxos near the port', 'Ferry leaves at seven'].map((c, i) => entry(u, c, { session_id: 'trip', created_at: at(1 + i) }));
      const once = ['Lunch with Sam at noon', 'Sam mentioned Naxos once', 'The dentist moved to Friday'].map((c) => entry(u, c, { session_id: 'once', created_at: at(10) }));
      const rest = ['Gym at six', 'Watered the plants', 'Called my sister'].map((c, i) => entry(u, c, { session_id: `s${i}`, created_at: at(12) }));
      await s.upsert([...trip, ...once, ...rest]);
      const ask = async (o: { bySession?: boolean; createdBefore?: string } = {}) => s.searchText(u, 'Naxos ferry hotel', { limit: 10, ...o });
      assert.ok((await ask()).every((h) => h.session_bm25 === undefined), 'not asked: not given');
      const hits = await ask({ bySession: true });
      const of = (session: string) => hits.filter((h) => h.entry.session_id === session).map((h) => h.session_bm25!);
      assert.equal(new Set(of('trip')).size, 1, "one score for the session's hits");
      assert.ok(of('trip')[0]! > of('once')[0]! && of('once')[0]! > 0, `trip ${of('trip')[0]} above once ${of('once')[0]}`);
      // the search's conditions hold for the session's words too: the trip's first day alone scores less
      const early = await ask({ bySession: true, createdBefore: at(2) });
      assert.deepEqual(early.map((h) => h.entry.id), [trip[0]!.id]);
      assert.ok(early[0]!.session_bm25! > 0 && early[0]!.session_bm25! < of('trip')[0]!);
      // another user's sessions, with the same words and session ids, change no score of this user's
      await s.upsert(['Naxos ferry hotel', 'ferry ferry', 'Naxos'].map((c) => entry(other, c, { session_id: 'once' })));
      assert.deepEqual((await ask({ bySession: true })).map((h) => [h.entry.id, h.session_bm25]), hits.map((h) => [h.entry.id, h.session_bm25]));
      // a session's length follows its entries: without its filler, "once" is shorter and scores more
      await s.delete(u, [once[0]!.id, once[2]!.id]);
      const shorter = (await ask({ bySession: true })).find((h) => h.entry.session_id === 'once')!;
      assert.ok(shorter.session_bm25! > of('once')[0]!, `${shorter.session_bm25} after, ${of('once')[0]} before`);
    });

    it('scores expansion words beside the query, each by its weight, in entries and sessions', async () => {
      const s = await make();
      const [u, other] = [uid(), uid()];
      const budget = entry(u, 'The budget for the kitchen renovation', { session_id: 'kitchen' });
      const tiles = entry(u, 'Tiles and cabinets quoted at four thousand', { session_id: 'kitchen' });
      const garden = entry(u, 'The budget for the garden fence', { session_id: 'garden' });
      const filler = ['Gym at six', 'Watered the plants', 'Called my sister'].map((c, i) => entry(u, c, { session_id: `s${i}` }));
      await s.upsert([budget, tiles, garden, ...filler]);
      const ask = (expansion?: Array<{ word: string; weight: number }>) => s.searchText(u, 'budget', { limit: 10, bySession: true, ...(expansion ? { expansion } : {}) });
      const plain = await ask();
      assert.deepEqual(new Set(plain.map((h) => h.entry.id)), new Set([budget.id, garden.id]), 'the query alone: its own matches');
      const expanded = await ask([{ word: 'cabinets', weight: 0.5 }]);
      assert.deepEqual(new Set(expanded.map((h) => h.entry.id)), new Set([budget.id, garden.id, tiles.id]), 'an expansion word finds its own matches');
      const score = (hits: TextHit[], id: string) => hits.find((h) => h.entry.id === id)!;
      assert.ok(score(expanded, budget.id).session_bm25! > score(expanded, garden.id).session_bm25!, "the session holding the expansion word scores above the other");
      assert.equal(score(expanded, budget.id).bm25, score(plain, budget.id).bm25, "an entry without the expansion word keeps its score");
      const heavier = await ask([{ word: 'cabinets', weight: 2 }]);
      assert.ok(Math.abs(score(heavier, tiles.id).bm25 - 4 * score(expanded, tiles.id).bm25) < 1e-9, `weight 2 counts four times weight 0.5: ${score(heavier, tiles.id).bm25} / ${score(expanded, tiles.id).bm25}`);
      assert.equal(heavier[0]!.entry.id, tiles.id, 'a heavy expansion word outranks the query word');
      const alone = await s.searchText(u, '', { limit: 10, expansion: [{ word: 'cabinets', weight: 1 }] });
      assert.deepEqual(alone.map((h) => h.entry.id), [tiles.id], 'an empty query: the expansion words alone');
      // a word of the query and of the expansion counts 1 + its weight
      const both = await ask([{ word: 'budget', weight: 1 }]);
      assert.ok(Math.abs(score(both, garden.id).bm25 - 2 * score(plain, garden.id).bm25) < 1e-9);
      // another user's entries with the expansion word change nothing
      await s.upsert([entry(other, 'cabinets cabinets cabinets', { session_id: 'kitchen' })]);
      assert.deepEqual((await ask([{ word: 'cabinets', weight: 0.5 }])).map((h) => [h.entry.id, h.bm25, h.session_bm25]), expanded.map((h) => [h.entry.id, h.bm25, h.session_bm25]));
    });

    it('matches a speaker term in who said an entry, not in entries that mention the name', async () => {
      const s = await make();
      const u = uid();
      const said = entry(u, 'I painted a sunrise over the lake', { name: 'Melanie' });
      await s.upsert([entry(u, 'Melanie, that painting of yours is lovely!', { name: 'Caroline' }), said, entry(u, 'Melanie Melanie Melanie painted again', { name: 'Caroline' })]);
      const asText = await s.searchText(u, 'What has Melanie painted?', { limit: 10 });
      assert.equal(asText.length, 3, 'as a plain word the name matches every entry holding it');
      const bySpeaker = await s.searchText(u, 'What has Melanie painted?', { limit: 10, speakerTerms: ['melanie'] });
      assert.equal(bySpeaker[0]?.entry.id, said.id, 'Melanie\'s own turn first');
      assert.ok(bySpeaker.slice(1).every((h) => h.bm25 < bySpeaker[0]!.bm25));
      const onlyName = await s.searchText(u, 'Melanie', { limit: 10, speakerTerms: ['melanie'] });
      assert.deepEqual(onlyName.map((h) => h.entry.id), [said.id], 'a speaker term alone matches only what the speaker said');
    });

    it('names the participants of the user\'s newest entries, each once, as recent would give them', async () => {
      const s = await make();
      assert.ok(s.participants, 'participants is implemented (the retrieval pass reads 200 whole entries without it)');
      const [u, other] = [uid(), uid()];
      const at = (m: number) => ({ created_at: new Date(Date.UTC(2026, 2, 1) + m * 60_000).toISOString() });
      await s.upsert([
        entry(u, 'the oldest', { name: 'Oldie', ...at(0) }),
        entry(u, 'hello', { name: 'Melanie', ...at(1) }),
        entry(u, 'no name', at(2)),
        entry(u, 'empty name', { name: '', ...at(3) }),
        entry(u, 'again', { name: 'Melanie', ...at(4) }),
        entry(u, 'hi', { name: 'Caroline', ...at(5) }),
        entry(other, 'elsewhere', { name: 'Stranger', ...at(6) }),
      ]);
      assert.deepEqual((await s.participants(u, 5)).sort(), ['Caroline', 'Melanie']);
      const fromRecent = new Set((await s.recent(u, { limit: 6 })).flatMap((e) => (e.name ? [e.name] : [])));
      assert.deepEqual((await s.participants(u, 6)).sort(), [...fromRecent].sort());
      assert.deepEqual(await s.participants(uid(), 5), []);
    });

    it('matches %, _ and \\ literally in substring search', async () => {
      const s = await make();
      const u = uid();
      await s.upsert([entry(u, 'a 100% sure thing'), entry(u, 'a 1000 sure thing'), entry(u, 'snake_case here'), entry(u, 'snakeXcase here'), entry(u, 'back\\slash')]);
      assert.deepEqual((await s.searchSubstring(u, '100%', { limit: 10 })).map((e) => e.content), ['a 100% sure thing']);
      assert.deepEqual((await s.searchSubstring(u, 'e_c', { limit: 10 })).map((e) => e.content), ['snake_case here']);
      assert.deepEqual((await s.searchSubstring(u, 'k\\s', { limit: 10 })).map((e) => e.content), ['back\\slash']);
      assert.equal((await s.searchSubstring(u, '%', { limit: 10 })).length, 1);
    });

    it('lists recent entries newest first, by session', async () => {
      const s = await make();
      const u = uid();
      await s.upsert([entry(u, 'first'), entry(u, 'second', { session_id: 's2' }), entry(u, 'third')]);
      assert.deepEqual((await s.recent(u, { limit: 2 })).map((e) => e.content), ['third', 'second']);
      assert.deepEqual((await s.recent(u, { limit: 10, sessionId: 's1' })).map((e) => e.content), ['third', 'first']);
    });

    it('updates text (and its index), importance and pin', async () => {
      const s = await make();
      const u = uid();
      const e = entry(u, 'likes tea');
      await s.upsert([e]);
      const updated = await s.update(u, e.id, { content: 'likes coffee', importance: 0.9, pinned: true });
      assert.equal(updated?.content, 'likes coffee');
      assert.equal(updated?.content_hash, contentHash('likes coffee'));
      assert.equal(updated?.importance, 0.9);
      assert.equal(updated?.pinned, true);
      assert.equal((await s.searchText(u, 'tea', { limit: 5 })).length, 0);
      assert.equal((await s.searchText(u, 'coffee', { limit: 5 })).length, 1);
      assert.equal(await s.update(u, 'missing', { importance: 0.1 }), null);
      assert.equal(await s.update(uid(), e.id, { importance: 0.1 }), null, 'another user has no such id');
    });

    it('prunes by age, importance and session, never a pinned entry', async () => {
      const s = await make();
      const u = uid();
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      const a = entry(u, 'old low', { created_at: old, importance: 0.1 });
      const b = entry(u, 'old pinned', { created_at: old, importance: 0.1, pinned: true });
      const c = entry(u, 'new low', { created_at: new Date().toISOString(), importance: 0.1 });
      const d = entry(u, 'new high', { created_at: new Date().toISOString(), importance: 0.9, session_id: 's9' });
      await s.upsert([a, b, c, d]);
      assert.deepEqual(await s.prune({ userId: u }), [], 'no criterion prunes nothing');
      const ids = (refs: Array<{ id: string }>) => refs.map((r) => r.id);
      assert.deepEqual(ids(await s.prune({ userId: u, olderThanDays: 30 })), [a.id]);
      assert.deepEqual(ids(await s.prune({ userId: u, belowImportance: 0.5 })), [c.id]);
      assert.deepEqual(await s.prune({ userId: u, sessionId: 's9' }), [{ user_id: u, id: d.id, session_id: 's9' }]);
      assert.deepEqual((await s.recent(u, { limit: 10 })).map((e) => e.id), [b.id]);
    });

    it('deletes by id and by user or session', async () => {
      const s = await make();
      const u = uid();
      const [a, b, c] = [entry(u, 'a1'), entry(u, 'b1', { session_id: 's2' }), entry(u, 'c1', { pinned: true })];
      await s.upsert([a, b, c]);
      assert.equal(await s.delete(uid(), [a.id]), 0, "another user's delete of the id removes nothing");
      assert.equal(await s.delete(u, [a.id, 'missing']), 1);
      assert.deepEqual(await s.deleteWhere(u, 's2'), [b.id]);
      assert.deepEqual(await s.deleteWhere(u), [c.id]);
      assert.equal(await s.count(u), 0);
    });

    it('persistTurn writes a turn\'s entry only while the turn log holds that turn with that text', async () => {
      const { store: s, turns } = await withTurnLog();
      const u = uid();
      const e = entry(u, 'I was born in Lisbon');
      const turn: Turn = { id: e.id, user_id: u, session_id: e.session_id, role: e.role, name: null, content: e.content, content_hash: e.content_hash, created_at: e.created_at, importance: null, pinned: false, metadata: null };
      assert.equal(await s.persistTurn(e), false, 'no turn logged: nothing written');
      assert.equal(await s.get(u, e.id), null);
      await turns.append(turn);
      assert.equal(await s.persistTurn({ ...e, user_id: uid() }), false, "another user's equal id is not this turn");
      await turns.updateContent(u, e.id, 'I was born in Porto');
      assert.equal(await s.persistTurn(e), false, 'edited since: the old text is not written');
      await turns.updateContent(u, e.id, e.content);
      assert.equal(await s.persistTurn(e), true);
      assert.equal((await s.get(u, e.id))?.content, e.content);
      await s.delete(u, [e.id]);
      await turns.delete(u, e.id);
      assert.equal(await s.persistTurn(e), false, 'deleted since: nothing comes back');
      assert.equal(await s.get(u, e.id), null);
    });

    it('persistTurn of one long text for two users at once indexes each under its own user, and a turn not written leaves nothing behind', async () => {
      const { store: s, turns } = await withTurnLog();
      const [a, b, c] = [uid(), uid(), uid()];
      // over 4,000 characters (what the SQLite store prepares before its write), a rare pair at its end
      const long = `${'We compared the ferry timetable with the bus routes along the coast again. '.repeat(70)}Then the quokka from Zanzibar.`;
      const [ea, eb, ec] = [a, b, c].map((u) => entry(u, long));
      const logged = (e: MemoryEntry): Turn => ({ id: e.id, user_id: e.user_id, session_id: e.session_id, role: e.role, name: null, content: e.content, content_hash: e.content_hash, created_at: e.created_at, importance: null, pinned: false, metadata: null });
      // c's turn is not logged: its write is refused after its text was prepared
      await turns.append(logged(ea!));
      await turns.append(logged(eb!));
      assert.deepEqual(await Promise.all([s.persistTurn(ec!), s.persistTurn(ea!), s.persistTurn(eb!)]), [false, true, true]);
      for (const [u, e] of [[a, ea!], [b, eb!]] as const) {
        const hits = await s.searchText(u, 'zanzibar quokka', { limit: 5 });
        assert.deepEqual(hits.map((h) => h.entry.id), [e.id], `${u} finds its own copy by the words at its end, and only that`);
      }
      assert.deepEqual(await s.searchText(c, 'zanzibar quokka', { limit: 5 }), [], 'the refused write indexed nothing');
      // the same text written later for c, whose prepared copy was never used
      await s.upsert([ec!]);
      assert.deepEqual((await s.searchText(c, 'zanzibar quokka', { limit: 5 })).map((h) => h.entry.id), [ec!.id]);
      assert.deepEqual((await s.searchText(a, 'zanzibar quokka', { limit: 5 })).map((h) => h.entry.id), [ea!.id], "a's search does not reach c's copy");
    });

    it('applies a retrieval filter in searchText, searchSubstring and recent, before the limit', async () => {
      const s = await make();
      const u = uid();
      const entries = FILTER_RECORDS.map((r) =>
        entry(u, `the harbour ferry timetable, note ${r.rank}`, { session_id: r.session_id, role: r.role, kind: r.kind, created_at: r.created_at, updated_at: r.created_at, metadata: r.metadata }),
      );
      await s.upsert(entries);
      await s.upsert([entry(uid(), 'the harbour ferry timetable of someone else', { metadata: { topic: 'work' } })]);
      const k = 3;
      for (const c of FILTER_CASES) {
        const want = new Set(c.matching.map((r) => entries[r.rank]!.id));
        const label = `${c.name}: ${JSON.stringify(c.filter)}`;
        const text = (await s.searchText(u, 'harbour ferry', { limit: k, where: c.filter })).map((h) => h.entry);
        const like = await s.searchSubstring(u, 'ferry timetable', { limit: k, where: c.filter });
        const recent = await s.recent(u, { limit: k, where: c.filter });
        for (const [what, got] of [['searchText', text], ['searchSubstring', like], ['recent', recent]] as const) {
          assert.equal(got.length, Math.min(k, want.size), `${what}, ${label}`);
          for (const e of got) assert.ok(want.has(e.id), `${what}, ${label}: ${e.id} does not match`);
        }
        // recent is ordered by time: exactly the newest k matching
        assert.deepEqual(recent.map((e) => e.id), [...c.matching].reverse().slice(0, k).map((r) => entries[r.rank]!.id), `recent, ${label}`);
        for (const e of text) assert.deepEqual(e.metadata, FILTER_RECORDS[entries.findIndex((x) => x.id === e.id)]!.metadata);
      }
    });

    it('merges its text index: every search answers as before, and nothing is left to merge', async () => {
      const s = await make();
      const u = uid();
      // one write a commit, as persist jobs write: each leaves a piece of the index to merge
      for (let i = 0; i < 40; i++) await s.upsert([entry(u, `note ${i} about the ${['harbour ferry', 'violin lesson', 'garden budget', 'night shift'][i % 4]} ${'and more '.repeat(i % 3)}`)]);
      const ask = () => Promise.all(['harbour', 'violin budget', 'night ferry', 'note'].map((q) => s.searchText(u, q, { limit: 10 })));
      const before = await ask();
      assert.ok(before.every((hits) => hits.length > 0));
      const merged = await s.mergeTextIndex();
      assert.ok(merged.parts_after <= 1 && merged.parts_after <= merged.parts_before, JSON.stringify(merged));
      assert.ok(merged.ms >= 0);
      assert.deepEqual(await ask(), before);
      const again = await s.mergeTextIndex();
      assert.ok(again.parts_before <= 1, `merged already: ${JSON.stringify(again)}`);
    });
  });
}
