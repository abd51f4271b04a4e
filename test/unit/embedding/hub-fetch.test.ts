// The model-hub fetch that gives up on no progress: a loopback HTTP server plays the hub.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { fetchWithIdleTimeout } from '../../../src/adapters/transformers/embedder.js';

describe('fetchWithIdleTimeout', () => {
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    open.add(res);
    if (req.url === '/silent') return; // accepts, never answers
    if (req.url === '/stalls') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('first chunk'); // then nothing
      return;
    }
    if (req.url === '/slow') {
      // a download that is slow but moving: 6 chunks, 50 ms apart
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let n = 0;
      const timer = setInterval(() => {
        res.write(`chunk${n}.`);
        if (++n === 6) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      return;
    }
    res.writeHead(404).end('no');
  });
  let base = '';

  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    for (const res of open) res.destroy();
    await new Promise((r) => server.close(r));
  });

  it('fails a request that gets no answer', async () => {
    await assert.rejects(fetchWithIdleTimeout(200)(`${base}/silent`), /no answer from 127\.0\.0\.1:\d+ for 200 ms/);
  });

  it('fails a download that stops moving', async () => {
    const res = await fetchWithIdleTimeout(200)(`${base}/stalls`);
    assert.equal(res.status, 200);
    await assert.rejects(res.text(), /no answer from 127\.0\.0\.1:\d+ for 200 ms/);
  });

  it('lets a slow but moving download finish, status and headers intact', async () => {
    const res = await fetchWithIdleTimeout(1000)(`${base}/slow`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    assert.equal(await res.text(), 'chunk0.chunk1.chunk2.chunk3.chunk4.chunk5.');
  });

  it('passes other statuses through', async () => {
    const res = await fetchWithIdleTimeout(1000)(`${base}/missing`);
    assert.equal(res.status, 404);
    assert.equal(await res.text(), 'no');
  });

  it("still honours the caller's own abort signal", async () => {
    const controller = new AbortController();
    const pending = fetchWithIdleTimeout(5000)(`${base}/silent`, { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await assert.rejects(pending, /caller gave up/);
  });
});
