// The share of keep-alive connections each HTTP process of `serve --processes N` keeps: a process
// holding SKEWED times an even share closes connections one response at a time until it holds its share
// (and SLACK), never on a total that does not hold its own connections yet; the primary adds up the
// processes' counts.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { brokenPipe, uncaughtDuring } from '../../helpers/broken-pipe.js';
import { BALANCE_MS, ConnectionShare, ConnectionTally, REPORT_MS, SKEW_MS, SLACK, type CountMessage, type TotalMessage } from '../../../src/cluster/connections.js';

const socket = () => new EventEmitter() as unknown as Socket;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** a share on a clock the test moves, holding `held` connections of `total` on two processes */
function holding(held: number, total: number) {
  const clock = { now: 0 };
  const share = new ConnectionShare(() => {}, () => clock.now);
  const sockets = Array.from({ length: held }, socket);
  for (const s of sockets) share.opened(s);
  share.heard({ nc: 'connections-total', total, processes: 2 });
  return { share, sockets, clock };
}

describe('a process\'s share of the connections', () => {
  it('once skewed for a while, closes what it holds beyond an even share, each connection once, and nothing more', () => {
    const { share, sockets, clock } = holding(16, 16);
    // a skew seen a moment ago may be counts a report old
    assert.ok(sockets.every((s) => !share.shouldClose(s)));
    clock.now += SKEW_MS;
    // every connection asks again and again: 16 held, a share of 8 + SLACK
    const closed = new Set<Socket>();
    for (let round = 0; round < 3; round++) for (const s of sockets) if (share.shouldClose(s)) closed.add(s);
    assert.equal(closed.size, 16 - (8 + SLACK));
    // the closed ones go; the rest are within the share
    for (const s of closed) s.emit('close');
    for (const s of sockets) if (!closed.has(s)) assert.equal(share.shouldClose(s), false);
  });

  it('while it balances, closes again a replacement that came back to it; then only a new skew starts it', () => {
    const { share, sockets, clock } = holding(16, 16);
    assert.equal(share.shouldClose(sockets[0]!), false, 'the skew has just been seen');
    clock.now += SKEW_MS;
    const closed = sockets.filter((s) => share.shouldClose(s));
    assert.equal(closed.length, 7);
    for (const s of closed) s.emit('close');
    // two of the seven new connections landed here again: closed as well while the balancing lasts
    const back = [socket(), socket()];
    for (const s of back) share.opened(s);
    clock.now += BALANCE_MS / 2;
    assert.deepEqual(back.map((s) => share.shouldClose(s)), [true, true]);
    for (const s of back) s.emit('close');
    // past the balancing, one more than the share is not a skew
    clock.now += BALANCE_MS;
    const late = [socket(), socket()];
    for (const s of late) share.opened(s);
    assert.deepEqual(late.map((s) => share.shouldClose(s)), [false, false]);
  });

  it('does not balance for a skew that went before it lasted', () => {
    // the other process's new connections not reported yet: 14 of 16 looks skewed
    const { share, sockets, clock } = holding(14, 16);
    assert.equal(share.shouldClose(sockets[0]!), false);
    clock.now += SKEW_MS / 2;
    // its report came: 14 of 20 is not a skew
    share.heard({ nc: 'connections-total', total: 20, processes: 2 });
    assert.equal(share.shouldClose(sockets[1]!), false);
    clock.now += SKEW_MS;
    share.heard({ nc: 'connections-total', total: 16, processes: 2 });
    assert.equal(share.shouldClose(sockets[2]!), false, 'a skew seen again starts its wait over');
  });

  it('closes nothing while the total does not hold its own connections, nor when the processes are even', () => {
    // the primary's last word predates these connections
    const { share, sockets } = holding(8, 0);
    assert.ok(sockets.every((s) => !share.shouldClose(s)));
    share.heard({ nc: 'connections-total', total: 16, processes: 2 });
    assert.ok(sockets.every((s) => !share.shouldClose(s)), '8 of 16 on two processes');
    // 8 of 10 is more than a share and one, but not skewed: counts a report old or a replacement
    // connection that landed here again would otherwise move connections back and forth
    share.heard({ nc: 'connections-total', total: 10, processes: 2 });
    assert.ok(sockets.every((s) => !share.shouldClose(s)), '8 of 10 on two processes');
    // a single process has nobody to hand a connection to
    share.heard({ nc: 'connections-total', total: 8, processes: 1 });
    assert.ok(sockets.every((s) => !share.shouldClose(s)));
  });

  it('reports its count once for many changes', async () => {
    const sent: CountMessage[] = [];
    const share = new ConnectionShare((m) => sent.push(m));
    const sockets = Array.from({ length: 5 }, socket);
    for (const s of sockets) share.opened(s);
    sockets[0]!.emit('close');
    await wait(REPORT_MS * 2);
    assert.deepEqual(sent, [{ nc: 'connections', open: 4 }]);
  });
});

describe('the primary\'s tally', () => {
  it('tells every process the total of their counts, and forgets a process that exits', async () => {
    const workers = [0, 1].map(() => {
      const heard: TotalMessage[] = [];
      const w = Object.assign(new EventEmitter(), { isConnected: () => true, send: (m: TotalMessage) => heard.push(m) });
      return { w, heard };
    });
    const tally = new ConnectionTally();
    for (const { w } of workers) tally.watch(w as unknown as Worker);
    workers[0]!.w.emit('message', { nc: 'connections', open: 16 });
    workers[1]!.w.emit('message', { nc: 'connections', open: 2 });
    workers[1]!.w.emit('message', { nc: 'other' });
    await wait(REPORT_MS * 2);
    for (const { heard } of workers) assert.deepEqual(heard, [{ nc: 'connections-total', total: 18, processes: 2 }]);
    workers[0]!.w.emit('exit');
    assert.deepEqual(tally.total(), { nc: 'connections-total', total: 2, processes: 1 });
  });

  it('a process that exited before the primary saw it gets no total, and the primary stays up', async () => {
    const gone = brokenPipe({ isConnected: () => true });
    const failures = await uncaughtDuring(async () => {
      const tally = new ConnectionTally();
      tally.watch(gone as unknown as Worker);
      gone.emit('message', { nc: 'connections', open: 3 });
      await wait(REPORT_MS * 2);
    });
    assert.deepEqual(failures.map((e) => e.message), []);
  });
});
