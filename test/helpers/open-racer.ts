import { openDatabase } from '../../src/adapters/sqlite/db.js';

/**
 * A child process of test/unit/adapters/sqlite/open.test.ts: told a path and a moment, it spins until
 * that moment (so that its siblings open the same new file in the same instant), opens the file and
 * says what came of it. One process serves many rounds: a start-up per round would spread the racers.
 */
process.on('message', (m: { path: string; at: number }) => {
  while (Date.now() < m.at) {
    // spin: a timer's wake-up is coarser than the race
  }
  try {
    openDatabase(m.path).close();
    process.send!({ ok: true });
  } catch (err) {
    process.send!({ ok: false, error: `${(err as { code?: string }).code ?? ''} ${(err as Error).message}` });
  }
});
process.send!({ ready: true });
