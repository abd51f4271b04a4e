import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Role } from '../../../src/domain/turn.js';
import { testMemory } from '../../helpers/services.js';

/**
 * Two people over three sessions; Theo's turns hold most answers. The same words are stored twice:
 * once with Theo as a second `user`, once with Theo as the `assistant` (as a client logging a chat with
 * an assistant would). Role must not decide relevance: both score the same.
 */
const SESSIONS: Array<Array<[speaker: 'maya' | 'theo', text: string]>> = [
  [
    ['maya', 'Did you end up adopting the kittens from the shelter?'],
    ['theo', 'We did, two of them!'],
    ['maya', 'What are their names?'],
    ['theo', 'Luna and Oliver.'],
    ['maya', 'I started pottery classes on Tuesdays, my first bowl was a disaster.'],
    ['theo', 'Everyone starts lopsided, keep at it.'],
  ],
  [
    ['theo', 'I finally booked the trip for October.'],
    ['maya', 'Where are you going?'],
    ['theo', 'Kyoto, for ten days, mostly temples and the tea district.'],
    ['maya', 'My sister is moving to Denver for a nursing job.'],
    ['theo', 'That is a big move, tell her good luck from me.'],
    ['maya', 'How is the new job treating you?'],
    ['theo', 'Busy, the warehouse switched to night shifts so I sleep until noon.'],
  ],
  [
    ['maya', 'What did the vet say about Oliver?'],
    ['theo', 'Just an ear infection, drops twice a day for a week.'],
    ['maya', 'I ran my first half marathon on Sunday in two hours and five minutes.'],
    ['theo', 'Amazing, that is faster than my time last year.'],
    ['maya', 'Which book should I read next?'],
    ['theo', 'The Remains of the Day, it is short and it stayed with me.'],
  ],
];

const QUESTIONS: Array<{ query: string; answer: string }> = [
  { query: "What are the names of Theo's kittens?", answer: 'Luna and Oliver.' },
  { query: 'Where is Theo travelling in October?', answer: 'Kyoto, for ten days, mostly temples and the tea district.' },
  { query: 'What did the vet say about Oliver?', answer: 'Just an ear infection, drops twice a day for a week.' },
  { query: 'Which book did Theo recommend?', answer: 'The Remains of the Day, it is short and it stayed with me.' },
  { query: 'How is work going for Theo?', answer: 'Busy, the warehouse switched to night shifts so I sleep until noon.' },
];

async function recallWith(theo: Role): Promise<{ recall: number; ranks: Array<number | null>; scored: string[][] }> {
  const { memory } = await testMemory();
  try {
    const turns = SESSIONS.flatMap((session, s) =>
      session.map(([who, content], i) => ({
        user_id: 'maya',
        session_id: `s${s + 1}`,
        role: who === 'maya' ? ('user' as Role) : theo,
        name: who === 'maya' ? 'Maya' : 'Theo',
        content,
        created_at: new Date(Date.UTC(2025, 2 + s, 3, 18, i)).toISOString(),
      })),
    );
    await memory.addTurns(turns);
    await memory.idle();
    const ranks: Array<number | null> = [];
    const scored: string[][] = [];
    for (const q of QUESTIONS) {
      const { results } = await memory.retrieve({ query: q.query, user_id: 'maya', session_id: 'asking', top_k: 3 });
      const at = results.findIndex((r) => r.content === q.answer);
      ranks.push(at < 0 ? null : at + 1);
      scored.push(results.map((r) => `${r.content} ${r.score} importance ${r.explain.importance}`));
    }
    return { recall: ranks.filter((r) => r !== null).length / QUESTIONS.length, ranks, scored };
  } finally {
    await memory.close();
  }
}

describe('roles do not decide relevance (library, SQLite, hash embedder)', () => {
  it('the same conversation with one speaker relabelled from user to assistant finds the same answers', async () => {
    const asUser = await recallWith('user');
    const asAssistant = await recallWith('assistant');
    assert.ok(asUser.recall >= 0.8, `with both speakers as users, R@3 ${asUser.recall} (${JSON.stringify(asUser.ranks)})`);
    assert.ok(Math.abs(asUser.recall - asAssistant.recall) <= 0.01, `R@3 as user ${asUser.recall} ${JSON.stringify(asUser.ranks)}, as assistant ${asAssistant.recall} ${JSON.stringify(asAssistant.ranks)}`);
    // nor does it move a score: the same memories, in the same order, with the same importance
    assert.deepEqual(asAssistant.scored, asUser.scored);
  });
});
