import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Postgres } from '../../../src/adapters/postgres/pool.js';
import { MAX_PASSAGES, passagesOf } from '../../../src/embedding/passages.js';
import { reindex } from '../../../src/memory/reindex.js';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/app.js';
import { PASSAGE_CHARS } from '../../../src/retrieval/passage.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { readDb } from '../../helpers/read-db.js';
import { silentLogger, testMemory } from '../../helpers/services.js';

/** an assistant's long reply: 30,000 characters of a plan, whose last lines hold the one fact asked about */
function longReply(): string {
  const days = Array.from({ length: 400 }, (_, i) => `Day ${i + 1}: review the onboarding checklist, answer the support queue and update the tracker.`);
  const end = 'Last of all, the spare office key is with Marguerite at the front desk of building C.';
  let text = days.join('\n');
  text = `${text.slice(0, 30_000 - end.length - 1)}\n${end}`;
  assert.equal(text.length, 30_000);
  return text;
}

const MIDDLE = 'The parking permit for the blue van is renewed by Osvaldo in the basement archive.';

/** the same reply with one fact in its middle (at ~15,000 characters) */
function longReplyWithMiddle(): string {
  const reply = longReply();
  const at = reply.indexOf('\n', 15_000);
  // as much of the filler after it left out: still 30,000 characters, the end kept
  const text = `${reply.slice(0, at)}\n${MIDDLE}${reply.slice(at + MIDDLE.length + 1)}`;
  assert.equal(text.length, 30_000);
  return text;
}

/** the semantic tier alone: the query embedded and searched in the vector index, as retrieval does */
async function semanticHits(services: Services, user: string, query: string, k: number) {
  const embedder = services.embedders.current()!;
  const [q] = await embedder.embed([query], 'query');
  return services.vectors.search(embedder, q!, { user_id: user }, k);
}

async function storeLongTurn(memory: Memory, reply: string): Promise<string> {
  const { ids } = await memory.addTurns([
    { user_id: 'kai', session_id: 'plan', role: 'user', content: 'Can you write me a full onboarding plan for the new hire?', created_at: '2026-03-02T09:00:00Z' },
    { user_id: 'kai', session_id: 'plan', role: 'assistant', content: reply, created_at: '2026-03-02T09:00:05Z' },
    { user_id: 'kai', session_id: 'misc', role: 'user', content: 'The office key for building A is in my drawer.', created_at: '2026-03-05T09:00:00Z' },
    { user_id: 'kai', session_id: 'misc', role: 'user', content: 'I sold my old bicycle last spring.', created_at: '2026-03-06T09:00:00Z' },
  ]);
  await memory.idle();
  return ids[1]!;
}

describe('a 30,000-character turn (library, SQLite, hash embedder)', () => {
  it('is stored whole, found by a phrase from its end, reported with that passage and quoted by it in the prompt', async () => {
    const { memory } = await testMemory();
    try {
      const reply = longReply();
      await memory.addTurns([
        { user_id: 'kai', session_id: 'plan', role: 'user', content: 'Can you write me a full onboarding plan for the new hire?', created_at: '2026-03-02T09:00:00Z' },
        { user_id: 'kai', session_id: 'plan', role: 'assistant', content: reply, created_at: '2026-03-02T09:00:05Z' },
        { user_id: 'kai', session_id: 'misc', role: 'user', content: 'The office key for building A is in my drawer.', created_at: '2026-03-05T09:00:00Z' },
      ]);
      await memory.idle();
      const r = await memory.retrieve({ query: 'who has the spare office key of building C?', user_id: 'kai', session_id: 'new', top_k: 3 });
      const hit = r.results.find((x) => x.content === reply);
      assert.ok(hit, `the long reply is among ${JSON.stringify(r.results.map((x) => x.content.slice(0, 40)))}`);
      assert.equal(hit.content.length, 30_000, 'the result is the whole turn');
      assert.ok(hit.passage, 'with the passage that matched');
      assert.ok(hit.passage.text.includes('spare office key is with Marguerite at the front desk of building C'), hit.passage.text);
      assert.ok(hit.passage.end - hit.passage.start <= PASSAGE_CHARS);
      const line = r.prompt_blocks.split('\n').find((l) => l.startsWith('- [2026-03-02] assistant:')) ?? '';
      assert.ok(line.includes('spare office key is with Marguerite'), r.prompt_blocks.slice(0, 2_000));
      assert.ok(line.length < PASSAGE_CHARS + 120, `the prompt quotes the passage, not the turn: ${line.length} characters`);
      assert.ok(line.includes('… '), 'and says text was left out');
      assert.ok(r.prompt_blocks.length < 3 * (PASSAGE_CHARS + 200), `prompt of ${r.prompt_blocks.length} characters`);
    } finally {
      await memory.close();
    }
  });
});

describe('a 30,000-character turn in the semantic tier (passage vectors)', () => {
  it('is stored as its whole text and at most MAX_PASSAGES passages; a phrase from its middle or end is found by the semantic tier alone, by the passage that holds it', async () => {
    // no compaction: its summary would quote the phrase and compete with the turn
    const { memory, services, dir } = await testMemory({ context_window: 1_000_000 });
    try {
      const reply = longReplyWithMiddle();
      const id = await storeLongTurn(memory, reply);
      const parts = readDb(join(dir, 'nc.db'), (db) => db.prepare('SELECT part, length(content) AS chars FROM vectors WHERE id = ? ORDER BY part').all(id) as Array<{ part: number; chars: number }>);
      assert.equal(parts.length, 1 + MAX_PASSAGES, 'capped: a 30,000-character turn gets MAX_PASSAGES passages besides its whole text');
      assert.deepEqual(parts.map((p) => p.part), Array.from({ length: 1 + MAX_PASSAGES }, (_, i) => i));
      assert.ok(parts.slice(1).every((p) => p.chars === 0), 'a passage keeps no copy of the text');
      const entries = readDb(join(dir, 'nc.db'), (db) => db.prepare("SELECT count(DISTINCT id) FROM vectors WHERE user_id = 'kai'").pluck().get() as number);
      assert.equal(await services.vectors.count(services.embedders.current()!, { user_id: 'kai' }), entries, 'count counts entries, not passages');

      for (const [query, phrase] of [
        ['who renews the parking permit for the blue van?', MIDDLE],
        ['who has the spare office key of building C?', 'spare office key is with Marguerite at the front desk of building C'],
      ] as const) {
        // the user's other turns share words with the queries ("office key for building A"): the
        // long turn must be among the first two, by the passage holding the phrase
        const hits = await semanticHits(services, 'kai', query, 3);
        const at = hits.findIndex((h) => h.id === id);
        assert.ok(at >= 0 && at <= 1, `${query}: ${JSON.stringify(hits.map((h) => [h.payload.content.slice(0, 40), h.part, h.score]))}`);
        const hit = hits[at]!;
        assert.ok(hit.part > 0, 'matched by a passage, not the whole text');
        assert.equal(hit.payload.content, reply, 'reported with the whole turn');
        assert.ok(passagesOf(reply)[hit.part - 1]!.text.includes(phrase), `passage ${hit.part} holds the phrase`);
        assert.equal(new Set(hits.map((h) => h.id)).size, hits.length, 'each entry once');
        const r = await memory.retrieve({ query, user_id: 'kai', session_id: 'new', top_k: 3 });
        const result = r.results.find((x) => x.id === id);
        assert.equal(result?.explain.ranks.semantic, at + 1, 'in the semantic list at its place');
      }
    } finally {
      await memory.close();
    }
  });

  it('an edit to a short text leaves no passage of the old one; a delete and a forget leave no vector of the turn (SQLite file)', async () => {
    const { memory, dir } = await testMemory();
    const rows = (id: string) => readDb(join(dir, 'nc.db'), (db) => db.prepare('SELECT count(*) FROM vectors WHERE id = ?').pluck().get(id) as number);
    try {
      const id = await storeLongTurn(memory, longReply());
      assert.equal(rows(id), 1 + MAX_PASSAGES);
      await memory.edit('kai', id, { content: 'A short plan: see the wiki.' });
      await memory.idle();
      assert.equal(rows(id), 1, 'the edit replaced the entry: its whole text only');
      await memory.edit('kai', id, { content: longReply() });
      await memory.idle();
      assert.equal(rows(id), 1 + MAX_PASSAGES);
      await memory.delete('kai', id);
      assert.equal(rows(id), 0, 'deleted: no part left');
      const again = await storeLongTurn(memory, longReplyWithMiddle());
      assert.equal(rows(again), 1 + MAX_PASSAGES);
      await memory.forget('kai');
      assert.equal(readDb(join(dir, 'nc.db'), (db) => db.prepare("SELECT count(*) FROM vectors WHERE user_id = 'kai'").pluck().get() as number), 0, 'forgotten: no vector of the user');
    } finally {
      await memory.close();
    }
  });

  it('a reindex embeds the passages again', async () => {
    const { memory, services, dir } = await testMemory({ context_window: 1_000_000 });
    const rows = (id: string) => readDb(join(dir, 'nc.db'), (db) => db.prepare('SELECT count(*) FROM vectors WHERE id = ?').pluck().get(id) as number);
    try {
      const reply = longReplyWithMiddle();
      const id = await storeLongTurn(memory, reply);
      await services.vectors.deleteAll();
      assert.equal(rows(id), 0);
      const embedder = services.embedders.current()!;
      const report = await reindex({ turnLog: services.turnLog, longTerm: services.longTerm, vectors: services.vectors, embedder, log: silentLogger() });
      assert.equal(report.embedded, 4, 'memories, not vectors');
      assert.equal(rows(id), 1 + MAX_PASSAGES);
      const [hit] = await semanticHits(services, 'kai', 'who renews the parking permit for the blue van?', 1);
      assert.deepEqual([hit?.id, passagesOf(reply)[hit!.part - 1]?.text.includes(MIDDLE)], [id, true]);
    } finally {
      await memory.close();
    }
  });

  it('a delete and a forget leave no passage vector (PostgreSQL)', async () => {
    const db = await createTestDatabase();
    const { memory } = await testMemory({ database_url: db.url });
    const pg = new Postgres({ url: db.url, max: 1 });
    const rows = async (where: string, arg: string) => (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM vectors WHERE ${where}`, [arg]))[0]!.n;
    try {
      const id = await storeLongTurn(memory, longReply());
      assert.equal(await rows('id = $1', id), 1 + MAX_PASSAGES);
      await memory.delete('kai', id);
      assert.equal(await rows('id = $1', id), 0, 'deleted: no part left');
      const again = await storeLongTurn(memory, longReplyWithMiddle());
      assert.equal(await rows('id = $1', again), 1 + MAX_PASSAGES);
      await memory.forget('kai');
      assert.equal(await rows('user_id = $1', 'kai'), 0, 'forgotten: no vector of the user');
    } finally {
      await pg.close();
      await memory.close();
    }
  });
});
