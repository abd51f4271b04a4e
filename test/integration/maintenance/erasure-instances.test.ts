// Erasure confirmations name processes by instance id (host, pid, random part): processes of several
// hosts share one PostgreSQL database, and their pids collide. Listener rows are written here as
// other hosts' processes would write them, into the store of a library instance on an SQLite file
// (the confirmation logic is the same on either engine; the rows' keys are in the contract suite).
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { LISTENER_GONE_MS } from '../../../src/memory/forget.js';
import { describeInstance, INSTANCE, instanceId, parseInstance } from '../../../src/memory/process-instance.js';
import { testMemory } from '../../helpers/services.js';

describe('erasure confirmations across hosts', () => {
  it('an instance id names host and pid, and a restarted process apart from the one before it', () => {
    assert.deepEqual(parseInstance(INSTANCE), { host: hostname(), pid: process.pid });
    assert.notEqual(instanceId('h', 7), instanceId('h', 7));
    assert.deepEqual(parseInstance('db-1.internal:4242:0a1b2c3d'), { host: 'db-1.internal', pid: 4242 });
    assert.equal(parseInstance('4242'), null);
    assert.equal(describeInstance(instanceId(hostname(), 4242)), '4242');
    assert.equal(describeInstance(instanceId('api-2', 4242)), '4242 on api-2');
  });

  it("waits for another host's process with this process's pid; drops one whose heartbeat stopped a minute ago, and a local one whose pid is gone", async () => {
    const { memory, services: s } = await testMemory();
    try {
      await memory.addTurns([{ user_id: 'ann', session_id: 'a', role: 'user', content: 'Ann keeps the spare key under the blue pot', importance: 0.9 }]);
      await memory.idle();
      const erasure = s.store.erasure;
      const twin = instanceId('api-host-b', process.pid);
      const done = instanceId('api-host-c', process.pid + 1);
      const silent = instanceId('api-host-d', 4242);
      const dead = instanceId(hostname(), 2 ** 22 + 1); // above pid_max's default: no such process here
      const now = Date.now();
      await erasure.heartbeat(twin, 0, now);
      await erasure.heartbeat(done, Number.MAX_SAFE_INTEGER, now);
      await erasure.heartbeat(silent, 0, now - LISTENER_GONE_MS - 1000);
      await erasure.heartbeat(dead, 0, now);
      const r = await memory.forget('ann', { confirmMs: 300 });
      assert.deepEqual(r.processes.unconfirmed, [twin], 'the other host\'s process with this pid is waited for, not taken for this one');
      assert.deepEqual(r.processes.confirmed, [done]);
      assert.ok(r.errors.some((e) => e.startsWith(`process ${process.pid} on api-host-b `) && e.includes('did not confirm')), r.errors.join('\n'));
      const left = (await erasure.listeners(INSTANCE)).map((l) => l.instance);
      assert.ok(!left.includes(silent) && !left.includes(dead), 'the gone ones are dropped from the table');
      assert.ok(left.includes(twin) && left.includes(done));
    } finally {
      await memory.close();
    }
  });
});
