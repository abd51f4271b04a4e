import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Postgres } from '../../../src/adapters/postgres/pool.js';
import { PostgresLongTermStore } from '../../../src/adapters/postgres/long-term.js';
import { PostgresTurnLog } from '../../../src/adapters/postgres/turn-log.js';
import { contentHash } from '../../../src/domain/hash.js';
import type { Turn } from '../../../src/domain/turn.js';
import type { AppendResult } from '../../../src/ports/turn-log.js';
import { ContentConflictError } from '../../../src/errors.js';
import { sharedPostgres } from '../../helpers/postgres.js';

const pg = sharedPostgres();
let n = 0;
const uid = () => `u-${Math.random().toString(36).slice(2, 10)}`;
function turn(user: string, content: string, extra: Partial<Turn> = {}): Turn {
  n++;
  return {
    id: `t${n}`, user_id: user, session_id: 's1', role: 'user', name: null, content, content_hash: contentHash(content),
    created_at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(), importance: null, pinned: false, metadata: { n }, ...extra,
  };
}

describe('PostgreSQL turn log (real database)', () => {
  it('appends all or nothing; a re-send is a duplicate, other content under the same id a conflict; ids are per user', async () => {
    const log = new PostgresTurnLog(await pg());
    const [u, v] = [uid(), uid()];
    const [a, b] = [turn(u, 'first'), turn(u, 'second')];
    const r = await log.append([a, b, a]);
    assert.deepEqual(r.accepted.map((t) => t.id), [a.id, b.id]);
    assert.deepEqual(r.duplicates, [a.id]);
    assert.deepEqual((await log.append([a])).duplicates, [a.id]);
    const c = turn(u, 'third');
    await assert.rejects(log.append([c, { ...b, content: 'changed' }]), ContentConflictError);
    assert.equal(await log.get(u, c.id), null, 'nothing of a refused batch is written');
    assert.deepEqual((await log.append([{ ...a, user_id: v }])).accepted.length, 1, "another user's equal id is their own turn");
    assert.deepEqual(await log.get(u, a.id), a);
    // concurrent appends of one id (two API processes: two turn logs, two transactions): stored once
    const d = turn(u, 'raced');
    const both = await Promise.all([log.append([d]), new PostgresTurnLog(await pg()).append([d])]);
    assert.equal(both.filter((x) => x.accepted.length === 1).length, 1);
    assert.equal(both.filter((x) => x.duplicates.length === 1).length, 1);
  });

  it('tracks job state, pages what is pending, and reads neighbours in a session', async () => {
    const db = await pg();
    const log = new PostgresTurnLog(db);
    const u = uid();
    const turns = [turn(u, 'q: which hotel?', { role: 'assistant' }), turn(u, 'casa verde'), turn(u, 'thanks')];
    await log.append(turns, 1000);
    await Promise.all([log.markEmbedded(u, [turns[0]!.id], 'hash-v1'), log.markPersisted(u, turns[0]!.id, 0.4, 2000)]);
    const pending: string[] = [];
    for await (const page of log.pending('any', 1000, 1)) pending.push(...page.filter((t) => t.user_id === u).map((t) => t.id));
    assert.deepEqual(pending, [turns[1]!.id, turns[2]!.id]);
    assert.equal(await log.unfinished(turns.map((t) => ({ user_id: u, id: t.id })), true), 2);
    const around = await log.neighbours(u, [turns[1]!.id, 'absent']);
    assert.deepEqual([...around], [[turns[1]!.id, { before: [{ ...turns[0], importance: 0.4 }], after: [turns[2]] }]], 'the persist job recorded the importance it scored; an absent id has no entry');
    assert.ok(await log.updateContent(u, turns[0]!.id, 'edited', contentHash('edited')));
    assert.equal(await log.unfinished([{ user_id: u, id: turns[0]!.id }], true), 1, 'an edit resets the embed state');
    // persistTurn checks the turn log in its own statement
    const lt = new PostgresLongTermStore(db);
    const entry = { ...turns[1]!, kind: 'turn' as const, importance: 0.6, covers: null, updated_at: turns[1]!.created_at };
    assert.equal(await lt.persistTurn(entry), true);
    assert.equal(await lt.persistTurn({ ...entry, content_hash: 'stale' }), false);
    await log.delete(u, [turns[2]!.id]);
    assert.equal(await lt.persistTurn({ ...turns[2]!, kind: 'turn', importance: 0.6, covers: null, updated_at: turns[2]!.created_at }), false, 'a deleted turn never comes back as an entry');
    assert.deepEqual((await log.prune({ userId: u, belowImportance: 0.5 })).map((r) => r.id), [turns[0]!.id]);
    assert.equal(await log.deleteWhere(u), 1);
  });

  it('commits concurrent appends in one transaction, each all or nothing: a conflicting call rejects alone, with its own index', async () => {
    const db = await pg();
    const log = new PostgresTurnLog(db);
    const u = uid();
    const held = turn(u, 'already held');
    await log.append([held]);
    const [a, b, c] = [turn(u, 'a'), turn(u, 'b'), turn(u, 'c')];
    const begins: string[] = [];
    const connect = db.pool.connect.bind(db.pool);
    db.pool.connect = ((...args: []) => (begins.push('tx'), connect(...args))) as typeof db.pool.connect;
    let results: Array<PromiseSettledResult<AppendResult>>;
    try {
      results = await Promise.allSettled([log.append([a]), log.append([b, held]), log.append([c, { ...held, content: 'other text' }]), log.append([a])]);
    } finally {
      db.pool.connect = connect;
    }
    const [ra, rb, rc, again] = results as [PromiseSettledResult<AppendResult>, PromiseSettledResult<AppendResult>, PromiseSettledResult<AppendResult>, PromiseSettledResult<AppendResult>];
    assert.deepEqual(ra, { status: 'fulfilled', value: { accepted: [a], duplicates: [] } });
    assert.deepEqual(rb, { status: 'fulfilled', value: { accepted: [b], duplicates: [held.id] } });
    assert.equal(rc.status, 'rejected');
    const refused = (rc as PromiseRejectedResult).reason as unknown;
    assert.ok(refused instanceof ContentConflictError, String(refused));
    assert.equal(refused.index, 1, 'the index within its own call, not within the shared batch');
    assert.deepEqual(again, { status: 'fulfilled', value: { accepted: [], duplicates: [a.id] } }, 'the second call with an id is its duplicate');
    assert.equal(await log.get(u, c.id), null, 'nothing of the refused call is written');
    // one transaction for the four, then (the conflict) one connection per statement of each call alone:
    // [a] one INSERT, [b, held] and [c, held'] a transaction each, the second [a] its INSERT and the read
    // of the row it found held
    assert.equal(begins.length, 6, `connections: ${begins.length}`);
    const quiet = [turn(u, 'x'), turn(u, 'y'), turn(u, 'z')];
    begins.length = 0;
    db.pool.connect = ((...args: []) => (begins.push('tx'), connect(...args))) as typeof db.pool.connect;
    try {
      const r = await Promise.all(quiet.map((t) => log.append([t])));
      assert.deepEqual(r.map((x) => x.accepted), quiet.map((t) => [t]));
    } finally {
      db.pool.connect = connect;
    }
    assert.equal(begins.length, 1, 'three concurrent appends, one connection (one statement: appendSingles)');
  });

  it('writes concurrent single-turn appends with one statement and no explicit transaction; a duplicate or a conflict is answered per call', async () => {
    const db = await pg();
    const log = new PostgresTurnLog(db);
    const u = uid();
    const held = turn(u, 'held before');
    await log.append([held]);
    const [a, b, c] = [turn(u, 'a'), turn(u, 'b'), turn(u, 'c')];
    const statements: string[] = [];
    const query = db.pool.query.bind(db.pool);
    // a transaction (BEGIN, INSERT, COMMIT) runs on a checked-out client, never through pool.query
    db.pool.query = ((text: string, values?: unknown[]) => (statements.push(text), query(text, values))) as typeof db.pool.query;
    let quiet: AppendResult[];
    let mixed: Array<PromiseSettledResult<AppendResult>>;
    let counts: { quiet: number; mixed: number };
    try {
      quiet = await Promise.all([a, b].map((t) => log.append([t])));
      counts = { quiet: statements.length, mixed: 0 };
      assert.match(statements[0] ?? '', /^INSERT INTO turns/);
      statements.length = 0;
      mixed = await Promise.allSettled([
        log.append([c]),
        log.append([held]),
        log.append([{ ...held, content: 'other text' }]),
        log.append([c]),
        log.append([{ ...c, content: 'c, changed in the same batch' }]),
      ]);
      counts.mixed = statements.length;
    } finally {
      db.pool.query = query;
    }
    assert.deepEqual(quiet.map((r) => r.accepted), [[a], [b]]);
    assert.equal(counts.quiet, 1, 'two concurrent single-turn appends, one INSERT committing alone');
    const [rc, rHeld, rOther, rAgain, rChanged] = mixed;
    assert.deepEqual(rc, { status: 'fulfilled', value: { accepted: [c], duplicates: [] } });
    assert.deepEqual(rHeld, { status: 'fulfilled', value: { accepted: [], duplicates: [held.id] } }, 'a re-send of a stored turn');
    assert.ok(rOther?.status === 'rejected' && rOther.reason instanceof ContentConflictError && rOther.reason.index === 0, 'other content under a stored id');
    assert.deepEqual(rAgain, { status: 'fulfilled', value: { accepted: [], duplicates: [c.id] } }, 'the second call with a new id is its duplicate');
    assert.ok(rChanged?.status === 'rejected' && rChanged.reason instanceof ContentConflictError, 'other content under an id the batch writes');
    assert.equal(counts.mixed, 2, 'the INSERT, and one read of the rows it found held');
    assert.equal((await log.get(u, held.id))?.content, 'held before');
    assert.equal((await log.get(u, c.id))?.content, 'c');
    const other = new Postgres({ url: db.options.url, max: 1 });
    try {
      const [{ n }] = (await other.query<{ n: number }>('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [u])) as [{ n: number }];
      assert.equal(n, 4, 'committed: another connection sees every accepted turn');
    } finally {
      await other.close();
    }
  });

  it('reads concurrent gets in one statement, each caller its own turn (or null), ids per user', async () => {
    const db = await pg();
    const log = new PostgresTurnLog(db);
    const [u, v] = [uid(), uid()];
    const turns = Array.from({ length: 40 }, (_, i) => turn(i % 2 ? u : v, `turn ${i}`));
    await log.append(turns);
    const statements: string[] = [];
    const query = db.pool.query.bind(db.pool);
    db.pool.query = ((text: string, values?: unknown[]) => (statements.push(text), query(text, values))) as typeof db.pool.query;
    try {
      const asked = [...turns.map((t) => [t.user_id, t.id] as const), [u, 'absent'] as const, [u, turns[0]!.id] as const];
      const got = await Promise.all(asked.map(([user, id]) => log.get(user, id)));
      assert.equal(statements.length, 1, 'one statement for every get of the event-loop turn');
      assert.deepEqual(got.slice(0, turns.length), turns);
      assert.equal(got[turns.length], null, 'an unknown id');
      assert.equal(got[turns.length + 1], null, "another user's id is not this user's turn");
    } finally {
      db.pool.query = query;
    }
  });

  it("commits a job's bookkeeping without waiting for the WAL flush, and only that transaction", async () => {
    // one connection: a setting that outlived its transaction would show in the next one
    const db = new Postgres({ url: (await pg()).options.url, max: 1 });
    after(() => db.close());
    const setting = async (flush?: boolean) =>
      (await db.tx((tx) => tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit'), flush === undefined ? {} : { flush }))[0]!.synchronous_commit;
    assert.equal(await setting(false), 'off');
    assert.equal(await setting(), 'on', 'an append (a plain transaction) still waits for the flush');
    assert.equal((await db.query<{ synchronous_commit: string }>('SHOW synchronous_commit'))[0]!.synchronous_commit, 'on');
    // a job's one-statement write (queryUnflushed) runs on connections of their own: the pool's stay flushed
    assert.equal((await db.queryUnflushed<{ synchronous_commit: string }>('SHOW synchronous_commit'))[0]!.synchronous_commit, 'off');
    assert.equal((await db.query<{ synchronous_commit: string }>('SHOW synchronous_commit'))[0]!.synchronous_commit, 'on');
    assert.equal((await db.tx((tx) => tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit')))[0]!.synchronous_commit, 'on');
  });

  it('scan pages through turns in acceptance order, all users or one, and the long-term store pages its entries the same way', async () => {
    const log = new PostgresTurnLog(await pg());
    const lt = new PostgresLongTermStore(await pg());
    const [u, v] = [uid(), uid()];
    const turns = [turn(u, 'one'), turn(v, 'two'), turn(u, 'three'), turn(u, 'four'), turn(v, 'five')];
    for (const t of turns) await log.append([t]);
    const pages: string[][] = [];
    for await (const page of log.scan(2, u)) pages.push(page.map((t) => t.content));
    assert.deepEqual(pages, [['one', 'three'], ['four']], "one user's turns, two a page, in order");
    const all: string[] = [];
    for await (const page of log.scan(2)) all.push(...page.filter((t) => t.user_id === u || t.user_id === v).map((t) => t.content));
    assert.deepEqual(all, ['one', 'two', 'three', 'four', 'five'], 'every user, in acceptance order');
    await lt.upsert(turns.map((t) => ({ ...t, kind: 'turn' as const, importance: 0.6, covers: null, updated_at: t.created_at })));
    const entries: string[][] = [];
    for await (const page of lt.scan(2, v)) entries.push(page.map((e) => e.content));
    assert.deepEqual(entries, [['two', 'five']]);
  });
});
