import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { startCli, stop } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';

// issue 25: what serve prepares before it listens. The first request that counted tokens (a /chat's
// prompt budget) built cl100k's rank table, 100–300 ms of synchronous work with every other request
// waiting; serve builds it before it listens
describe('serve', () => {
  const dir = tmpDir('nc-serve-start-up-');

  /** what `serve --processes N` wrote at debug level until it listened, on a file of its own */
  const outputUntilListening = async (processes: number, file: string): Promise<string> => {
    const env = { NEURALCLEAVE_SQLITE_PATH: join(dir, file), NEURALCLEAVE_EMBEDDING_MODEL: 'hash', NEURALCLEAVE_LOG_LEVEL: 'debug', NEURALCLEAVE_PORT: '0' };
    const serve = await startCli(['serve', '--processes', String(processes)], env, /listening on/);
    try {
      return serve.output();
    } finally {
      await stop(serve.child);
    }
  };

  it('has the token counter ready and its retrieval warmed up before it listens', async () => {
    const out = await outputUntilListening(1, 'nc.db');
    const ready = out.indexOf('token counter ready');
    assert.ok(ready >= 0 && ready < out.indexOf('listening on'), out.slice(0, 2000));
    // issue 25: a fresh process's first retrieve compiled its code, ~60–70 ms of the ~110 it held the loop
    const warmed = out.indexOf('retrieval warmed up on a scratch store');
    assert.ok(warmed >= 0 && warmed < out.indexOf('listening on'), out.slice(0, 2000));
  });

  // issue 25: an HTTP process loaded its vectors after it listened, holding the connections the
  // primary had handed it for the whole load (seconds at 100k vectors); it loads them first now
  it('has each HTTP process\'s semantic index loaded before the service listens', async () => {
    const out = await outputUntilListening(2, 'nc-warm.db');
    const listening = out.indexOf('listening on');
    const loaded = out.split('semantic index loaded before listening').length - 1;
    assert.equal(loaded, 2, out.slice(0, 3000));
    assert.ok(out.lastIndexOf('semantic index loaded before listening') < listening, out.slice(0, 3000));
    // each HTTP process warms its own code; the primary answers no request and does not
    assert.equal(out.split('retrieval warmed up on a scratch store').length - 1, 2, out.slice(0, 3000));
  });
});
