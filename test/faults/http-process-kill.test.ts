import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { childrenOf } from '../helpers/children.js';
import { stop } from '../helpers/cli.js';
import { tmpDir } from '../helpers/tmp.js';
import { Fleet, TurnStream, assertIntact, assertStoredOnce, expectedFrom, faultEnv, pendingIn, retry, turnsIn, until } from './helpers.js';

/**
 * docs/architecture.md, `serve --processes N`: one HTTP process of two is SIGKILLed while clients
 * stream turn writes at both. The primary stays up (it was answering the dead process's calls and
 * telling it the connection counts), starts another HTTP process, and the service goes on: every turn
 * that got a 202 is stored once in every tier, the client's retries of what got no answer too, and
 * SIGTERM then stops it cleanly.
 */
describe('faults: SIGKILL one HTTP process of serve --processes 2 during turn writes', () => {
  const dir = tmpDir('nc-fault-http-');
  const fleet = new Fleet();
  after(() => fleet.killAll());

  it('replaces it and loses no acknowledged turn', { timeout: 150_000 }, async () => {
    const dbPath = join(dir, 'http-kill.db');
    const serve = await fleet.serve(faultEnv({ sqlitePath: dbPath }));
    const first = childrenOf(serve.child.pid!);
    assert.equal(first.length, 2, 'two HTTP processes');

    // connections of their own (no keep-alive): each request may reach either process
    const stream = new TurnStream(serve.base, 'httpkill', 8);
    await until('300 acknowledged turns', () => stream.acknowledged.size >= 300 || stream.errors.length > 0, 90_000, 5);
    process.kill(first[0]!, 'SIGKILL');
    await until('another HTTP process in its place', () => {
      const now = childrenOf(serve.child.pid!);
      return now.length === 2 && !now.includes(first[0]!);
    }, 30_000, 20);
    // a loop whose request died with the process stopped there; the client's next writes reach the
    // processes now serving
    await stream.stop();
    const after = new TurnStream(serve.base, 'httpkill-after', 8);
    await until('300 turns acknowledged after the kill', () => after.acknowledged.size >= 300 || after.errors.length > 0 || after.unanswered.length > 0, 90_000, 5);
    await after.stop();
    for (const s of [stream, after]) assert.deepEqual(s.errors, [], 'every answer was a 202');
    assert.deepEqual(after.unanswered, [], 'every write after the replacement was answered');
    assert.equal(serve.child.exitCode, null, 'the primary is up');

    const retried = await retry(serve.base, stream.unanswered);
    const expected = new Map([...expectedFrom(stream, [...stream.acknowledged, ...retried]), ...expectedFrom(after, after.acknowledged)]);
    await until('every turn processed', () => pendingIn(dbPath) === 0 && turnsIn(dbPath) === expected.size, 90_000, 100);
    await assertStoredOnce(dbPath, expected);
    assert.match(serve.output(), /an HTTP process exited; starting another/);
    assert.equal(await stop(serve.child, 'SIGTERM'), 0, 'SIGTERM stops the service cleanly');
    assertIntact(dbPath);
  });
});
