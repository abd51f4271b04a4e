import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testMemory } from '../../helpers/services.js';

/**
 * The README's library example, with a reply that bears on nothing asked: what lands in the prompt is
 * what answers the question (issue 27, item 7). "Noted!" says nothing, whoever says it: no result at all.
 */
describe('prompt blocks leave out results under the relevance floor (prompt_min_relevance)', () => {
  const example = [
    { user_id: 'alice', session_id: 'trip', role: 'user', content: 'My sister Ana is a dentist in Porto.' },
    { user_id: 'alice', session_id: 'trip', role: 'assistant', content: 'Noted!' },
    { user_id: 'alice', session_id: 'trip', role: 'assistant', content: 'Which part of Porto does she live in, near the river?' },
  ];
  const AFIELD = /Which part of Porto/;
  const ask = { query: "what is my sister's job?", user_id: 'alice', session_id: 'new-chat' };

  test('by default: the answer is in the prompt, the reply afield only among the results, "Noted!" nowhere', async () => {
    const { memory } = await testMemory();
    try {
      await memory.addTurns(example);
      await memory.idle();
      const { prompt_blocks, results } = await memory.retrieve(ask);
      const afield = results.find((r) => AFIELD.test(r.content));
      assert.ok(afield, 'still a result, with its score');
      assert.ok(afield.explain.relevance < 0.1, `relevance ${afield.explain.relevance}`);
      assert.ok(!results.some((r) => r.content === 'Noted!'), 'filler never pads the results');
      assert.match(prompt_blocks, /user: My sister Ana is a dentist in Porto\./);
      assert.doesNotMatch(prompt_blocks, AFIELD);
      assert.doesNotMatch(prompt_blocks, /Related earlier conversation/, 'no heading left without lines');
      assert.equal(memory.formatPromptBlocks(results), prompt_blocks, 'the library formats with the same floor');
    } finally {
      await memory.close();
    }
  });

  test('prompt_min_relevance = 0 puts every result in; 1 only what every list ranked first', async () => {
    for (const floor of [0, 1]) {
      const { memory } = await testMemory({ prompt_min_relevance: floor });
      try {
        await memory.addTurns(example);
        await memory.idle();
        const { prompt_blocks, results } = await memory.retrieve(ask);
        assert.equal(results.length, 2);
        const lines = prompt_blocks.split('\n').filter((l) => l.startsWith('- '));
        assert.equal(lines.length, results.filter((r) => r.explain.relevance >= floor).length, `floor ${floor}: ${prompt_blocks}`);
        assert.equal(AFIELD.test(prompt_blocks), floor === 0, `floor ${floor}`);
      } finally {
        await memory.close();
      }
    }
  });
});
