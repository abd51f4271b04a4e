import { parseConfig } from '../config/load.js';
import type { Logger } from '../logger.js';
import { Memory } from '../memory/memory.js';
import { wire } from './library.js';

/** the scratch store's one user and the retrieves asked of it (each plain and with a time filter) */
const USER = 'warm-up';
const QUERIES = ['What job did my sister get, and when did she start?', 'the podcasts you recommended and the budget you calculated before we set up the schedule'];
const ROUNDS = 3;

/**
 * A short conversation with what a retrieve's code paths branch on: both roles, a named person, a
 * question, dates, numbers, a change of job, and an assistant reply long enough to be searched as
 * passages.
 */
const TURNS: ReadonlyArray<readonly ['user' | 'assistant', string]> = [
  ['user', 'My sister Ana just started a new job as a nurse in Lisbon last March.'],
  ['assistant', 'That is wonderful news about Ana! Nursing is demanding work; how is she finding the night shifts?'],
  ['user', 'Can you recommend three podcasts about budgeting for a family of four?'],
  [
    'assistant',
    `${'Here is the plan we worked out for the kitchen renovation, step by step, with what each part costs. '.repeat(20)}The budget you asked for comes to 2,400 euros a month, with 300 set aside for savings.`,
  ],
  ['user', 'I switched jobs, I was hired as a product manager on July 20.'],
  ['assistant', 'Congratulations on the product manager role. Shall we update your weekly schedule around the new commute?'],
];

/**
 * Runs the write path and the retrieval path on a scratch store before the process listens. A fresh
 * process compiles each function on first use, and its first retrieve held the event loop ~110 ms,
 * 60–70 of it compiling, with every request behind it waiting (issue #25: `/health` during a fresh
 * serve's first retrieve). The store is `:memory:` with the built-in `hash` embedder and a silent
 * logger: nothing of the served data is read or written, and no model or server is called.
 * Returns what it ran: the turns written and the results its retrieves found.
 */
export async function warmUp(log: Logger): Promise<{ turns: number; results: number; ms: number }> {
  const started = performance.now();
  const config = parseConfig({ sqlite_path: ':memory:', embedding_provider: 'hash', embedding_model: 'hash', log_level: 'silent' });
  const memory = new Memory(await wire(config, { logger: log.child({ component: 'warm-up' }, { level: 'silent' }), runWorkers: true, reconcile: false }));
  let results = 0;
  try {
    await memory.addTurns(TURNS.map(([role, content], i) => ({ user_id: USER, session_id: `${USER}-${i >> 1}`, role, content })));
    await memory.idle();
    const before = new Date(Date.now() + 60_000).toISOString();
    for (let round = 0; round < ROUNDS; round++) {
      for (const query of QUERIES) {
        for (const filters of [undefined, { created_before: before }]) {
          results += (await memory.retrieve({ user_id: USER, query, top_k: 8, ...(filters ? { filters } : {}) })).results.length;
        }
      }
    }
  } finally {
    await memory.close();
  }
  const ms = performance.now() - started;
  log.debug({ ms: Math.round(ms), results }, 'retrieval warmed up on a scratch store');
  return { turns: TURNS.length, results, ms };
}
