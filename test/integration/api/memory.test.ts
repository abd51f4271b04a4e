import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MemoryEntry } from '../../../src/domain/entry.js';
import { counts, startApi, storeDigest, turn, type Api } from './harness.js';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

async function write(api: Api, session: string, turns: Array<Record<string, unknown>>): Promise<string[]> {
  const r = await api.request('POST', `/sessions/${encodeURIComponent(session)}/turns`, { body: { turns } });
  assert.equal(r.status, 202, r.text);
  await api.memory.idle();
  return r.json.ids as string[];
}

const contents = (entries: MemoryEntry[]) => entries.map((e) => e.content).sort();

describe('memory routes', () => {
  let api: Api;
  before(async () => {
    api = await startApi({ max_turn_chars: 500 });
    await write(api, 'wild', [
      turn('discount of 100% on everything'),
      turn('discount of 1000 euros'),
      turn('file_name.txt is the report'),
      turn('filename.txt is another'),
      turn('path C:\\temp\\new folder'),
      turn('path C:tempnew folder'),
      turn('it is 50% off, only today'),
    ]);
  });
  after(() => api.close());

  describe('GET /memory/search', () => {
    test('% _ and \\ in q match literally', async () => {
      const search = async (q: string) => {
        const r = await api.request('GET', `/memory/search?q=${encodeURIComponent(q)}`);
        assert.equal(r.status, 200, r.text);
        return contents(r.json.entries);
      };
      assert.deepEqual(await search('100%'), ['discount of 100% on everything']);
      assert.deepEqual(await search('%'), ['discount of 100% on everything', 'it is 50% off, only today']);
      assert.deepEqual(await search('file_name'), ['file_name.txt is the report']);
      assert.deepEqual(await search('_'), ['file_name.txt is the report']);
      assert.deepEqual(await search('C:\\temp'), ['path C:\\temp\\new folder']);
      assert.deepEqual(await search('\\'), ['path C:\\temp\\new folder']);
      assert.deepEqual(await search('%_%'), []);
      assert.deepEqual(await search('filename'), ['filename.txt is another']);
    });

    test('session filter and limit', async () => {
      await write(api, 'other', [turn('discount of 2% elsewhere')]);
      const all = await api.request('GET', '/memory/search?q=discount');
      assert.equal(all.json.entries.length, 3);
      const one = await api.request('GET', '/memory/search?q=discount&session_id=other');
      assert.deepEqual(contents(one.json.entries), ['discount of 2% elsewhere']);
      const limited = await api.request('GET', '/memory/search?q=discount&limit=2');
      assert.equal(limited.json.entries.length, 2);
    });

    for (const [name, qs, field] of [
      ['no q', '', 'q'],
      ['empty q', 'q=', 'q'],
      ['limit 0', 'q=a&limit=0', 'limit'],
      ['limit 1001', 'q=a&limit=1001', 'limit'],
      ['limit -1', 'q=a&limit=-1', 'limit'],
      ['limit 1e3', 'q=a&limit=1e3', 'limit'],
      ['limit twice', 'q=a&limit=1&limit=2', 'limit'],
      ['q twice', 'q=a&q=b', 'q'],
      ['unknown parameter', 'q=a&user=bob', 'user'],
      ['user_id of 129 characters', `q=a&user_id=${'u'.repeat(129)}`, 'user_id'],
    ] as const) {
      test(`400 naming the field: ${name}`, async () => {
        const r = await api.request('GET', `/memory/search?${qs}`);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.json.error.code, 'bad_request');
        assert.ok(r.json.error.details.some((d: { path: string }) => d.path === field), JSON.stringify(r.json.error));
      });
    }
  });

  describe('GET /memory/recent', () => {
    test('newest first, session filter, limit bounds', async () => {
      const r = await api.request('GET', '/memory/recent?session_id=wild&limit=3');
      assert.equal(r.status, 200);
      assert.equal(r.json.entries.length, 3);
      const times = r.json.entries.map((e: MemoryEntry) => e.created_at);
      assert.deepEqual(times, [...times].sort().reverse());
      assert.ok(r.json.entries.every((e: MemoryEntry) => e.session_id === 'wild'));
      assert.equal((await api.request('GET', '/memory/recent?limit=1000')).status, 200);
      assert.equal((await api.request('GET', '/memory/recent?limit=1001')).status, 400);
      assert.equal((await api.request('GET', '/memory/recent?limit=abc')).status, 400);
    });

    test('another user sees nothing of these', async () => {
      const r = await api.request('GET', '/memory/recent?user_id=nobody');
      assert.deepEqual(r.json.entries, []);
    });
  });

  describe('POST /memory/retrieve', () => {
    test('three-tier results, prompt blocks and a report per tier', async () => {
      const r = await api.request('POST', '/memory/retrieve', { body: { query: 'discount report', session_id: 'wild', top_k: 4 } });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.results.length > 0 && r.json.results.length <= 4);
      assert.match(r.json.prompt_blocks, /## Memory/);
      assert.deepEqual(Object.keys(r.json.tiers).sort(), ['long_term', 'semantic', 'short_term']);
      for (const x of r.json.results) assert.ok(['short_term', 'semantic', 'long_term'].includes(x.tier) && x.explain);
    });

    test('min_score drops weak results, and filler never pads them', async () => {
      await write(api, 'scores', [turn('my locker code at the gym is 4471'), turn('ok thanks'), turn('hi!')]);
      const all = await api.request('POST', '/memory/retrieve', { body: { query: 'gym locker code', session_id: 'scores', top_k: 10 } });
      assert.equal(all.status, 200, all.text);
      const got = all.json.results as Array<{ content: string; score: number }>;
      assert.equal(got[0]!.content, 'my locker code at the gym is 4471');
      // the session's newest turns are candidates whatever the query, but filler says nothing
      assert.ok(!got.some((x) => x.content === 'ok thanks' || x.content === 'hi!'), got.map((x) => x.content).join(' | '));
      const cut = got[0]!.score;
      const strong = await api.request('POST', '/memory/retrieve', { body: { query: 'gym locker code', session_id: 'scores', top_k: 10, min_score: cut } });
      assert.equal(strong.status, 200, strong.text);
      assert.ok(strong.json.results.length >= 1 && strong.json.results.every((x: { score: number }) => x.score >= cut));
      assert.ok(strong.json.results.length < got.length || got.length === 1);
    });

    for (const [name, body, field] of [
      ['no query', { top_k: 3 }, 'query'],
      ['blank query', { query: '   ' }, 'query'],
      ['top_k 0', { query: 'a', top_k: 0 }, 'top_k'],
      ['top_k 101', { query: 'a', top_k: 101 }, 'top_k'],
      ['min_score above 1', { query: 'a', min_score: 1.5 }, 'min_score'],
      ['min_score not a number', { query: 'a', min_score: 'high' }, 'min_score'],
      ['top_k 2.5', { query: 'a', top_k: 2.5 }, 'top_k'],
      ['top_k as a string', { query: 'a', top_k: '3' }, 'top_k'],
      ['unknown field', { query: 'a', k: 3 }, 'k'],
    ] as const) {
      test(`400: ${name}`, async () => {
        const r = await api.request('POST', '/memory/retrieve', { body });
        assert.equal(r.status, 400, r.text);
        assert.ok(r.json.error.details.some((d: { path: string }) => d.path === field), JSON.stringify(r.json.error));
      });
    }
  });

  describe('GET, PATCH and DELETE /memory/:id', () => {
    test('GET one entry; 404 unknown; 400 bad id', async () => {
      const [id] = await write(api, 'get', [turn('a gettable memory')]);
      const r = await api.request('GET', `/memory/${id}`);
      assert.equal(r.status, 200);
      assert.equal(r.json.content, 'a gettable memory');
      assert.equal((await api.request('GET', '/memory/no-such-id')).status, 404);
      assert.equal((await api.request('GET', `/memory/${'x'.repeat(129)}`)).status, 400);
      assert.equal((await api.request('GET', '/memory/a%20b')).status, 400);
    });

    test('PATCH content re-embeds; importance and pinned change', async () => {
      const [id] = await write(api, 'edit', [turn('I drive a red bicycle')]);
      const r = await api.request('PATCH', `/memory/${id}`, { body: { content: 'I drive a blue tractor', importance: 0.42, pinned: true } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.content, 'I drive a blue tractor');
      assert.equal(r.json.importance, 0.42);
      assert.equal(r.json.pinned, true);
      await api.memory.idle();
      // the semantic tier now holds the new text: a search for it finds this id there
      const embedder = (await api.services.embedders.ready())!;
      const [q] = await embedder.embed(['blue tractor']);
      const hits = await api.services.vectors.search(embedder, q!, { user_id: 'default' }, 3);
      assert.equal(hits[0]?.id, id);
      assert.equal(hits[0]?.payload.content, 'I drive a blue tractor');
      assert.equal((await api.services.turnLog.get('default', id!))?.content, 'I drive a blue tractor');
    });

    test('PATCH to the text of another entry of the same user keeps both, each under its own id', async () => {
      const [a, b] = await write(api, 'dup', [turn('unique text one'), turn('unique text two')]);
      const r = await api.request('PATCH', `/memory/${a}`, { body: { content: 'unique text two' } });
      assert.equal(r.status, 200, r.text);
      assert.equal((await api.request('GET', `/memory/${a}`)).json.content, 'unique text two');
      assert.equal((await api.request('GET', `/memory/${b}`)).json.content, 'unique text two');
    });

    for (const [name, body, status] of [
      ['an empty patch', {}, 400],
      ['importance 2', { importance: 2 }, 400],
      ['pinned as a string', { pinned: 'yes' }, 400],
      ['blank content', { content: ' ' }, 400],
      ['content over max_turn_chars', { content: 'z'.repeat(501) }, 400],
      ['content with a NUL', { content: 'a\u0000b' }, 400],
      ['an unknown field', { kind: 'summary' }, 400],
      ['a JSON array', [{ importance: 0.5 }], 400],
    ] as const) {
      test(`PATCH refused, entry unchanged: ${name} → ${status}`, async () => {
        const [id] = await write(api, 'patch-bad', [turn(`patch target ${name}`)]);
        const before = await storeDigest(api);
        const r = await api.request('PATCH', `/memory/${id}`, { body });
        assert.equal(r.status, status, r.text);
        assert.equal(await storeDigest(api), before);
      });
    }

    test('PATCH an unknown id is a 404; an invalid id a 400', async () => {
      assert.equal((await api.request('PATCH', '/memory/nope', { body: { importance: 0.5 } })).status, 404);
      assert.equal((await api.request('PATCH', '/memory/bad%24id', { body: { importance: 0.5 } })).status, 400);
    });

    test('DELETE removes the memory from every tier', async () => {
      const [id] = await write(api, 'del', [turn('please forget my locker code 4711')]);
      assert.equal((await api.services.vectors.has((await api.services.embedders.ready())!, 'default', [id!])).size, 1);
      const r = await api.request('DELETE', `/memory/${id}`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { id, removed: { long_term: true, turn_log: true, short_term: true, semantic: true } });
      await api.memory.idle();
      assert.equal(await api.services.longTerm.get('default', id!), null);
      assert.equal((await api.services.turnLog.get('default', id!)), null);
      assert.equal((await api.services.shortTerm.recent('default', 'del')).length, 0);
      assert.equal((await api.services.vectors.has((await api.services.embedders.ready())!, 'default', [id!])).size, 0);
      const retrieved = await api.request('POST', '/memory/retrieve', { body: { query: 'locker code', session_id: 'del' } });
      assert.ok(!retrieved.json.results.some((x: { id: string }) => x.id === id));
      assert.equal((await api.request('DELETE', `/memory/${id}`)).status, 404);
    });

    test('GET and PATCH find a turn below the importance threshold, as retrieve does (issue 26, item 10)', async () => {
      const [id] = await write(api, 'under', [{ role: 'user', content: 'my canoe is called Wobbly Otter', importance: 0.05 }]);
      assert.equal(await api.services.longTerm.get('default', id!), null, 'below the threshold: no long-term entry');
      const retrieved = await api.request('POST', '/memory/retrieve', { body: { query: 'canoe Wobbly Otter', session_id: 'under' } });
      assert.ok(retrieved.json.results.some((x: { id: string }) => x.id === id), 'retrieve returns it');

      const got = await api.request('GET', `/memory/${id}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(
        { id: got.json.id, content: got.json.content, kind: got.json.kind, importance: got.json.importance, pinned: got.json.pinned, session_id: got.json.session_id },
        { id, content: 'my canoe is called Wobbly Otter', kind: 'turn', importance: 0.05, pinned: false, session_id: 'under' },
      );

      const patched = await api.request('PATCH', `/memory/${id}`, { body: { content: 'my kayak is called Brave Heron' } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.content, 'my kayak is called Brave Heron');
      assert.equal(patched.json.importance, 0.05, 'the importance it had');
      await api.memory.idle();
      assert.equal((await api.request('GET', `/memory/${id}`)).json.content, 'my kayak is called Brave Heron');
      assert.equal((await api.services.turnLog.get('default', id!))?.content, 'my kayak is called Brave Heron');
      const after = await api.request('POST', '/memory/retrieve', { body: { query: 'canoe Wobbly Otter kayak Brave Heron', session_id: 'under' } });
      const texts = after.json.results.filter((x: { id: string }) => x.id === id).map((x: { content: string }) => x.content);
      assert.ok(texts.length > 0 && texts.every((t: string) => t === 'my kayak is called Brave Heron'), `retrieve returns only the new text: ${JSON.stringify(texts)}`);
      const embedder = (await api.services.embedders.ready())!;
      const [q] = await embedder.embed(['kayak Brave Heron']);
      const hits = await api.services.vectors.search(embedder, q!, { user_id: 'default' }, 3);
      assert.equal(hits.find((h) => h.id === id)?.payload.content, 'my kayak is called Brave Heron', 're-embedded');

      const pinned = await api.request('PATCH', `/memory/${id}`, { body: { pinned: true } });
      assert.equal(pinned.status, 200, pinned.text);
      assert.equal(pinned.json.pinned, true);
      assert.equal((await api.request('DELETE', `/memory/${id}`)).status, 200);
      assert.equal((await api.request('GET', `/memory/${id}`)).status, 404);
    });

    test('DELETE of a turn below the importance threshold (turn log only) works too', async () => {
      const [id] = await write(api, 'low', [{ role: 'user', content: 'ok', importance: 0.01 }]);
      assert.equal(await api.services.longTerm.get('default', id!), null);
      const r = await api.request('DELETE', `/memory/${id}`);
      assert.equal(r.status, 200);
      assert.equal(r.json.removed.turn_log, true);
      assert.equal(r.json.removed.long_term, false);
    });
  });

  describe('POST /memory/prune', () => {
    test('by age, importance and session; never pinned', async () => {
      const ids = await write(api, 'prune', [
        turn('old and dull', { created_at: daysAgo(40), importance: 0.35 }),
        turn('old but pinned', { created_at: daysAgo(40), importance: 0.35, pinned: true }),
        turn('old and important', { created_at: daysAgo(40), importance: 0.95 }),
        turn('new and dull', { importance: 0.35 }),
      ]);
      const before = await counts(api);
      const r = await api.request('POST', '/memory/prune', { body: { user_id: 'default', session_id: 'prune', older_than_days: 30, below_importance: 0.5 } });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { deleted: 1, ids: [ids[0]] });
      assert.equal((await counts(api)).entries, before.entries - 1);
      const bySession = await api.request('POST', '/memory/prune', { body: { user_id: 'default', session_id: 'prune' } });
      assert.deepEqual(bySession.json.ids.sort(), [ids[2], ids[3]].sort());
      assert.ok(await api.services.longTerm.get('default', ids[1]!), 'the pinned entry stays');
    });

    for (const [name, body, field] of [
      ['no criterion', {}, '(root)'],
      ['only a user', { user_id: 'default' }, '(root)'],
      ['negative age', { older_than_days: -1 }, 'older_than_days'],
      ['age as a string', { older_than_days: '30' }, 'older_than_days'],
      ['importance above 1', { below_importance: 1.5 }, 'below_importance'],
      ['unknown field', { before: '2020-01-01' }, 'before'],
    ] as const) {
      test(`400, nothing pruned: ${name}`, async () => {
        const before = await storeDigest(api);
        const r = await api.request('POST', '/memory/prune', { body });
        assert.equal(r.status, 400, r.text);
        assert.ok(r.json.error.details.some((d: { path: string }) => d.path === field), JSON.stringify(r.json.error));
        assert.equal(await storeDigest(api), before);
      });
    }
  });

  test('fixed paths answer 405 to other methods, with Allow', async () => {
    for (const [method, path, allow] of [
      ['POST', '/memory/search', 'GET'],
      ['DELETE', '/memory/recent', 'GET'],
      ['GET', '/memory/retrieve', 'POST'],
      ['GET', '/memory/prune', 'POST'],
      ['PUT', '/memory/some-id', 'GET, PATCH, DELETE'],
    ] as const) {
      const r = await api.request(method, path);
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.get('allow'), allow);
    }
  });
});
