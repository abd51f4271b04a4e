import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { writeConversations, type Fact } from '../../fixtures/conversations.js';
import { runCli } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';

function counts(dbPath: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      turns: one('SELECT count(*) AS n FROM turns'),
      entries: one('SELECT count(*) AS n FROM entries'),
      vectors: one('SELECT count(*) AS n FROM vectors'),
      pending: one('SELECT count(*) AS n FROM turns WHERE persisted_at IS NULL OR embedded_with IS NULL'),
    };
  } finally {
    db.close();
  }
}

describe('neuralcleave ingest and retrieve (separate processes, embedded defaults)', () => {
  const dir = tmpDir();
  const file = join(dir, 'turns.jsonl');
  const env = { NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'), NEURALCLEAVE_EMBEDDING_MODEL: 'hash', NEURALCLEAVE_LOG_LEVEL: 'warn' };
  let facts: Fact[] = [];

  before(() => {
    facts = writeConversations(file, { users: 10, sessions: 10, turnsPerSession: 30 }); // 3,000 turns
  });

  it('ingests a few thousand turns and waits until every one is processed', async () => {
    const r = await runCli(['ingest', file, '--wait', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { file, turns: 3000, accepted: 3000, duplicates: 0, waited: true });
    const c = counts(env.NEURALCLEAVE_SQLITE_PATH);
    assert.equal(c.turns, 3000);
    assert.equal(c.vectors, 3000, 'every turn embedded once');
    assert.equal(c.pending, 0);
    assert.ok(c.entries > 0 && c.entries < 3000, `important turns only, distinct text (${c.entries})`);
  });

  it('finds facts stated sessions earlier from a new session, the same after a restart', async () => {
    const runs: string[][] = [];
    for (let round = 0; round < 2; round++) {
      const ids: string[] = [];
      for (const f of facts) {
        const r = await runCli(['retrieve', f.query, '--user', f.user_id, '--session', 'brand-new', '--json'], env);
        assert.equal(r.code, 0, r.stderr);
        const out = JSON.parse(r.stdout) as { results: Array<{ id: string; content: string; user_id: string }>; prompt_blocks: string };
        assert.ok(out.results.slice(0, 3).some((x) => x.content === f.content), `"${f.query}" finds "${f.content}" in the top 3`);
        assert.ok(out.results.every((x) => x.user_id === f.user_id), 'only the user\'s own memories');
        assert.match(out.prompt_blocks, new RegExp(f.content.slice(0, 20)));
        ids.push(out.results.map((x) => x.id).join(','));
      }
      runs.push(ids);
    }
    assert.deepEqual(runs[1], runs[0], 'a new process (a restart) gives the same results');
  });

  it('stores nothing twice when the same file is imported again', async () => {
    const before = counts(env.NEURALCLEAVE_SQLITE_PATH);
    const r = await runCli(['ingest', file, '--wait', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).duplicates, 3000);
    assert.deepEqual(counts(env.NEURALCLEAVE_SQLITE_PATH), before);
  });

  it('answers batch retrieval with one JSON line per query', async () => {
    const batch = join(dir, 'queries.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(batch, facts.slice(0, 3).map((f) => JSON.stringify({ query: f.query, user_id: f.user_id, top_k: 5 })).join('\n') + '\n');
    const r = await runCli(['retrieve', '--batch', batch], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { results: unknown[] });
    assert.equal(lines.length, 3);
    assert.ok(lines.every((l) => l.results.length <= 5 && l.results.length > 0));
  });

  it('rejects a bad line naming file, line and field, storing nothing of the file', async () => {
    const bad = join(dir, 'bad.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bad, [JSON.stringify({ session_id: 'x', role: 'user', content: 'fine' }), JSON.stringify({ session_id: 'x', role: 'narrator', content: 'no' })].join('\n'));
    const before = counts(env.NEURALCLEAVE_SQLITE_PATH);
    const r = await runCli(['ingest', bad], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.jsonl:2: .*role/);
    assert.deepEqual(counts(env.NEURALCLEAVE_SQLITE_PATH), before);
  });

  it('exits 2 naming an unknown config variable or a bad value', async () => {
    const r = await runCli(['doctor'], { ...env, NEURALCLEAVE_CONTEXT_WINDOWS: '10' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /NEURALCLEAVE_CONTEXT_WINDOWS/);
    const r2 = await runCli(['doctor'], { ...env, NEURALCLEAVE_PORT: '-1' });
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /port/);
    assert.equal(r2.stderr.trim().split('\n').length, 1, 'one line');
  });
});
