import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PASSAGE_CHARS } from '../../../src/retrieval/passage.js';
import { testMemory } from '../../helpers/services.js';

/** an assistant's long reply: 30,000 characters of a plan, whose last lines hold the one fact asked about */
function longReply(): string {
  const days = Array.from({ length: 400 }, (_, i) => `Day ${i + 1}: review the onboarding checklist, answer the support queue and update the tracker.`);
  const end = 'Last of all, the spare office key is with Marguerite at the front desk of building C.';
  let text = days.join('\n');
  text = `${text.slice(0, 30_000 - end.length - 1)}\n${end}`;
  assert.equal(text.length, 30_000);
  return text;
}

describe('a 30,000-character turn (library, SQLite, hash embedder)', () => {
  it('is stored whole, found by a phrase from its end, reported with that passage and quoted by it in the prompt', async () => {
    const { memory } = await testMemory();
    try {
      const reply = longReply();
      await memory.addTurns([
        { user_id: 'kai', session_id: 'plan', role: 'user', content: 'Can you write me a full onboarding plan for the new hire?', created_at: '2026-03-02T09:00:00Z' },
        { user_id: 'kai', session_id: 'plan', role: 'assistant', content: reply, created_at: '2026-03-02T09:00:05Z' },
        { user_id: 'kai', session_id: 'misc', role: 'user', content: 'The office key for building A is in my drawer.', created_at: '2026-03-05T09:00:00Z' },
      ]);
      await memory.idle();
      const r = await memory.retrieve({ query: 'who has the spare office key of building C?', user_id: 'kai', session_id: 'new', top_k: 3 });
      const hit = r.results.find((x) => x.content === reply);
      assert.ok(hit, `the long reply is among ${JSON.stringify(r.results.map((x) => x.content.slice(0, 40)))}`);
      assert.equal(hit.content.length, 30_000, 'the result is the whole turn');
      assert.ok(hit.passage, 'with the passage that matched');
      assert.ok(hit.passage.text.includes('spare office key is with Marguerite at the front desk of building C'), hit.passage.text);
      assert.ok(hit.passage.end - hit.passage.start <= PASSAGE_CHARS);
      const line = r.prompt_blocks.split('\n').find((l) => l.startsWith('- [2026-03-02] assistant:')) ?? '';
      assert.ok(line.includes('spare office key is with Marguerite'), r.prompt_blocks.slice(0, 2_000));
      assert.ok(line.length < PASSAGE_CHARS + 120, `the prompt quotes the passage, not the turn: ${line.length} characters`);
      assert.ok(line.includes('… '), 'and says text was left out');
      assert.ok(r.prompt_blocks.length < 3 * (PASSAGE_CHARS + 200), `prompt of ${r.prompt_blocks.length} characters`);
    } finally {
      await memory.close();
    }
  });
});
