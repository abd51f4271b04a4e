import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { checkIntegrity } from '../../../src/memory/integrity.js';
import { registerOwnedText } from '../../../src/adapters/sqlite/owned-text.js';
import { runCli } from '../../helpers/cli.js';
import { testMemory } from '../../helpers/services.js';
import { tmpDir } from '../../helpers/tmp.js';
import { queueEnv, readDb } from '../queue/helpers.js';

interface Integrity {
  orphan_entries: { count: number; sample: Array<{ user_id: string; id: string }> };
  orphan_vectors: { count: number };
  stale: { count: number };
  unfinished: { count: number };
  duplicate_content: { groups: number };
  problems: number;
  repaired: { removed: number; realigned: number; requeued: number } | null;
}

/**
 * `doctor` checks what must never be stored — entries and vectors of deleted turns (what a delete
 * racing a persist job left in older builds), copies whose text is not their memory's, turns whose jobs
 * never finished — lists equal text under several ids, and `doctor --repair` puts it right.
 */
describe('doctor: integrity checks and --repair (the built CLI, one SQLite file)', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const env = queueEnv({ sqlitePath: dbPath });

  it('finds orphan entries and vectors, stale copies, unfinished turns and duplicate text; --repair leaves none', { timeout: 120_000 }, async () => {
    const file = join(dir, 'turns.jsonl');
    const turns = [
      { id: 'live-1', user_id: 'ann', session_id: 's', role: 'user', content: 'Ann keeps bees in Porto', importance: 0.9 },
      { id: 'gone-1', user_id: 'ann', session_id: 's', role: 'user', content: 'my old door code is 1234', importance: 0.9 },
      { id: 'stale-1', user_id: 'ann', session_id: 's', role: 'user', content: 'Ann drives a green van', importance: 0.9 },
      { id: 'late-1', user_id: 'ann', session_id: 's', role: 'user', content: 'Ann waits for a parcel', importance: 0.9 },
      { id: 'twin-1', user_id: 'bob', session_id: 't', role: 'user', content: 'Bob likes the ferry', importance: 0.9 },
      { id: 'twin-2', user_id: 'bob', session_id: 't', role: 'user', content: 'Bob likes the ferry', importance: 0.9 },
    ];
    writeFileSync(file, turns.map((t) => JSON.stringify(t)).join('\n'));
    assert.equal((await runCli(['ingest', file, '--wait'], env)).code, 0);
    const clean = await runCli(['doctor', '--json'], env);
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal((JSON.parse(clean.stdout) as { integrity: Integrity }).integrity.problems, 0);

    // what older builds could leave: the turn-log row deleted, its entry and vector written after it
    const db = new Database(dbPath);
    db.pragma('busy_timeout = 5000');
    // a write to entries runs the text index's triggers, which call the function every connection of the service registers
    registerOwnedText(db);
    db.prepare("DELETE FROM turns WHERE user_id = 'ann' AND id = 'gone-1'").run();
    db.prepare("UPDATE entries SET content = 'Ann drives a red van', content_hash = 'x' WHERE user_id = 'ann' AND id = 'stale-1'").run();
    db.prepare("UPDATE turns SET persisted_at = NULL, accepted_at = ? WHERE user_id = 'ann' AND id = 'late-1'").run(Date.now() - 3_600_000);
    db.close();

    const found = await runCli(['doctor', '--json'], env);
    assert.equal(found.code, 1, 'stored data that must not exist fails the doctor');
    const before = (JSON.parse(found.stdout) as { integrity: Integrity }).integrity;
    assert.deepEqual(before.orphan_entries.sample, [{ user_id: 'ann', id: 'gone-1' }]);
    assert.equal(before.orphan_vectors.count, 1);
    assert.equal(before.stale.count, 1);
    assert.equal(before.unfinished.count, 1);
    assert.equal(before.duplicate_content.groups, 1, 'equal text under two ids is listed');
    const human = await runCli(['doctor'], env);
    assert.match(human.stdout, /integrity {3}PROBLEM: 1 long-term entries of deleted turns \(ann\/gone-1\)/);
    // the first line is the verdict, and it is not "ok" above PROBLEM lines (issue 26, defect 10)
    assert.match(human.stdout, /^status {6}problem: 4 integrity problems \(below\)\n/);
    assert.equal(human.code, 1);
    assert.match(human.stdout, /doctor --repair/);

    const repaired = await runCli(['doctor', '--repair', '--json'], env);
    assert.equal(repaired.code, 0, repaired.stderr);
    const after = (JSON.parse(repaired.stdout) as { integrity: Integrity }).integrity;
    assert.equal(after.problems, 0, JSON.stringify(after));
    assert.deepEqual(after.repaired, { removed: 2, realigned: 1, requeued: 1 });
    assert.equal(after.duplicate_content.groups, 1, 'duplicates are kept: each id is its own memory');
    readDb(dbPath, (d) => {
      assert.equal((d.prepare("SELECT count(*) AS n FROM entries WHERE id = 'gone-1'").get() as { n: number }).n, 0);
      assert.equal((d.prepare("SELECT count(*) AS n FROM vectors WHERE id = 'gone-1'").get() as { n: number }).n, 0);
      assert.equal((d.prepare("SELECT content FROM entries WHERE id = 'stale-1'").get() as { content: string }).content, 'Ann drives a green van');
      assert.equal((d.prepare("SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL").get() as { n: number }).n, 0);
      assert.equal((d.prepare("SELECT content FROM vectors WHERE id = 'stale-1'").get() as { content: string }).content, 'Ann drives a green van');
    });
    assert.equal((await runCli(['doctor'], env)).code, 0);
  });

  it('finds and removes short-term copies of turns that are gone', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns([
      { id: 'keep', user_id: 'cy', session_id: 'c', role: 'user', content: 'Cy plays the oboe' },
      { id: 'lost', user_id: 'cy', session_id: 'c', role: 'user', content: 'Cy lost the keys' },
    ]);
    await memory.idle();
    await s.turnLog.delete('cy', ['lost']);
    await s.longTerm.delete('cy', ['lost']);
    await s.vectors.delete('cy', ['lost']);
    const found = await checkIntegrity(s);
    assert.deepEqual(found.orphan_short_term, { count: 1, sample: [{ user_id: 'cy', id: 'lost' }] });
    const repaired = await checkIntegrity(s, { repair: true });
    assert.equal(repaired.problems, 0);
    assert.deepEqual((await s.shortTerm.recent('cy', 'c')).map((t) => t.id), ['keep']);
    await memory.close();
  });
});
