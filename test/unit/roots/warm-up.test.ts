import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { warmUp } from '../../../src/roots/warm-up.js';
import { capturingLogger } from '../../helpers/services.js';
import { tmpDir } from '../../helpers/tmp.js';

test('the warm-up writes a conversation and retrieves from it: every retrieve finds memories', async () => {
  const { logger: log } = capturingLogger('debug');
  const ran = await warmUp(log);
  assert.equal(ran.turns, 6);
  // 3 rounds × 2 queries × (plain, created_before), each asking for 8: a path that returned nothing
  // (an empty store, a failed write) would warm little of the ranking
  assert.ok(ran.results >= 12 * 4, `the warm-up's retrieves found ${ran.results} results`);
});

test('the warm-up touches no file and logs one line at debug, without the conversation', async () => {
  const dir = tmpDir();
  const cwd = process.cwd();
  process.chdir(dir); // the default sqlite_path is relative: a store opened on it would appear here
  const { logger: log, lines } = capturingLogger('debug');
  try {
    await warmUp(log);
  } finally {
    process.chdir(cwd);
  }
  assert.deepEqual(readdirSync(dir), []);
  const logged = lines();
  assert.deepEqual(logged.map((l) => [l.level, l.msg]), [[20, 'retrieval warmed up on a scratch store']]);
  assert.doesNotMatch(JSON.stringify(logged), /sister|nurse|budget/i);
});
