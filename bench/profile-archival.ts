// How long the archival run holds the event loop: the realtext corpus as is (RealMem and LoCoMo dev,
// read where they lie) archived in process, every session, with no request in sight (so no slice
// pauses and each delay is one piece of work), and the event loop's delay sampled every millisecond.
// `--checkpoints-in-commits` gives the store's connection SQLite's own auto-checkpoint back (1,000
// pages, inside the committing transaction) in place of the checkpoint thread, for comparison.
//   node dist/bench/profile-archival.js [--realtext-data DIR] [--checkpoints-in-commits] [--runs N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readLocomoCorpus, readRealMem } from './sections/realtext.js';
import { benchServices, seedSessions } from './sections/http.js';
import { sqliteOf } from './sqlite.js';
import { TokenCounter } from '../src/compaction/tokens.js';

const args = process.argv.slice(2);
const at = args.indexOf('--realtext-data');
const data = resolve(at >= 0 ? args[at + 1]! : '../shared/data');
const inCommits = args.includes('--checkpoints-in-commits');
const runs = Number(args[args.indexOf('--runs') + 1] || 1);
const corpus = [...readRealMem(join(data, 'realmem-dev')).sessions, ...readLocomoCorpus(join(data, 'locomo-dev.json')).sessions];
// serve builds the token table before it listens; so does this, or the first summary's count builds it
new TokenCounter().count('the rank table, built before the run');

for (let run = 0; run < runs; run++) {
  const dir = mkdtempSync(join(tmpdir(), 'nc-prof-archival-'));
  try {
    const { services } = await benchServices(dir);
    await seedSessions(services, corpus);
    const store = sqliteOf(services);
    if (inCommits) {
      await store.checkpoints?.stop();
      store.db.pragma('wal_autocheckpoint = 1000');
    }
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const t0 = performance.now();
    const report = await services.archiver.run({});
    const ms = performance.now() - t0;
    delay.disable();
    const p = (q: number) => (delay.percentile(q) / 1e6).toFixed(1);
    process.stdout.write(
      `${inCommits ? 'checkpoints in commits' : 'checkpoint thread'}: ${report.archived} sessions archived in ${(ms / 1000).toFixed(1)} s; ` +
        `event-loop delay p99 ${p(99)} ms, p99.9 ${p(99.9)} ms, max ${(delay.max / 1e6).toFixed(1)} ms\n`,
    );
    await services.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
