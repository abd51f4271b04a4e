import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { ReindexReport } from '../../../src/memory/reindex.js';
import { openDatabase } from '../../../src/adapters/sqlite/db.js';
import { EmbeddedVectorIndex } from '../../../src/adapters/embedded/vector-index.js';
import { writeTinyModel } from '../../fixtures/tiny-model.js';
import { CLI, runCli, stop } from '../../helpers/cli.js';
import { until } from '../../helpers/until.js';
import { testMemory } from '../../helpers/services.js';
import { tmpDir } from '../../helpers/tmp.js';

const N = 4000;
const TINY = { id: 'test/tiny-bert@128', dim: 128 };

/** how many vectors of the tiny model the file holds */
function tinyVectors(sqlitePath: string): Promise<number> {
  const db = openDatabase(sqlitePath);
  return new EmbeddedVectorIndex(db).count(TINY).finally(() => db.close());
}

describe('neuralcleave memory reindex (the built CLI)', () => {
  const dir = tmpDir();
  const sqlitePath = join(dir, 'nc.db');
  let env: Record<string, string>;

  before(async () => {
    const modelDir = join(dir, 'models');
    env = {
      NEURALCLEAVE_SQLITE_PATH: sqlitePath,
      NEURALCLEAVE_EMBEDDING_MODEL: writeTinyModel(modelDir, { hidden: 128 }),
      NEURALCLEAVE_MODEL_DIR: modelDir,
      NEURALCLEAVE_LOG_LEVEL: 'warn',
    };
    // N turns ingested and embedded under the hash model
    const { services } = await testMemory({ sqlite_path: sqlitePath }, { reconcile: false });
    for (let i = 0; i < N; i += 1000) {
      await services.writePath.addTurns(
        Array.from({ length: 1000 }, (_, k) => ({ id: `t${i + k}`, user_id: `u${(i + k) % 5}`, session_id: `s${(i + k) % 40}`, role: 'user', content: `note ${i + k}: my favourite food is pizza number ${(i + k) % 97}` })),
      );
    }
    await services.writePath.addTurns([{ id: 'fact', user_id: 'u0', session_id: 'facts', role: 'user', content: 'I am allergic to peanuts and milk', importance: 0.9 }]);
    await services.queue.idle();
    await services.close();
  });

  it('killed with SIGKILL mid-way, a second run finishes without embedding a finished turn again, while a service on the same file keeps answering', async () => {
    // killed once its first batches are written (it prints no progress lines: stderr is not a terminal)
    const first = spawn(process.execPath, [CLI, 'memory', 'reindex', '--batch-size', '50'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
    await until('the first run to write vectors', async () => (await tinyVectors(sqlitePath)) > 0, 120_000, 5);
    await stop(first, 'SIGKILL');
    const finished = await tinyVectors(sqlitePath);
    assert.ok(finished > 0 && finished < N, `the first run was killed part-way (${finished} of ${N + 1} embedded)`);

    // the service, still on the hash model, answers from its own vectors during the whole second run
    const { memory, services } = await testMemory({ sqlite_path: sqlitePath }, { reconcile: false, runWorkers: false });
    const before = await memory.retrieve({ query: 'which foods am I allergic to', user_id: 'u0' });
    assert.equal(before.results[0]?.id, 'fact');
    const second = runCli(['memory', 'reindex', '--batch-size', '50', '--json'], env);
    let answered = 0;
    let running = true;
    void second.finally(() => (running = false));
    while (running) {
      const r = await memory.retrieve({ query: 'which foods am I allergic to', user_id: 'u0' });
      assert.equal(r.tiers.semantic.status === 'ok' || r.tiers.semantic.status === 'timeout', true);
      assert.equal(r.results[0]?.id, 'fact');
      answered++;
      await new Promise((res) => setTimeout(res, 20));
    }
    await services.close();
    const { code, stdout, stderr } = await second;
    assert.equal(code, 0, stderr);
    assert.ok(answered > 0);
    const report = JSON.parse(stdout) as ReindexReport & { backend: string };
    assert.equal(report.total, N + 1);
    assert.equal(report.kept, finished, 'what the killed run wrote is kept');
    assert.equal(report.embedded, N + 1 - finished, 'and only the rest is embedded');
    assert.equal(await tinyVectors(sqlitePath), N + 1);

    // a service configured with the tiny model now finds the fact through its vectors
    const tiny = await testMemory({ sqlite_path: sqlitePath, embedding_model: env.NEURALCLEAVE_EMBEDDING_MODEL, model_dir: env.NEURALCLEAVE_MODEL_DIR }, { reconcile: false, runWorkers: false });
    await tiny.services.embedders.ready();
    const after = await tiny.memory.retrieve({ query: 'which foods am I allergic to', user_id: 'u0' });
    await tiny.services.close();
    assert.equal(after.tiers.semantic.status, 'ok');
    assert.ok(after.results.some((x) => x.id === 'fact' && x.explain.similarity !== null), 'the semantic tier found the fact with the new model');

    // a third run has nothing left to do
    const third = await runCli(['memory', 'reindex', '--json'], env);
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual((({ embedded, kept }) => ({ embedded, kept }))(JSON.parse(third.stdout) as ReindexReport), { embedded: 0, kept: N + 1 });
  });
});
