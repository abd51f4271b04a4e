import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExtractiveSummarizer } from '../../../src/compaction/summarizers/extractive.js';
import { SUMMARY_HEADING } from '../../../src/compaction/summarizers/summarizer.js';
import { TokenCounter } from '../../../src/compaction/tokens.js';
import type { Turn } from '../../../src/domain/turn.js';
import { turnsDuring } from '../../helpers/loop-turns.js';

let seq = 0;
function turn(role: Turn['role'], content: string, extra: Partial<Turn> = {}): Turn {
  seq++;
  return {
    id: `t${seq}`,
    user_id: 'u',
    session_id: 's',
    role,
    name: null,
    content,
    content_hash: `h${seq}`,
    created_at: new Date(Date.UTC(2024, 0, 1, 0, 0, seq)).toISOString(),
    importance: null,
    pinned: false,
    metadata: null,
    ...extra,
  };
}

const conversation = [
  turn('user', 'Hi!'),
  turn('assistant', 'Hello! How can I help you today?'),
  turn('user', 'My name is Ada Lovelace and I live in Lisbon. I am planning a trip to Japan.'),
  turn('assistant', 'That sounds wonderful. Japan is lovely in spring.'),
  turn('user', 'The flight to Tokyo leaves on March 14 and the budget is 3000 euros. I prefer trains over buses.'),
  turn('assistant', 'Great, a rail pass would fit your budget. The JR Pass costs about 50000 yen for 7 days.'),
  turn('user', 'ok thanks'),
  turn('assistant', 'You are welcome!'),
];

describe('ExtractiveSummarizer', () => {
  const tokens = new TokenCounter();
  const summarizer = new ExtractiveSummarizer(tokens);

  it('keeps the facts (names, numbers, first-person statements) and drops the filler', async () => {
    const { text, by } = await summarizer.summarize({ turns: conversation, maxTokens: 120 });
    assert.equal(by, 'extractive');
    assert.ok(text.split('\n').every((l) => l.startsWith('- ')), 'one bullet per sentence; the compactor adds the heading');
    assert.match(text, /- user: My name is Ada Lovelace and I live in Lisbon\./);
    assert.match(text, /March 14/);
    assert.match(text, /3000 euros/);
    assert.doesNotMatch(text, /ok thanks/);
    assert.doesNotMatch(text, /Hi!/);
    assert.doesNotMatch(text, /You are welcome/);
  });

  it('keeps the chosen sentences in the order they were said', async () => {
    const { text } = await summarizer.summarize({ turns: conversation, maxTokens: 200 });
    const lines = text.split('\n');
    const positions = lines.map((l) => conversation.findIndex((t) => t.content.includes(l.replace(/^- (user|assistant): /, ''))));
    assert.ok(positions.every((p) => p >= 0), 'every line is a sentence of the conversation, verbatim');
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
  });

  it('stays within the token cap, keeping the best sentences first', async () => {
    for (const maxTokens of [32, 48, 80]) {
      const { text } = await summarizer.summarize({ turns: conversation, maxTokens });
      assert.ok(tokens.count(text) <= maxTokens, `${tokens.count(text)} > ${maxTokens}`);
    }
    const { text: tight } = await summarizer.summarize({ turns: conversation, maxTokens: 48 });
    assert.match(tight, /March 14|Ada Lovelace/);
  });

  it('is deterministic', async () => {
    const a = await summarizer.summarize({ turns: conversation, maxTokens: 100 });
    const b = await summarizer.summarize({ turns: conversation, maxTokens: 100 });
    assert.equal(a.text, b.text);
  });

  it('folds an earlier summary in, keeping its lines', async () => {
    const earlier = turn('system', `${SUMMARY_HEADING} (key sentences):\n- user: My dog is called Rex and he is 7 years old.\n- assistant: Noted.`, {
      metadata: { kind: 'summary' },
    });
    const { text } = await summarizer.summarize({ turns: [earlier, ...conversation.slice(4)], maxTokens: 120 });
    assert.match(text, /^- user: My dog is called Rex and he is 7 years old\.$/m);
    assert.ok(!text.includes(SUMMARY_HEADING), 'the earlier heading is not carried over');
  });

  it('bounds one runaway turn with no punctuation', async () => {
    const runaway = turn('user', Array.from({ length: 3000 }, (_, i) => `word${i}`).join(' '));
    const { text } = await summarizer.summarize({ turns: [runaway], maxTokens: 200 });
    assert.ok(tokens.count(text) <= 200);
    assert.match(text, /…$/);
  });

  it('says so when there is nothing of note', async () => {
    const { text } = await summarizer.summarize({ turns: [turn('user', '!!!'), turn('assistant', '...')], maxTokens: 50 });
    assert.match(text, /nothing of note/);
  });
});

describe('ExtractiveSummarizer: a long conversation', () => {
  it('works in slices, giving the event loop turns while it summarizes (the archival run summarizes every idle session with it)', async () => {
    const summarizer = new ExtractiveSummarizer(new TokenCounter());
    const sentence = (i: number) => `On day ${i} we compared the ferry to Porto, the night train to Madrid and a rental car at ${i * 7} euros.`;
    const long = Array.from({ length: 120 }, (_, k) => turn(k % 2 ? 'assistant' : 'user', Array.from({ length: 25 }, (_, i) => sentence(k * 25 + i)).join(' ')));
    let text = '';
    const ticks = await turnsDuring(async () => ({ text } = await summarizer.summarize({ turns: long, maxTokens: 400 })));
    // 3,000 sentences of 110 characters: far more than a slice of 10 ms on any machine (70–250 ms here)
    assert.ok(ticks >= 2, `the event loop turned ${ticks} times while 330,000 characters were summarized`);
    assert.match(text, /^- (user|assistant): On day \d+ we compared the ferry/);
  });
});
