// The HTTP server tells the process's long jobs (src/pace.ts) of a connection whose request is not
// read yet, and that it has been read: until then no job's slice begins, then they go on. A job's
// slice between a connection's accept and its read (a turn of the event loop later) made a probe's
// /health wait for two slices behind the jobs of a write of long turns.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startServer } from '../../../src/api/server.js';
import { room, SLICE_MS, sliceSpent } from '../../../src/pace.js';
import { testMemory } from '../../helpers/services.js';

describe('serve: a connection not read yet holds the jobs back', () => {
  let port = 0;
  let close: () => Promise<void> = async () => {};
  before(async () => {
    const { memory, services } = await testMemory({ port: 0 });
    const server = await startServer({ memory, services, processMetrics: false });
    port = (server.address() as AddressInfo).port;
    close = async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await services.close();
    };
  });
  after(() => close());

  test('until its request is read, and no longer', async () => {
    const socket: Socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    // the server accepts it at the loop's next reads
    await new Promise((r) => setTimeout(r, 2));
    let returned = false;
    // a job's look inside a young slice
    sliceSpent();
    const resumed = room().then(() => {
      returned = true;
    });
    await new Promise((r) => setTimeout(r, SLICE_MS));
    assert.equal(returned, false, 'no slice while the connection is not read');
    // kept alive: the connection's end is no read of its request
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        text += d;
        const length = /content-length: (\d+)/i.exec(text);
        const body = text.indexOf('\r\n\r\n');
        if (length && body >= 0 && text.length - body - 4 >= Number(length[1])) resolve(text);
      });
      socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    });
    assert.match(answer, /^HTTP\/1\.1 200/);
    // a timer's turn after the answer: the job has gone on (held for the connection, it would wait
    // UNREAD_HOLD_MS after its arrival)
    await new Promise((r) => setTimeout(r, 2));
    assert.equal(returned, true, 'the job goes on once the request is read');
    await resumed;
    socket.destroy();
  });
});
