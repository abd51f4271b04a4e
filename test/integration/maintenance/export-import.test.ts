import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startCli } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { killAll, queueEnv, readDb, until } from '../queue/helpers.js';

const DAY = 86_400_000;
/** how far a score may move between two passes of the same retrieval: recency, minutes apart */
const SCORE_DRIFT = 0.005;

interface Result {
  id: string;
  tier: string;
  kind: string;
  content: string;
  session_id: string;
  role: string;
  name: string | null;
  created_at: string;
  score: number;
}

const QUERIES: Array<{ query: string; session?: string }> = [
  { query: 'Kyoto trip budget temples' },
  { query: 'peanut allergy' },
  { query: 'ferry Porto Monday', session: 'live' },
  { query: 'locker code' },
  { query: 'what did we book in Lisbon', session: 'live' },
];

/**
 * docs/architecture.md, maintenance export/import: `export --user U` → `memory forget --user U` → `import FILE` gives back what
 * retrieval returned for U — every tier (short-term sessions on Redis, vectors, long-term entries
 * with their summaries, archive, edits, pins, and what was pruned staying pruned).
 */
describe('export, forget, import: retrieval comes back the same', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    env = queueEnv({ redisUrl: redis.url, sqlitePath: dbPath });
  });
  after(async () => {
    killAll(children);
    await redis.stop(true);
  });

  const ok = async (args: string[]) => {
    const r = await runCli(args, env);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };

  /** every query's results, each field as retrieval answered it */
  const retrieveAll = async (user: string) => {
    const out: Record<string, Result[]> = {};
    for (const q of QUERIES) {
      const r = await ok(['retrieve', q.query, '--user', user, '--top-k', '20', '--json', ...(q.session ? ['--session', q.session] : [])]);
      const { results, tiers } = JSON.parse(r.stdout) as { results: Result[]; tiers: Record<string, { status: string }> };
      for (const [tier, t] of Object.entries(tiers)) assert.equal(t.status, 'ok', `${tier} answered "${q.query}"`);
      out[`${q.query}|${q.session ?? ''}`] = results.map(({ id, tier, kind, content, session_id, role, name, created_at, score }) => ({ id, tier, kind, content, session_id, role, name, created_at, score }));
    }
    return out;
  };
  /**
   * The same results for every query, every field but the score equal. Scores hold recency, which
   * moves with the clock between the two passes (tens of seconds on a loaded machine): each must be
   * within SCORE_DRIFT of before, and the order the same except between results that were that close.
   */
  const assertSameRetrieval = (now: Record<string, Result[]>, was: Record<string, Result[]>, what: string) => {
    const fields = (r: Result) => ({ ...r, score: undefined });
    const byId = (rs: Result[]) => [...rs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.tier.localeCompare(b.tier)));
    assert.deepEqual(Object.keys(now), Object.keys(was), what);
    for (const [q, results] of Object.entries(was)) {
      assert.deepEqual(byId(now[q]!).map(fields), byId(results).map(fields), `${what}: "${q}" returns the same results`);
      for (const r of results) {
        const again = now[q]!.find((x) => x.id === r.id && x.tier === r.tier)!;
        assert.ok(Math.abs(again.score - r.score) <= SCORE_DRIFT, `${what}: "${q}" scores ${r.tier} ${r.id} ${again.score} against ${r.score}`);
      }
      const rank = (r: Result) => now[q]!.findIndex((x) => x.id === r.id && x.tier === r.tier);
      for (let i = 0; i < results.length; i++) {
        for (let j = i + 1; j < results.length; j++) {
          if (results[i]!.score - results[j]!.score > SCORE_DRIFT) assert.ok(rank(results[i]!) < rank(results[j]!), `${what}: "${q}" still ranks ${results[i]!.id} above ${results[j]!.id}`);
        }
      }
    }
  };
  const vectorsOf = (user: string) => readDb(dbPath, (db) => (db.prepare('SELECT count(*) AS n FROM vectors WHERE user_id = ?').get(user) as { n: number }).n);
  const entriesOf = async (user: string) => JSON.parse((await ok(['memory', 'list', '--user', user, '--limit', '1000', '--json'])).stdout) as Array<Record<string, unknown>>;

  it('restores what retrieval returns, and a second import changes nothing', { timeout: 180_000 }, async () => {
    children.add((await startCli(['worker'], env, /worker ready/)).child);
    const old = Date.now() - 45 * DAY;
    const at = (base: number, i: number) => new Date(base + i * 60_000).toISOString();
    const turns = [
      ...['I am planning a trip to Kyoto; my budget is 2400 euros.', 'Kyoto has wonderful temples, start with Fushimi Inari.', 'Remember I am allergic to peanuts.', 'Noted, no peanuts anywhere.'].map((content, i) => ({
        user_id: 'ann', session_id: 'kyoto', role: i % 2 ? 'assistant' : 'user', content, created_at: at(old, i), importance: 0.8,
      })),
      ...Array.from({ length: 8 }, (_, i) => ({
        user_id: 'ann', session_id: 'live', role: i % 2 ? 'assistant' : 'user', name: i % 2 ? 'Guide' : undefined,
        content: i === 2 ? 'ok' : `Live chat ${i}: the ferry from Porto leaves on Monday; I booked ${i + 2} seats in Lisbon.`,
        created_at: at(Date.now() - 3_600_000, i), metadata: { turn: i }, importance: i === 3 ? 0.1 : i === 5 ? 0.35 : 0.75,
      })),
      { id: 'ann-pinned', user_id: 'ann', session_id: 'live', role: 'user', content: 'My locker code is 4417.', pinned: true, created_at: at(Date.now() - 1_800_000, 0) },
      { user_id: 'bob', session_id: 'b', role: 'user', content: 'Bob likes the ferry to Porto too.', importance: 0.9 },
    ];
    const file = join(dir, 'turns.jsonl');
    writeFileSync(file, turns.map((t) => JSON.stringify(t)).join('\n'));
    await ok(['ingest', file, '--wait']);
    await ok(['memory', 'compact', '--session', 'live', '--user', 'ann']);
    assert.equal((JSON.parse((await ok(['memory', 'archive', '--json'])).stdout) as { archived: number }).archived, 1);
    const entries = await entriesOf('ann');
    const editMe = entries.find((e) => e.kind === 'turn' && String(e.content).startsWith('Live chat 4'))!;
    await ok(['memory', 'edit', String(editMe.id), '--user', 'ann', '--content', 'Live chat 4 (edited): we moved the Lisbon seats to Tuesday.']);
    const pruned = JSON.parse((await ok(['memory', 'prune', '--user', 'ann', '--below-importance', '0.4', '--yes', '--json'])).stdout) as { deleted: number };
    assert.ok(pruned.deleted >= 1, 'something was pruned (and must stay pruned)');
    await until('every embedding to be written', () => readDb(dbPath, (db) => (db.prepare('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL').get() as { n: number }).n === 0), 30_000);
    await until('the archive, summary and edit to be embedded', () => readDb(dbPath, (db) => (db.prepare("SELECT count(*) AS n FROM vectors WHERE kind IN ('archive', 'summary')").get() as { n: number }).n) === 2, 30_000);
    await until("the edit's new text to be embedded", () => readDb(dbPath, (db) => (db.prepare('SELECT content FROM vectors WHERE id = ?').get(String(editMe.id)) as { content: string } | undefined)?.content.includes('(edited)') === true), 30_000);

    const before = await retrieveAll('ann');
    const kinds = new Set(Object.values(before).flat().map((r) => `${r.tier}:${r.kind}`));
    for (const k of ['short_term:turn', 'semantic:turn', 'long_term:turn', 'long_term:archive']) assert.ok(kinds.has(k), `retrieval covers ${k}: ${[...kinds].join(', ')}`);
    const entriesBefore = await entriesOf('ann');
    const vectorsBefore = vectorsOf('ann');
    const bobBefore = await retrieveAll('bob');

    const exportFile = join(dir, 'ann.jsonl');
    await ok(['export', '--user', 'ann', exportFile]);
    assert.equal(statSync(exportFile).mode & 0o777, 0o600, 'the export is readable by its owner only');
    const lines = readFileSync(exportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual({ format: lines[0]!.format, version: lines[0]!.version, user_id: lines[0]!.user_id }, { format: 'neuralcleave-export', version: 1, user_id: 'ann' });
    assert.ok(lines.some((l) => l.type === 'short_term'), 'the live short-term session is exported');

    await ok(['memory', 'forget', '--user', 'ann', '--yes']);
    assert.ok(Object.values(await retrieveAll('ann')).every((r) => r.length === 0), 'forgotten');
    assert.equal(vectorsOf('ann'), 0);

    const imported = JSON.parse((await ok(['import', exportFile, '--json'])).stdout) as { turns: { new: number }; entries: { new: number } };
    assert.ok(imported.turns.new > 0 && imported.entries.new > 0);
    await until('the imported memories to be embedded', () => vectorsOf('ann') === vectorsBefore, 30_000);

    assert.deepEqual(await entriesOf('ann'), entriesBefore, 'long-term entries identical, every field');
    assertSameRetrieval(await retrieveAll('ann'), before, 'after the import');
    assertSameRetrieval(await retrieveAll('bob'), bobBefore, "bob's retrieval, unchanged throughout");

    // a second import: nothing new, nothing changed
    const again = JSON.parse((await ok(['import', exportFile, '--json'])).stdout) as { turns: { new: number }; entries: { new: number }; embeds_enqueued: number };
    assert.deepEqual([again.turns.new, again.entries.new, again.embeds_enqueued], [0, 0, 0]);
    assert.equal(vectorsOf('ann'), vectorsBefore);
    assertSameRetrieval(await retrieveAll('ann'), before, 'after the second import');
  });

  it('refuses a bad file whole, naming the line and field', async () => {
    const file = join(dir, 'bad.jsonl');
    const header = { format: 'neuralcleave-export', version: 1, user_id: 'zed', exported_at: new Date().toISOString() };
    const turn = { type: 'turn', id: 'z1', user_id: 'zed', session_id: 's', role: 'user', name: null, content: 'hello there', created_at: new Date().toISOString(), importance: null, pinned: false, metadata: null, persisted: false, embedded_with: null, vector: null };
    writeFileSync(file, [header, turn, { ...turn, id: 'z2', role: 'robot' }].map((l) => JSON.stringify(l)).join('\n'));
    const bad = await runCli(['import', file], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad\.jsonl:3.*role/);
    assert.equal(readDb(dbPath, (db) => (db.prepare("SELECT count(*) AS n FROM turns WHERE user_id = 'zed'").get() as { n: number }).n), 0, 'nothing of the file was stored');

    writeFileSync(file, [{ ...header, version: 2 }, turn].map((l) => JSON.stringify(l)).join('\n'));
    const future = await runCli(['import', file], env);
    assert.equal(future.code, 2);
    assert.match(future.stderr, /version/);

    writeFileSync(file, [{ ...header, counts: { turns: 2, entries: 0, short_term: 0 } }, turn].map((l) => JSON.stringify(l)).join('\n'));
    const truncated = await runCli(['import', file], env);
    assert.equal(truncated.code, 2);
    assert.match(truncated.stderr, /incomplete/);
  });
});
