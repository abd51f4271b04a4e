// Profiles one ingest of N turns through the real write path (for `node --cpu-prof`).
// Takes: N (default 10000). Prints the rate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { wire } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { ChatText } from './sections/chat-text.js';

const n = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'nc-prof-'));
const s = await wire(parseConfig({ sqlite_path: join(dir, 'p.db'), embedding_model: 'hash', log_level: 'silent', worker_concurrency: Number(process.argv[3] ?? 16) }), { logger: pino({ level: 'silent' }), autoCompact: false });
await s.embedders.ready();
const text = new ChatText(1);
const turns = Array.from({ length: n }, (_, i) => ({ user_id: `u${i % 20}`, session_id: `s${Math.floor(i / 800)}`, ...text.turn(Math.floor(i / 20)) }));
const t0 = performance.now();
for (let i = 0; i < n; i += 500) await s.writePath.addTurns(turns.slice(i, i + 500));
const t1 = performance.now();
await s.queue.idle();
const t2 = performance.now();
process.stdout.write(`accept ${((t1 - t0) / 1000).toFixed(2)} s, processed ${((t2 - t0) / 1000).toFixed(2)} s: ${Math.round(n / ((t2 - t0) / 1000))} turns/s\n`);
await s.close();
rmSync(dir, { recursive: true, force: true });
