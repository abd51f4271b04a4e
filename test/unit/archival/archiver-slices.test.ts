import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testMemory } from '../../helpers/services.js';
import { countTurns } from '../../helpers/loop-turns.js';

const DAY = 86_400_000;
const daysAgo = (d: number, plusMinutes = 0) => new Date(Date.now() - d * DAY + plusMinutes * 60_000).toISOString();

/** a reply of ~1,500 characters, its words varied by `seed`, as an assistant writes them */
function reply(seed: number): string {
  const words = ['ferry', 'harbour', 'budget', 'itinerary', 'museum', 'schedule', 'train', 'hotel', 'dinner', 'weather', 'tickets', 'Porto', 'Lisbon'];
  const sentences = Array.from({ length: 20 }, (_, i) => `On day ${i + 1} the ${words[(seed + i) % words.length]} and the ${words[(seed * 7 + i * 3) % words.length]} matter most, so plan for ${(seed * 13 + i) % 90} euros.`);
  return sentences.join(' ');
}

/**
 * An archival run works in the process's slices (src/pace.ts): reading, summarizing and replacing
 * each session, it pauses every ~10 ms of work, so a serve running the scheduled job in its own
 * process goes on answering. Before, no await of the run gave the event loop a turn: 813 real
 * sessions held it 14.5 s, and the 40 sessions below ~240 ms. The turns are counted, not timed.
 */
describe('archival: a run in slices', () => {
  it('gives the event loop turns while it archives, and archives every session', async () => {
    const { memory, services: s } = await testMemory();
    const sessions = 40;
    for (let k = 0; k < sessions; k++) {
      const turns = Array.from({ length: 8 }, (_, i) => ({ user_id: 'ann', session_id: `s${k}`, role: i % 2 ? 'assistant' : 'user', content: i % 2 ? reply(k * 8 + i) : `Question ${i} about trip ${k}: what should I book first?`, created_at: daysAgo(90 - k, i) }));
      await s.writePath.addTurns(turns);
    }
    await memory.idle();
    s.tokens.count('the rank table is built before the run, as serve and worker build it before they listen');

    const counter = countTurns();
    // the turns while sessions are archived: those of the run's last steps (its vector deletes, the
    // text index's merge on a thread of its own) do not count
    let during = 0;
    const report = await s.archiver.run({ onProgress: (n, total) => (during = n === 0 ? -counter.turns : n === total ? during + counter.turns : during) });
    counter.stop();
    await memory.idle();

    assert.equal(report.archived, sessions);
    assert.equal(report.replaced, sessions * 8);
    assert.ok(during >= sessions / 4, `the event loop turned ${during} times while ${sessions} sessions of 8 turns were archived`);
    assert.equal((await s.longTerm.recent('ann', { limit: 1000 })).filter((e) => e.kind === 'turn').length, 0, 'no turn left beside the archives');
  });
});
