import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { regexOverruns } from '../../helpers/backtracks.js';

// issue 25: every text step of a chat turn — the query's (its first 4,000 characters) and those run
// on stored memories of up to 32,000 (ranking, passages, prompt lines, importance, the hash embedder,
// the tokenizer's pieces) — reads the worst inputs of test/fixtures/token-worst.ts with no regex
// retrying a run from each of its characters: one match attempt backtracks far less than a run is long
describe('the text steps of a chat turn on the worst inputs', () => {
  it('backtrack at most 1,000 times per match attempt', () => {
    const overruns = regexOverruns(
      `const { worstInputs } = await fixture('token-worst.js');
      const tr = await src('retrieval/time-range.js');
      const qt = await src('retrieval/query-terms.js');
      const subject = await src('retrieval/subject.js');
      const passage = await src('retrieval/passage.js');
      const rank = await src('retrieval/rank.js');
      const importance = await src('domain/importance.js');
      const { HashEmbedder } = await src('embedding/hash.js');
      const { piecesOf } = await src('compaction/cl100k.js');
      const now = Date.parse('2025-06-20T18:00:00.000Z');
      for (const text of Object.values(worstInputs())) {
        const query = text.slice(0, 4000);
        for (const q of [query, 'What did I do ' + query.slice(0, 3900) + ' last week?']) {
          tr.withoutTimeExpression(q, tr.parseTimeRange(q, now));
          qt.queryTerms(q); subject.asksAboutSelf(q); subject.askedOf(q);
        }
        for (const content of [text, 'yesterday ' + text.slice(10), text.slice(0, 31990) + ' last May?']) {
          tr.mentionedDate(content, '2025-06-20T18:00:00.000Z');
          qt.stems(content); subject.holdersOf(content, 'Ana');
          passage.quoted(content, passage.matchedPassage(content, new Set(['note', 'xx'])) ?? undefined);
          rank.withoutQuestions(content); rank.asksOnly(content); rank.isShort(content);
          importance.scoreImportance(content, 'user'); importance.scoreImportance(content, 'assistant');
          new HashEmbedder().embedOne(content);
          for (const _ of piecesOf(content));
        }
      }`,
      1_000,
    );
    assert.deepEqual(overruns, []);
  });
});
