import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LlmSummarizer } from '../../../../src/compaction/summarizers/llm.js';
import { POPS_PER_TURN, TokenCounter } from '../../../../src/compaction/tokens.js';
import type { ChatMessage, LlmProvider } from '../../../../src/ports/llm.js';
import { worstInputs } from '../../../fixtures/token-worst.js';
import { mergingPerTurn } from '../../../helpers/event-loop.js';
import { turn } from '../../../helpers/turns.js';

/** an LLM that records the transcript it is given and answers with one bullet */
function recordingLlm(): LlmProvider & { transcripts: string[] } {
  const transcripts: string[] = [];
  return {
    name: 'ollama',
    model: 'fake',
    baseUrl: 'http://127.0.0.1:1',
    transcripts,
    async chat(messages: readonly ChatMessage[]) {
      transcripts.push(messages.at(-1)!.content);
      return { content: '- they talked', model: 'fake', provider: 'ollama', usage: { prompt_tokens: null, completion_tokens: null } };
    },
    async ping() {
      return true;
    },
  };
}

describe('LlmSummarizer', () => {
  // issue 25: the transcript of two 32,000-character turns was counted and cut in one turn of the event
  // loop (/health waited 100–250 ms behind it)
  it('counts and cuts a transcript of long turns a slice of the event loop at a time', async () => {
    const inputs = Object.values(worstInputs());
    const turns = inputs.slice(0, 4).map((content, i) => turn('u', 's', content, { role: i % 2 ? 'assistant' : 'user' }));
    const llm = recordingLlm();
    let text = '';
    const seen = await mergingPerTurn(async () => {
      text = (await new LlmSummarizer(llm, new TokenCounter(), { inputBudgetTokens: 2000 }).summarize({ turns, maxTokens: 200 })).text;
    });
    assert.equal(text, '- they talked');
    // a short piece's merge (at most 64 characters) may finish a turn's work
    assert.ok(seen.most <= POPS_PER_TURN + 1_024, `${seen.most} pops in one turn of the event loop`);
    // and the transcript is what it was: every turn within an equal share (cut when over it), in order
    const paragraphs = llm.transcripts[0]!.split('\n\n');
    assert.equal(paragraphs.length, 4);
    for (const [i, p] of paragraphs.entries()) {
      const [who, text] = [p.slice(0, p.indexOf(': ')), p.slice(p.indexOf(': ') + 2)];
      assert.equal(who, i % 2 ? 'assistant' : 'user');
      const kept = text === inputs[i] ? text : text.slice(0, -2);
      assert.ok(kept === inputs[i] || (text.endsWith(' …') && inputs[i]!.startsWith(kept)), `turn ${i} whole, or cut from its start`);
      assert.ok(new TokenCounter().count(kept) <= 2000 / 4 - 4, `turn ${i} within its share`);
    }
  });
});
