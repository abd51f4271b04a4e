import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../../src/logger.js';
import { warmUp } from '../../../src/roots/warm-up.js';
import { tmpDir } from '../../helpers/tmp.js';

/** a debug-level logger whose lines are kept */
function keptLogger(): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { log: pino<never>({ level: 'debug' }, stream), lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('the warm-up writes a conversation and retrieves from it: every retrieve finds memories', async () => {
  const { log } = keptLogger();
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
  const { log, lines } = keptLogger();
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
