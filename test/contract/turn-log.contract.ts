import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { contentHash } from '../../src/domain/hash.js';
import { turnInputSchema, type Turn } from '../../src/domain/turn.js';
import { ContentConflictError } from '../../src/errors.js';
import { turn } from '../helpers/turns.js';
import type { TurnLog } from '../../src/ports/turn-log.js';

export interface TurnLogHarness {
  log: TurnLog;
  /** whether the user's turn is committed, as another connection to the store sees it */
  committed(userId: string, id: string): Promise<boolean>;
}

async function all(pages: AsyncIterable<Turn[]>): Promise<Turn[][]> {
  const out: Turn[][] = [];
  for await (const p of pages) out.push(p);
  return out;
}

const ids = (turns: readonly Turn[]) => turns.map((t) => t.id);

/**
 * The contract every TurnLog passes (see the port's doc comment, src/ports/turn-log.ts). `make` may
 * hand every test the same store: each test uses users of its own, and what spans users (`scan`,
 * `pending`, `counts`) is checked on those users' turns and by differences.
 */
export function runTurnLogContract(name: string, make: () => Promise<TurnLogHarness>): void {
  describe(`TurnLog contract: ${name}`, () => {
    const user = () => `user-${randomUUID().slice(0, 12)}`;

    it('stores an appended turn unchanged and reads it back by user and id', async () => {
      const { log } = await make();
      const a = user();
      const t = turn(a, 's', 'My sister Ana is a nurse in Porto.', {
        role: 'assistant',
        name: 'Dolores',
        importance: 0.7,
        pinned: true,
        metadata: { source: 'whatsapp', tags: ['family', 'work'], nested: { n: 1.5, ok: true, none: null } },
      });
      const plain = turn(a, 's', 'plain');
      assert.deepEqual(await log.append([t, plain]), { accepted: [t, plain], duplicates: [] });
      assert.deepEqual(await log.get(a, t.id), t);
      assert.deepEqual(await log.get(a, plain.id), plain);
      assert.equal(await log.get(a, 'no-such-id'), null);
      assert.equal(await log.get(user(), t.id), null, 'another user does not see it');
      assert.deepEqual(await log.append([]), { accepted: [], duplicates: [] });
    });

    it('round-trips every metadata the input schema accepts, and the schema refuses what a store cannot hold', async () => {
      const { log } = await make();
      const a = user();
      const input = turnInputSchema(1000);
      const candidates: Array<Record<string, unknown>> = [
        { quote: 'she said "hi" \\ then left', emoji: '😀 café 中文', tab: 'a\tb\nc', control: 'bell\u0007' },
        { deep: { list: [1, -0.5, 1e21, true, null, [], {}], '': 'empty key' } },
        { nul: 'a\u0000b' },
        { 'key\u0000': 1 },
        { lone: ['ok', '\ud800'] },
        { pair: '\ud83d\ude00' },
      ];
      let refused = 0;
      for (const metadata of candidates) {
        const parsed = input.safeParse({ session_id: 's', role: 'user', content: 'x', metadata });
        if (!parsed.success) {
          refused++;
          assert.ok(parsed.error.issues.every((i) => i.path[0] === 'metadata' && i.path.length > 1), 'the issue names where in the metadata');
          continue;
        }
        const t = turn(a, 's', `with ${JSON.stringify(metadata)}`, { metadata: parsed.data.metadata ?? null });
        await log.append([t]);
        assert.deepEqual(await log.get(a, t.id), t, JSON.stringify(metadata));
      }
      assert.equal(refused, 3, 'U+0000 (in a value or a key) and an unpaired surrogate are refused');
    });

    it('acknowledges each of many concurrent appends only once it is committed, and a failing one fails alone', async () => {
      const { log, committed } = await make();
      const a = user();
      const held = turn(a, 's', 'held');
      await log.append([held]);
      const turns = Array.from({ length: 40 }, (_, i) => turn(a, 's', `concurrent ${i}`));
      const seenAtAck: boolean[] = [];
      const results = await Promise.allSettled([
        ...turns.map((t, i) => log.append([t]).then(async (r) => ((seenAtAck[i] = await committed(a, t.id)), r))),
        log.append([{ ...held, content: 'other text under a held id' }]),
      ]);
      const rejected = results.filter((r) => r.status === 'rejected');
      assert.equal(rejected.length, 1, 'only the conflicting append fails');
      assert.ok((rejected[0] as PromiseRejectedResult).reason instanceof ContentConflictError);
      assert.equal(seenAtAck.filter(Boolean).length, 40, 'every acknowledged turn was visible to another connection when its append resolved');
      for (const [i, r] of results.slice(0, 40).entries()) assert.deepEqual((r as PromiseFulfilledResult<unknown>).value, { accepted: [turns[i]], duplicates: [] });
      assert.equal((await log.session(a, 's')).length, 41);
    });

    it('stores a re-sent turn once and reports it as a duplicate, within a batch and across appends', async () => {
      const { log } = await make();
      const a = user();
      const t = turn(a, 's', 'once');
      const before = (await log.counts()).total;
      assert.deepEqual(await log.append([t, { ...t }]), { accepted: [t], duplicates: [t.id] });
      // a re-send: the same turn, even with another created_at (a missing one is "now" each time)
      const again = { ...t, created_at: new Date(Date.UTC(2026, 5, 1)).toISOString() };
      const fresh = turn(a, 's', 'new in the retry');
      assert.deepEqual(await log.append([again, fresh]), { accepted: [fresh], duplicates: [t.id] });
      assert.deepEqual(await log.get(a, t.id), t, 'the first write stands');
      assert.equal((await log.counts()).total - before, 2);
    });

    it('settles concurrent appends of one new id (two API processes) as one write and a duplicate or a conflict', async () => {
      const { log } = await make();
      const a = user();
      const t = turn(a, 's', 'sent twice at once');
      const both = await Promise.all([log.append([t]), log.append([{ ...t }])]);
      assert.deepEqual(both.map((r) => [r.accepted.length, r.duplicates.length]).sort(), [[0, 1], [1, 0]]);
      const u = turn(a, 's', 'one text');
      const raced = await Promise.allSettled([log.append([u]), log.append([{ ...u, content: 'another text' }])]);
      assert.deepEqual(raced.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
      const lost = raced.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.ok(lost.reason instanceof ContentConflictError && lost.reason.id === u.id);
      const stored = await log.get(a, u.id);
      assert.ok(stored && (stored.content === 'one text' || stored.content === 'another text'), 'the winner is stored whole');
      assert.equal((await log.session(a, 's')).length, 2);
    });

    it('refuses an id the user holds with other content, naming it, and writes nothing of the batch', async () => {
      const { log } = await make();
      const a = user();
      const t = turn(a, 's', 'original', { name: 'Ana' });
      await log.append([t]);
      for (const change of [{ content: 'changed' }, { session_id: 's2' }, { role: 'assistant' as const }, { name: null }, { name: 'Bea' }]) {
        const other = turn(a, 's', 'innocent bystander');
        await assert.rejects(log.append([other, { ...t, ...change }]), (err: unknown) => {
          assert.ok(err instanceof ContentConflictError, `${JSON.stringify(change)}: ${(err as Error).name}`);
          assert.equal(err.id, t.id);
          assert.equal(err.code, 'content_conflict');
          assert.equal(err.index, 1, 'its position in the batch');
          return true;
        });
        assert.equal(await log.get(a, other.id), null, `${JSON.stringify(change)}: nothing of the batch written`);
      }
      // two different turns under one new id in the same batch
      const n = turn(a, 's', 'first');
      await assert.rejects(log.append([n, { ...n, content: 'second' }]), (err: unknown) => err instanceof ContentConflictError && err.id === n.id && err.index === 1);
      assert.equal(await log.get(a, n.id), null);
      assert.deepEqual(await log.get(a, t.id), t);
    });

    it('reads many turns at once with getMany: each ref answered in order, null where unknown, users kept apart', async () => {
      const { log } = await make();
      const [a, b] = [user(), user()];
      const ta = turn(a, 's', 'alice: my bike is red', { metadata: { tags: ['bike'] } });
      const tb = turn(b, 's', 'bob says the same id', { id: ta.id });
      const ta2 = turn(a, 's2', 'alice again', { name: 'Al', pinned: true });
      await log.append([ta, tb, ta2]);
      assert.deepEqual(
        await log.getMany([
          { user_id: a, id: ta2.id },
          { user_id: b, id: ta.id },
          { user_id: a, id: 'no-such-id' },
          { user_id: a, id: ta.id },
          { user_id: b, id: ta2.id },
          { user_id: a, id: ta.id },
        ]),
        [ta2, tb, null, ta, null, ta],
      );
      assert.deepEqual(await log.getMany([]), []);
      await log.delete(a, [ta.id]);
      assert.deepEqual(await log.getMany([{ user_id: a, id: ta.id }, { user_id: b, id: ta.id }]), [null, tb], 'a deleted turn is gone, the other user\'s stays');
    });

    it('gives versions (text hash and session) as getMany gives turns: in order, null where unknown, users kept apart, an edit seen', async () => {
      const { log } = await make();
      const [a, b] = [user(), user()];
      const ta = turn(a, 's', 'alice: my bike is red');
      const tb = turn(b, 's9', 'bob says the same id', { id: ta.id });
      await log.append([ta, tb]);
      const version = (t: Turn) => ({ content_hash: t.content_hash, session_id: t.session_id });
      assert.deepEqual(
        await log.versions([{ user_id: b, id: ta.id }, { user_id: a, id: 'no-such-id' }, { user_id: a, id: ta.id }]),
        [version(tb), null, version(ta)],
      );
      assert.deepEqual(await log.versions([]), []);
      assert.equal(await log.updateContent(a, ta.id, 'alice: my bike is blue', 'hash-of-blue'), true);
      assert.deepEqual(await log.versions([{ user_id: a, id: ta.id }]), [{ content_hash: 'hash-of-blue', session_id: 's' }]);
      await log.delete(a, [ta.id]);
      assert.deepEqual(await log.versions([{ user_id: a, id: ta.id }, { user_id: b, id: ta.id }]), [null, version(tb)], 'a deleted turn is gone, the other user\'s stays');
    });

    it('keeps two users\' equal ids apart in every call', async () => {
      const { log } = await make();
      const [a, b] = [user(), user()];
      const ta = turn(a, 's', 'alice says', { id: 'shared-id' });
      const tb = turn(b, 's', 'bob says something else', { id: 'shared-id' });
      assert.deepEqual(await log.append([ta, tb]), { accepted: [ta, tb], duplicates: [] }, 'no conflict across users');
      assert.deepEqual(await log.get(a, 'shared-id'), ta);
      assert.deepEqual(await log.get(b, 'shared-id'), tb);
      assert.deepEqual(ids(await log.session(a, 's')), ['shared-id']);
      assert.equal((await log.session(a, 's'))[0]!.content, 'alice says');

      assert.equal(await log.updateContent(a, 'shared-id', 'alice edited', contentHash('alice edited')), true);
      assert.equal((await log.get(b, 'shared-id'))!.content, 'bob says something else');
      await log.markEmbedded(b, ['shared-id'], 'model-x');
      await log.markPersisted(b, 'shared-id', 0.5);
      assert.equal(await log.unfinished([{ user_id: a, id: 'shared-id' }], true), 1, "alice's turn is still pending");
      assert.equal(await log.unfinished([{ user_id: b, id: 'shared-id' }], true), 0);

      assert.equal(await log.delete(a, ['shared-id']), 1);
      assert.equal(await log.get(a, 'shared-id'), null);
      assert.deepEqual(await log.get(b, 'shared-id'), { ...tb, importance: 0.5 }, "bob's is untouched");
      assert.equal(await log.deleteWhere(a), 0);
      assert.equal(await log.updateContent(a, 'shared-id', 'x', contentHash('x')), false, 'a deleted turn is unknown');
      assert.equal((await log.neighbours(a, ['shared-id'])).size, 0);
    });

    it('pages through every turn in acceptance order with scan', async () => {
      const { log } = await make();
      const a = user();
      const turns = Array.from({ length: 23 }, (_, i) => turn(a, `s${i % 3}`, `scan ${i}`, { created_at: new Date(Date.UTC(2025, 0, 23 - i)).toISOString() }));
      // acceptance order, not created_at order: accepted in three appends
      await log.append(turns.slice(0, 10));
      await log.append(turns.slice(10, 11));
      await log.append(turns.slice(11));
      const pages = await all(log.scan(7));
      assert.ok(pages.length > 0);
      for (const p of pages.slice(0, -1)) assert.equal(p.length, 7, 'every page but the last is full');
      assert.ok(pages.at(-1)!.length >= 1 && pages.at(-1)!.length <= 7);
      const mine = pages.flat().filter((t) => t.user_id === a);
      assert.deepEqual(mine, turns);
      assert.equal(pages.flat().length, (await log.counts()).total, 'scan covers every turn once');
      assert.equal(new Set(pages.flat().map((t) => `${t.user_id}\u0000${t.id}`)).size, pages.flat().length);

      await log.delete(a, [turns[0]!.id, turns[5]!.id]);
      const after = (await all(log.scan(1000))).flat().filter((t) => t.user_id === a);
      assert.deepEqual(ids(after), ids(turns.filter((_, i) => i !== 0 && i !== 5)), 'deleted turns are gone from the scan');
    });

    it('lists unfinished jobs for the reconciler until they are marked done, and an edit resets the embed', async () => {
      const { log } = await make();
      const a = user();
      const t0 = Date.now();
      const turns = Array.from({ length: 5 }, (_, i) => turn(a, 's', `pending ${i}`));
      await log.append(turns.slice(0, 4), t0);
      const late = turns[4]!;
      await log.append([late], t0 + 60_000);
      const pendingOf = async (job: 'embed' | 'persist' | 'any', before: number, batch?: number) =>
        (await all(log.pending(job, before, batch))).flat().filter((t) => t.user_id === a);

      assert.deepEqual(ids(await pendingOf('embed', t0)), ids(turns.slice(0, 4)), 'accepted at or before the cutoff, in acceptance order');
      assert.deepEqual(ids(await pendingOf('persist', t0 + 60_000)), ids(turns));
      assert.deepEqual(ids(await pendingOf('any', t0 - 1)), []);
      const pages = await all(log.pending('embed', t0, 3));
      for (const p of pages) assert.ok(p.length <= 3);
      assert.deepEqual(ids(pages.flat().filter((t) => t.user_id === a)), ids(turns.slice(0, 4)), 'paged without a gap or a repeat');
      assert.equal(await log.unfinished(turns, true), 5);

      await log.markEmbedded(a, [turns[0]!.id, turns[1]!.id], 'model-x');
      await log.markPersisted(a, turns[1]!.id, 0.25);
      await Promise.all([log.markPersisted(a, turns[2]!.id, 0.5), log.markPersisted(a, turns[3]!.id, 0.75)]);
      assert.deepEqual(ids(await pendingOf('embed', t0 + 60_000)), ids([turns[2]!, turns[3]!, late]));
      assert.deepEqual(ids(await pendingOf('persist', t0 + 60_000)), ids([turns[0]!, late]));
      assert.deepEqual(ids(await pendingOf('any', t0 + 60_000)), ids([turns[0]!, turns[2]!, turns[3]!, late]), 'either job still to run');
      assert.equal(await log.unfinished(turns, true), 4);
      assert.equal(await log.unfinished(turns, false), 2, 'embed not counted');
      assert.equal(await log.unfinished([turns[1]!], true), 0);
      assert.equal(await log.unfinished([], true), 0);

      assert.equal(await log.updateContent(a, turns[1]!.id, 'edited', contentHash('edited')), true);
      assert.deepEqual(ids(await pendingOf('embed', t0)), ids([turns[1]!, turns[2]!, turns[3]!]), 'an edit must be re-embedded');
      assert.deepEqual(ids(await pendingOf('persist', t0)), ids([turns[0]!]), 'its persist stays done');
      const edited = await log.get(a, turns[1]!.id);
      assert.equal(edited!.content, 'edited');
      assert.equal(edited!.content_hash, contentHash('edited'));
      assert.equal(await log.unfinished([{ user_id: user(), id: turns[0]!.id }], true), 0, 'an unknown ref is not unfinished');
    });

    it('records the importance a persist job scored only where the turn carried none', async () => {
      const { log } = await make();
      const a = user();
      const given = turn(a, 's', 'scored by the client', { importance: 0.9 });
      const none = turn(a, 's', 'scored by the job');
      await log.append([given, none]);
      await log.markPersisted(a, given.id, 0.1);
      await log.markPersisted(a, none.id, 0.4);
      assert.equal((await log.get(a, given.id))!.importance, 0.9);
      assert.equal((await log.get(a, none.id))!.importance, 0.4);
      await log.markPersisted(a, 'unknown', 0.3); // a deleted turn's late job: nothing to mark, no error
    });

    it('counts every turn and those with a job still to run', async () => {
      const { log } = await make();
      const a = user();
      const before = await log.counts();
      const turns = [turn(a, 's', 'c1'), turn(a, 's', 'c2'), turn(a, 's', 'c3')];
      await log.append(turns);
      await log.markEmbedded(a, [turns[0]!.id], 'model-x');
      await log.markPersisted(a, turns[0]!.id, 0.5);
      await log.markPersisted(a, turns[1]!.id, 0.5);
      const now = await log.counts();
      assert.deepEqual(
        { total: now.total - before.total, pending_embed: now.pending_embed - before.pending_embed, pending_persist: now.pending_persist - before.pending_persist },
        { total: 3, pending_embed: 2, pending_persist: 1 },
      );
    });

    it('gives a session oldest first, and the turns around one', async () => {
      const { log } = await make();
      const a = user();
      const at = (m: number) => new Date(Date.UTC(2025, 4, 1, 12, m)).toISOString();
      const [t1, t2, t3, t4] = [turn(a, 's', 'one', { created_at: at(1) }), turn(a, 's', 'two', { created_at: at(2) }), turn(a, 's', 'three', { created_at: at(3) }), turn(a, 's', 'four', { created_at: at(3) })];
      // accepted out of created_at order; equal times keep acceptance order
      await log.append([t3, t1]);
      await log.append([t4, t2, turn(a, 'other', 'elsewhere', { created_at: at(2) }), turn(user(), 's', 'someone else', { created_at: at(2) })]);
      assert.deepEqual(ids(await log.session(a, 's')), ids([t1, t2, t3, t4]));
      assert.deepEqual(await log.session(a, 'none'), []);
      const around = (m: Map<string, { before: Turn[]; after: Turn[] }>) => Object.fromEntries([...m].map(([id, n]) => [id, { before: ids(n.before), after: ids(n.after) }]));
      // several turns in one read, each around its own place; an id twice is read once
      assert.deepEqual(around(await log.neighbours(a, [t2.id, t1.id, t4.id, t2.id], 1, 2)), {
        [t2.id]: { before: [t1.id], after: [t3.id, t4.id] },
        [t1.id]: { before: [], after: [t2.id, t3.id] },
        [t4.id]: { before: [t3.id], after: [] },
      });
      assert.deepEqual(around(await log.neighbours(a, [t4.id], 5, 5)), { [t4.id]: { before: ids([t1, t2, t3]), after: [] } });
      // a session of one turn: known, with nothing around it
      const alone = (await log.session(a, 'other'))[0]!;
      assert.deepEqual(around(await log.neighbours(a, [alone.id, 'unknown'])), { [alone.id]: { before: [], after: [] } }, 'an unknown id is absent');
      assert.equal((await log.neighbours(a, [])).size, 0);
    });

    it('deletes for good: by id, by session, by user', async () => {
      const { log, committed } = await make();
      const [a, b] = [user(), user()];
      const turns = [turn(a, 's1', 'd1'), turn(a, 's1', 'd2'), turn(a, 's2', 'd3'), turn(a, 's3', 'd4'), turn(b, 's1', 'bob')];
      await log.append(turns);
      assert.equal(await log.delete(a, [turns[0]!.id, turns[0]!.id, 'unknown']), 1);
      assert.equal(await committed(a, turns[0]!.id), false, 'gone for every connection');
      assert.equal(await log.deleteWhere(a, 's1'), 1);
      assert.deepEqual(await log.session(a, 's1'), []);
      assert.equal(await log.deleteWhere(a), 2);
      assert.equal((await all(log.scan())).flat().filter((t) => t.user_id === a).length, 0);
      assert.equal((await all(log.pending('any', Date.now()))).flat().filter((t) => t.user_id === a).length, 0, 'no job of a deleted turn is re-enqueued');
      assert.deepEqual(ids(await log.session(b, 's1')), [turns[4]!.id]);
    });

    it('prunes the unpinned turns a prune matches, one user\'s or every user\'s, and returns which', async () => {
      const { log } = await make();
      const [a, b] = [user(), user()];
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      const recent = new Date(Date.now() - 86_400_000).toISOString();
      const oldA = turn(a, 's1', 'old', { created_at: old });
      const oldPinned = turn(a, 's1', 'old but pinned', { created_at: old, pinned: true });
      const recentA = turn(a, 's2', 'recent', { created_at: recent, importance: 0.1 });
      const oldB = turn(b, 's1', 'old of bob', { created_at: old });
      await log.append([oldA, oldPinned, recentA, oldB]);
      assert.deepEqual(await log.prune({ userId: a }), [], 'no criterion deletes nothing');
      const refs = (r: Array<{ user_id: string; id: string; session_id: string }>) => r.map((x) => `${x.user_id}/${x.id}/${x.session_id}`).sort();
      assert.deepEqual(refs(await log.prune({ userId: a, olderThanDays: 30 })), [`${a}/${oldA.id}/s1`]);
      assert.ok(await log.get(a, oldPinned.id), 'a pinned turn is kept');
      assert.ok(await log.get(b, oldB.id), "another user's turn is kept");
      assert.deepEqual(refs(await log.prune({ userId: a, belowImportance: 0.5 })), [`${a}/${recentA.id}/s2`]);
      const everyone = refs(await log.prune({ olderThanDays: 30, sessionId: 's1' })).filter((r) => r.startsWith(`${a}/`) || r.startsWith(`${b}/`));
      assert.deepEqual(everyone, [`${b}/${oldB.id}/s1`]);
      assert.deepEqual(ids(await log.session(a, 's1')), [oldPinned.id]);
    });
  });
}
