// Ingest throughput (turns/s) through the real write path — validation, the turn log, the short-term
// tier, the in-process queue and the `embed` and `persist` processors with the `hash` embedder — from
// `writePath.addTurns` in batches of 500 to `queue.idle()`. Beside it, the raw limit measured in the
// same run: a bare better-sqlite3 insert, in transactions of 500 turns, of exactly the rows one turn
// leaves in the file (its turn-log row, its long-term entry with the FTS5 row, its vector with the
// change-log row), on the same schema and indexes (the real migrations), vectors computed beforehand.
// The bare run writes an entry for exactly the turns the real run stored (those scored important).
// Rounds alternate real and bare runs; the medians are reported.
// Takes: nothing (temp SQLite files). Adds rows to the report; removes its files.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { wire } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { contentHash } from '../../src/domain/hash.js';
import { HashEmbedder } from '../../src/embedding/hash.js';
import { toBlob } from '../../src/adapters/embedded/rows.js';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import type { Report, Section } from '../report.js';
import { ChatText } from './chat-text.js';
import { sqliteOf } from '../sqlite.js';

const BATCH = 500;
const USERS = 20;
const TURNS_PER_SESSION = 40;

export interface Input {
  id: string;
  user_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  content: string;
  created_at: string;
}

/** `n` chat-like turns of USERS users (ids fresh per seed), as a client would send them */
export function inputs(n: number, seed: number): Input[] {
  const text = new ChatText(seed);
  const start = Date.parse('2024-01-01T00:00:00Z');
  return Array.from({ length: n }, (_, i) => {
    const nth = Math.floor(i / USERS);
    const { role, content } = text.turn(nth);
    return { id: `r${seed}-${i}`, user_id: `user-${i % USERS}`, session_id: `s-${Math.floor(nth / TURNS_PER_SESSION)}`, role, content, created_at: new Date(start + i * 1000).toISOString() };
  });
}

/** The real write path; returns turns/s and which turns it stored in the long-term tier. */
async function real(dir: string, turns: readonly Input[], round: number): Promise<{ rate: number; stored: Map<string, number> }> {
  const config = parseConfig({ sqlite_path: join(dir, `real-${round}.db`), embedding_model: 'hash', log_level: 'silent' });
  // as `neuralcleave ingest` runs it: a bulk import triggers no compaction
  const s = await wire(config, { logger: pino({ level: 'silent' }), autoCompact: false });
  try {
    await s.embedders.ready();
    const started = performance.now();
    for (let i = 0; i < turns.length; i += BATCH) await s.writePath.addTurns(turns.slice(i, i + BATCH));
    await s.queue.idle();
    const rate = turns.length / ((performance.now() - started) / 1000);
    const counts = sqliteOf(s).db.prepare('SELECT (SELECT count(*) FROM turns) AS t, (SELECT count(*) FROM vectors) AS v, (SELECT count(*) FROM turns WHERE persisted_at IS NULL OR embedded_with IS NULL) AS pending').get() as { t: number; v: number; pending: number };
    if (counts.t !== turns.length || counts.v !== turns.length || counts.pending !== 0) throw new Error(`ingest incomplete: ${JSON.stringify(counts)}`);
    const stored = new Map((sqliteOf(s).db.prepare('SELECT id, importance FROM entries').all() as Array<{ id: string; importance: number }>).map((r) => [r.id, r.importance]));
    return { rate, stored };
  } finally {
    await s.close();
  }
}

/** The same rows, inserted bare in transactions of BATCH turns. */
function bare(dir: string, turns: readonly Input[], stored: Map<string, number>, vectors: readonly Float32Array[], round: number): number {
  const db = openDatabase(join(dir, `bare-${round}.db`));
  try {
    const turn = db.prepare(
      `INSERT INTO turns (id, user_id, session_id, role, name, content, content_hash, created_at, importance, pinned, metadata, accepted_at, embedded_with, persisted_at)
       VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, 0, NULL, ?, 'hash-v1', ?)`,
    );
    const entry = db.prepare(
      `INSERT INTO entries (id, user_id, session_id, role, name, kind, content, content_hash, importance, pinned, metadata, covers, created_at, updated_at)
       VALUES (?, ?, ?, ?, NULL, 'turn', ?, ?, ?, 0, NULL, NULL, ?, ?)`,
    );
    const vector = db.prepare(
      `INSERT INTO vectors (id, embedder, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector)
       VALUES (?, 'hash-v1', 384, ?, ?, ?, NULL, 'turn', ?, ?, ?, ?)`,
    );
    const hashes = turns.map((t) => contentHash(t.content));
    const started = performance.now();
    for (let i = 0; i < turns.length; i += BATCH) {
      db.transaction(() => {
        for (let j = i; j < Math.min(turns.length, i + BATCH); j++) {
          const t = turns[j]!;
          const now = Date.now();
          const importance = stored.get(t.id) ?? 0.1;
          turn.run(t.id, t.user_id, t.session_id, t.role, t.content, hashes[j], t.created_at, importance, now, now);
          if (stored.has(t.id)) entry.run(t.id, t.user_id, t.session_id, t.role, t.content, hashes[j], importance, t.created_at, t.created_at);
          vector.run(t.id, t.user_id, t.session_id, t.role, t.content, hashes[j], t.created_at, toBlob(vectors[j]!));
        }
      })();
    }
    return turns.length / ((performance.now() - started) / 1000);
  } finally {
    db.close();
  }
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

const section: Section = async (report: Report, { quick }) => {
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-ingest-'));
  const n = quick ? 10_000 : 40_000;
  const rounds = quick ? 1 : 3;
  try {
    const embedder = new HashEmbedder();
    const reals: number[] = [];
    const bares: number[] = [];
    let storedShare = 0;
    for (let round = 0; round < rounds; round++) {
      const turns = inputs(n, round + 1); // fresh ids and text each round: nothing is a duplicate
      const r = await real(dir, turns, round);
      reals.push(r.rate);
      storedShare = r.stored.size / n;
      const vectors = turns.map((t) => embedder.embedOne(t.content));
      bares.push(bare(dir, turns, r.stored, vectors, round));
    }
    const value = median(reals);
    const baseline = median(bares);
    report.add({
      section: 'ingest', metric: 'ingest throughput, hash embedder', value, unit: 'turns/s', baseline, baselineLabel: 'bare batched insert of the same rows',
      ratio: value / baseline, target: '≥ 0.5 of bare insert', met: value / baseline >= 0.5,
      note: `${n} turns of ${USERS} users per run, median of ${rounds}; ${(storedShare * 100).toFixed(0)}% scored important and stored long-term; runs: ${reals.map((x) => Math.round(x)).join(', ')} vs ${bares.map((x) => Math.round(x)).join(', ')}`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export default section;
