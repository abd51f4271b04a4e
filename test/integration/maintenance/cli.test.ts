import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';
import { queueEnv, readDb } from '../queue/helpers.js';

interface Entry {
  id: string;
  content: string;
  importance: number;
  pinned: boolean;
  kind: string;
}

/** The maintenance commands of docs/architecture.md, maintenance as users run them: confirmation, what they print, exit codes. */
describe('memory edit/delete/prune/clear, archive --dry-run, doctor', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const env = queueEnv({ sqlitePath: dbPath });
  const cli = (args: string[]) => runCli(args, env);
  const json = async <T>(args: string[]): Promise<T> => {
    const r = await cli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };

  it('edits, deletes and prunes with confirmation, printing what changed', { timeout: 180_000 }, async () => {
    const file = join(dir, 'turns.jsonl');
    const old = new Date(Date.now() - 50 * 86_400_000).toISOString();
    writeFileSync(
      file,
      [
        { id: 'm1', user_id: 'ann', session_id: 's', role: 'user', content: 'Ann lives in Porto', importance: 0.9 },
        { id: 'm2', user_id: 'ann', session_id: 's', role: 'user', content: 'Ann likes sardines', importance: 0.4 },
        { id: 'm3', user_id: 'ann', session_id: 'old', role: 'user', content: 'Ann visited Oslo in March', importance: 0.8, created_at: old },
        { id: 'm4', user_id: 'bob', session_id: 'b', role: 'user', content: 'Bob lives in Rome', importance: 0.9 },
      ]
        .map((t) => JSON.stringify(t))
        .join('\n'),
    );
    assert.equal((await cli(['ingest', file, '--wait'])).code, 0);

    const edited = await json<Entry>(['memory', 'edit', 'm1', '--user', 'ann', '--content', 'Ann lives in Braga', '--importance', '0.95', '--pin', '--json']);
    assert.deepEqual([edited.content, edited.importance, edited.pinned], ['Ann lives in Braga', 0.95, true]);
    assert.equal((await cli(['memory', 'edit', 'm1'])).code, 2, 'an edit with nothing to change is bad usage');
    assert.equal((await cli(['memory', 'edit', 'm1', '--user', 'ann', '--importance', '3'])).code, 2);

    const refused = await cli(['memory', 'delete', 'm2', '--user', 'ann']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--yes/);
    const deleted = await cli(['memory', 'delete', 'm2', '--user', 'ann', '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /deleted m2 from long_term, turn_log, .*semantic/);
    // an unknown id is the same failure for every command (exit 1, the id named), not bad usage
    for (const args of [['memory', 'delete', 'nope', '--user', 'ann', '--yes'], ['memory', 'edit', 'nope', '--user', 'ann', '--importance', '0.5']]) {
      const unknown = await cli(args);
      assert.equal(unknown.code, 1, `${args.join(' ')}: ${unknown.stderr}`);
      assert.equal(unknown.stdout, '');
      assert.match(unknown.stderr, /^neuralcleave: memory nope\b.*not found\n$/);
    }

    const dry = await json<{ sessions: Array<{ session_id: string; status: string }> }>(['memory', 'archive', '--dry-run', '--json']);
    assert.deepEqual(dry.sessions.map((s) => [s.session_id, s.status]), [['old', 'would_archive']]);

    assert.equal((await cli(['memory', 'prune', '--user', 'ann'])).code, 2, 'prune needs a criterion');
    // no --user would act on every user: refused before anything is touched, naming both ways out
    const everyone = await cli(['memory', 'prune', '--below-importance', '0.99', '--yes']);
    assert.equal(everyone.code, 2, everyone.stderr);
    assert.match(everyone.stderr, /^neuralcleave: prune acts on one user: give --user U, or --all-users to prune every user's memories\n$/);
    const both = await cli(['memory', 'prune', '--user', 'ann', '--all-users', '--below-importance', '0.99', '--yes']);
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /--user or --all-users, not both/);
    const pruned = await json<{ deleted: number; ids: string[] }>(['memory', 'prune', '--user', 'ann', '--older-than-days', '40', '--yes', '--json']);
    assert.deepEqual(pruned, { deleted: 1, ids: ['m3'] });
    const list = await json<Entry[]>(['memory', 'list', '--user', 'ann', '--json']);
    assert.deepEqual(list.map((e) => e.id), ['m1'], 'the pinned edit stays; m2 deleted; m3 pruned');
    // --all-users says it: bob's unpinned memory goes, ann's pinned one stays
    const all = await json<{ deleted: number; ids: string[]; memories: Array<{ user_id: string; id: string }> }>(['memory', 'prune', '--all-users', '--below-importance', '0.99', '--yes', '--json']);
    assert.deepEqual(all, { deleted: 1, ids: ['m4'], memories: [{ user_id: 'bob', id: 'm4' }] });

    const doctor = await json<{ sqlite: { writable: boolean; schema_version: number; latest_version: number; path: string }; archival: { cron: string; next_run: string; last_run: { dry_run: boolean } } }>(['doctor', '--json']);
    assert.equal(doctor.sqlite.writable, true);
    assert.equal(doctor.sqlite.path, dbPath);
    assert.equal(doctor.sqlite.schema_version, doctor.sqlite.latest_version);
    assert.equal(doctor.archival.cron, '0 3 * * *');
    assert.ok(Date.parse(doctor.archival.next_run) > Date.now());
    assert.equal(doctor.archival.last_run.dry_run, true);
    const human = await cli(['doctor']);
    assert.match(human.stdout, /sqlite .* writable by this process/);
    assert.match(human.stdout, /archival {4}"0 3 \* \* \*"/);

    assert.equal((await cli(['memory', 'clear', '--all'])).code, 2, 'clear --all needs --yes');
    assert.equal((await cli(['memory', 'clear'])).code, 2, 'clear needs --session or --all');
    const cleared = await cli(['memory', 'clear', '--all', '--yes']);
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout, /^erased all memories:\n {2}long-term {3}1 turn, 0 summaries, 0 archives\n {2}turn log {4}1 turn\n {2}short-term {2}0 sessions\n/);
    assert.deepEqual(
      readDb(dbPath, (db) => ['turns', 'entries', 'vectors'].map((t) => (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n)),
      [0, 0, 0],
    );
  });
});

describe('memory archive', () => {
  it('archives, then merges the text index and says so; the merged index still finds every memory', { timeout: 180_000 }, async () => {
    const dir = tmpDir();
    const env = queueEnv({ sqlitePath: join(dir, 'nc.db') });
    const old = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    const file = join(dir, 'turns.jsonl');
    const turns = Array.from({ length: 12 }, (_, i) => ({ id: `t${i}`, user_id: 'ann', session_id: i < 6 ? 'old' : 'new', role: 'user', content: `Ann noted item ${i}: the harbour ferry leaves at ${i} o'clock`, importance: 0.8, created_at: i < 6 ? old(60) : old(1) }));
    // one ingest a turn: a commit, and a piece of the text index, each
    for (const [i, t] of turns.entries()) {
      writeFileSync(file, JSON.stringify(t));
      assert.equal((await runCli(['ingest', file, '--wait'], env)).code, 0, `ingest ${i}`);
    }
    const pieces = () => readDb(join(dir, 'nc.db'), (db) => db.prepare('SELECT count(DISTINCT segid) FROM entries_fts_idx').pluck().get() as number);
    assert.ok(pieces() > 1);
    const r = await runCli(['memory', 'archive'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^archived 1 session inactive since before .*; 6 memories replaced$/m);
    assert.match(r.stdout, /^text index merged: \d+ pieces → 1 in \d+ ms$/m);
    assert.equal(pieces(), 1);
    const found = await runCli(['retrieve', 'harbour ferry', '--user', 'ann', '--json'], env);
    assert.equal(found.code, 0, found.stderr);
    const ids = (JSON.parse(found.stdout) as { results: Array<{ id: string; kind: string }> }).results.map((x) => x.id);
    for (let i = 6; i < 12; i++) assert.ok(ids.includes(`t${i}`), `t${i} found`);
  });
});
