// Profiles retrieval over the retrieve section's corpora (for `node --cpu-prof`, and for judging a
// change by CPU time on a shared machine): per pass, the wall time, the CPU of the whole process (every
// thread: a big user's semantic scan may be shared with its helper) and of the main thread alone, and
// each tier's read on its own.
// Takes: a folder that keeps the corpora between runs (built on the first run: 100k turns of one user,
// 100k turns of 1,000 users), which corpora (`one`, `many`, both by default), how many queries (400).
// Prints one line per corpus.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { corpus, fill, type Corpus } from './sections/retrieve.js';
import { ChatText } from './sections/chat-text.js';
import { sqliteOf } from './sqlite.js';
import { threadCpuSeconds } from './proc-cpu.js';

const dir = process.argv[2] ?? '/tmp/nc-prof-retrieve';
const which = (process.argv[3] ?? 'one,many').split(',');
const queries = Number(process.argv[4] ?? 400);
const TURNS = 100_000;

/** CPU ms (user + system) of one thread of this process, from /proc (Linux) */
function threadCpu(tid: number): number {
  const s = threadCpuSeconds(tid);
  if (s === null) throw new Error(`thread ${tid} is gone`);
  return s * 1000;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function open(name: string, users: number): Promise<Corpus> {
  mkdirSync(dir, { recursive: true });
  const fresh = !existsSync(join(dir, `${name}.db`));
  const c = await corpus(dir, name);
  if (fresh) await fill(c, TURNS, users);
  else c.total = TURNS;
  return c;
}

async function run(name: string, users: number, userOf: (i: number) => string): Promise<void> {
  const c = await open(name, users);
  const { services } = c;
  await services.embedders.ready();
  const text = new ChatText(11);
  const qs = Array.from({ length: queries }, (_, i) => ({ text: text.query(), user: userOf(i) }));
  const ask = (q: { text: string; user: string }) => services.retriever.retrieve({ query: q.text, user_id: q.user, top_k: 8 });
  for (const q of qs.slice(0, 20)) await ask(q);
  const wall: number[] = [];
  const c0 = process.cpuUsage();
  const m0 = threadCpu(process.pid);
  for (const q of qs) {
    const t = performance.now();
    await ask(q);
    wall.push(performance.now() - t);
  }
  const d = process.cpuUsage(c0);
  const main = threadCpu(process.pid) - m0;
  // each part alone, on the main thread: CPU time, which the machine's
  // load moves far less than wall time
  const store = sqliteOf(services).longTerm;
  const cpuOf = async (fn: (i: number) => unknown): Promise<number> => {
    const t = process.cpuUsage();
    for (let i = 0; i < qs.length; i++) await fn(i);
    const u = process.cpuUsage(t);
    return (u.user + u.system) / 1000;
  };
  const fts = await cpuOf((i) => store.searchTextSync(qs[i]!.user, qs[i]!.text, { limit: 24 }));
  const vecs = qs.map((q) => c.embedder.embedOne(q.text));
  const sem = await cpuOf((i) => services.vectors.search(c.embedder, vecs[i]!, { user_id: qs[i]!.user }, 24));
  const people = await cpuOf((i) => store.participants(qs[i]!.user, 200));
  const per = (x: number) => (x / queries).toFixed(3);
  process.stdout.write(
    `${name}: wall p50 ${pct(wall, 50).toFixed(3)} p99 ${pct(wall, 99).toFixed(3)} ms; CPU per pass ${per((d.user + d.system) / 1000)} ms (main thread ${per(main)}); ` +
      `CPU alone: FTS ${per(fts)}, semantic search ${per(sem)}, participants ${per(people)} ms\n`,
  );
  await services.close();
}

if (which.includes('one')) await run('one-user', 1, () => 'user-0');
if (which.includes('many')) await run('many-users', 1000, (i) => `user-${(i * 7919) % 1000}`);
