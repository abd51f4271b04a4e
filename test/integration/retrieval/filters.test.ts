import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMemory } from '../../../src/index.js';
import { matchesFilter, RetrieveFiltersSchema, type RecordFilterInput } from '../../../src/domain/filters.js';
import type { Role } from '../../../src/domain/turn.js';
import { ValidationError } from '../../../src/errors.js';
import { CANDIDATES_PER_RESULT, TEXT_TOP_K_MIN } from '../../../src/retrieval/retrieve.js';
import { testMemory } from '../../helpers/services.js';
import { tmpDir } from '../../helpers/tmp.js';

const TOP_K = 3;
/** the retriever asks the semantic tier for 3 × top_k candidates, the long-term text search for a top_k of 20 at least */
const POOL = TOP_K * CANDIDATES_PER_RESULT;
const TEXT_POOL = Math.max(TOP_K, TEXT_TOP_K_MIN) * CANDIDATES_PER_RESULT;

/**
 * More turns than either pool that match the query best and that no filter below admits, and 12 that
 * each filter selects from: a tier that cut to its pool before filtering would find none of the 12.
 */
function turns() {
  const filler = Array.from({ length: TEXT_POOL + 12 }, (_, j) => ({
    user_id: 'fran',
    session_id: j % 2 === 0 ? 'now' : 'old2',
    role: 'user' as Role,
    content: `harbour ferry timetable, the harbour ferry again, filler ${j}`,
    importance: 0.9,
    created_at: new Date(Date.UTC(2026, 1, 1, 10) + j * 3_600_000).toISOString(),
    metadata: { source: 'chat' },
  }));
  const targets = Array.from({ length: 12 }, (_, i) => ({
    user_id: 'fran',
    session_id: i % 2 === 0 ? 'now' : 'old1',
    role: (i % 3 === 0 ? 'assistant' : 'user') as Role,
    content: `ferry note number ${i}`,
    importance: 0.9,
    created_at: `2026-01-${String(1 + i).padStart(2, '0')}T10:00:00Z`,
    metadata: { source: 'email', thread: i % 4 },
  }));
  return [...filler, ...targets];
}

const CASES: Array<[string, RecordFilterInput]> = [
  ['metadata equality', { metadata: { source: 'email' } }],
  ['metadata in, with a role', { metadata: { thread: { in: [0, 3] } }, roles: ['user'] }],
  ['another session than the current one', { session_ids: ['old1'] }],
  ['role', { roles: ['assistant'] }],
  ['time window', { created_after: '2026-01-03T00:00:00Z', created_before: '2026-01-11T00:00:00+00:00' }],
];

describe('retrieve filters, through every tier (library, hash embedder, one process)', () => {
  it('every tier applies each filter before it ranks: top_k results when enough match, all matching, with their metadata', async () => {
    const { memory } = await testMemory();
    const all = turns();
    await memory.addTurns(all);
    await memory.idle();
    const stored = all.map((t) => ({ ...t, kind: 'turn' as const, created_at: new Date(t.created_at).toISOString() }));
    const unfiltered = await memory.retrieve({ query: 'harbour ferry', user_id: 'fran', session_id: 'now', top_k: TOP_K });
    assert.ok(unfiltered.results.every((r) => (r.metadata as { source?: string } | null)?.source === 'chat'), 'unfiltered, the filler wins');
    for (const [name, input] of CASES) {
      const filter = RetrieveFiltersSchema.parse(input);
      const matching = stored.filter((t) => matchesFilter(t, filter));
      assert.ok(matching.length > TOP_K, `${name}: the case has more than top_k matches`);
      const r = await memory.retrieve({ query: 'harbour ferry', user_id: 'fran', session_id: 'now', top_k: TOP_K, filters: input });
      assert.equal(r.results.length, TOP_K, `${name}: top_k results`);
      for (const res of r.results) {
        assert.ok(matchesFilter({ ...res, metadata: res.metadata }, filter), `${name}: ${res.content} does not match`);
        assert.deepEqual(res.metadata, stored.find((t) => t.content === res.content)!.metadata, `${name}: metadata carried`);
      }
      // each tier's own candidates: all matching ones it holds, up to its pool
      const inSession = matching.filter((t) => t.session_id === 'now').length;
      assert.equal(r.tiers.short_term.count, inSession, `${name}: short-term candidates`);
      assert.equal(r.tiers.semantic.count, Math.min(POOL, matching.length), `${name}: semantic candidates`);
      assert.equal(r.tiers.long_term.count, Math.min(TEXT_POOL, matching.length), `${name}: long-term candidates`);
      // the long-term list holds every matching turn, so every result is in it; the semantic list, 9 deep, found some of them
      assert.ok(r.results.every((res) => res.explain.ranks.long_term !== undefined), `${name}: found by the long-term tier`);
      assert.ok(r.results.some((res) => res.explain.ranks.semantic !== undefined), `${name}: found by the semantic tier too`);
    }
    await memory.close();
  });

  it('refuses a bad filter with an error naming it, and an empty match is an empty answer', async () => {
    const { memory } = await testMemory();
    await memory.addTurns(turns());
    await memory.idle();
    const bad: Array<[unknown, RegExp]> = [
      [{ colour: 'red' }, /filters.*colour|colour/],
      [{ roles: ['wizard'] }, /filters\.roles/],
      [{ metadata: { 'a.b': 1 } }, /metadata key/],
      [{ metadata: { topic: { nested: true } } }, /filters\.metadata\.topic/],
      [{ created_after: 'yesterday' }, /filters\.created_after/],
      [{ created_after: '2026-02-01T00:00:00Z', created_before: '2026-01-01T00:00:00Z' }, /created_after must be earlier/],
      [{ session_ids: [] }, /filters\.session_ids/],
    ];
    for (const [filters, message] of bad) {
      await assert.rejects(memory.retrieve({ query: 'ferry', user_id: 'fran', filters } as never), (err: unknown) => err instanceof ValidationError && message.test(err.message), JSON.stringify(filters));
    }
    const none = await memory.retrieve({ query: 'ferry', user_id: 'fran', session_id: 'now', filters: { metadata: { source: 'fax' } } });
    assert.deepEqual(none.results, []);
    await memory.close();
  });
});

describe('library: ready()', () => {
  it('with the hash embedder, the first retrieve right after createMemory searches the semantic tier', async () => {
    const dir = tmpDir();
    const memory = await createMemory({ sqlite_path: join(dir, 'nc.db'), embedding_model: 'hash', log_level: 'silent' });
    const r = await memory.retrieve({ query: 'anything at all', user_id: 'u' });
    assert.equal(r.tiers.semantic.status, 'ok');
    assert.deepEqual(await memory.ready(), { embedder: { model: 'hash', status: 'ready', error: null } });
    await memory.close();
  });

  it('ready() waits for a slow model, and says why when it failed', async () => {
    const dir = tmpDir();
    const { HashEmbedder } = await import('../../../src/embedding/hash.js');
    const slow = await createMemory(
      { sqlite_path: join(dir, 'slow.db'), embedding_model: 'hash', log_level: 'silent' },
      { loadEmbedder: () => new Promise((resolve) => setTimeout(() => resolve(new HashEmbedder()), 300)) },
    );
    assert.equal((await slow.retrieve({ query: 'early', user_id: 'u' })).tiers.semantic.status, 'skipped', 'still loading: skipped, not waited for');
    assert.equal((await slow.ready()).embedder.status, 'ready');
    assert.equal((await slow.retrieve({ query: 'later', user_id: 'u' })).tiers.semantic.status, 'ok');
    await slow.close();
    const broken = await createMemory(
      { sqlite_path: join(dir, 'broken.db'), embedding_model: 'hash', log_level: 'silent' },
      { loadEmbedder: () => Promise.reject(new Error('no such model file')) },
    );
    assert.deepEqual(await broken.ready(), { embedder: { model: 'hash', status: 'failed', error: 'no such model file' } });
    await broken.close();
  });
});
