import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LlmSummarizer } from '../../../../src/compaction/summarizers/llm.js';
import { TokenCounter } from '../../../../src/compaction/tokens.js';
import type { ChatMessage, LlmProvider } from '../../../../src/ports/llm.js';
import { worstInputs } from '../../../fixtures/token-worst.js';
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

/**
 * A counter that notes, for every text it counts or cuts, how many turns of the event loop had passed
 * (a setImmediate chain started beside the summary ticks them): work done in one turn shares a tick.
 */
class TickedCounter extends TokenCounter {
  ticks = 0;
  readonly work: Array<{ tick: number; chars: number }> = [];
  override count(text: string): number {
    this.work.push({ tick: this.ticks, chars: text.length });
    return super.count(text);
  }
  override truncate(text: string, maxTokens: number): string {
    this.work.push({ tick: this.ticks, chars: text.length });
    return super.truncate(text, maxTokens);
  }
}

describe('LlmSummarizer', () => {
  // issue 25: the transcript of two 32,000-character turns was counted and cut in one turn of the event
  // loop (/health waited 100–250 ms behind it); each long turn now gets its own
  it('counts and cuts each long turn of a transcript in its own turn of the event loop', async () => {
    const inputs = Object.values(worstInputs());
    const turns = inputs.slice(0, 4).map((content, i) => turn('u', 's', content, { role: i % 2 ? 'assistant' : 'user' }));
    const tokens = new TickedCounter();
    const llm = recordingLlm();
    let done = false;
    const tick = () => {
      tokens.ticks++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const out = await new LlmSummarizer(llm, tokens, { inputBudgetTokens: 2000 }).summarize({ turns, maxTokens: 200 });
    done = true;
    assert.equal(out.text, '- they talked');
    const perTick = new Map<number, number>();
    for (const w of tokens.work) if (w.chars > 1000) perTick.set(w.tick, (perTick.get(w.tick) ?? 0) + 1);
    // the four turns counted, then each cut to its share: eight long texts, never two in one turn
    assert.equal(tokens.work.filter((w) => w.chars > 1000).length, 8);
    assert.deepEqual([...perTick.values()].filter((n) => n > 1), []);
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
